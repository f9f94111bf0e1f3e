import Router from '@koa/router';
import type { ServiceContext } from '../../shared/game/context.js';
import { BUCKETS } from '../../shared/platform/rate-limit.js';
import { PACK_KEY, TOKEN_KEY, jwkOf, publishedKeys } from '../../shared/platform/signing-keys.js';
import { publicJwk, type Jwks } from '../../shared/domain/dispute-pack.js';
import { SESSION_LIFETIME_SECONDS } from '../../shared/game/sessions/token.js';
import { rateLimitByClient } from '../middleware/rate-limit.js';
import type { ApiState } from '../state.js';

// GET /v1/keys (D32): the service's public signing keys as a JWKS (RFC 7517, 8037), unsigned
// so that anyone holding a dispute pack can fetch them. Every pack key is listed, the
// current one and those retired by `rgs signing-key rotate`, so that older packs still
// verify, and those revoked by `rgs signing-key revoke`, so that a verifier can say why it
// refuses their packs; each with createdAt, retiredAt and revokedAt, the times that bound what
// it may sign. There is no operator to charge it to: the bucket is the client IP's.
export const KEYS_PATH = '/v1/keys';

// GET /.well-known/jwks.json (D34): the keys that sign session tokens when SESSION_TOKEN_ALG
// is RS256 or EdDSA, the current one and those retired by `rgs token-key rotate` less than a
// session's lifetime ago (a token they signed may still be live); never a revoked one. Unsigned and rate limited
// per client IP like /v1/keys, sharing its bucket.
export const TOKEN_KEYS_PATH = '/.well-known/jwks.json';

export function keysRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  router.get(KEYS_PATH, rateLimitByClient(svc.redis, BUCKETS.keys), async (ctx) => {
    const keys = await publishedKeys(svc.sql, PACK_KEY);
    ctx.body = {
      keys: keys.map((key) =>
        publicJwk(key.kid, key.publicKey, {
          createdAt: key.createdAt.toISOString(),
          retiredAt: key.retiredAt?.toISOString() ?? null,
          revokedAt: key.revokedAt?.toISOString() ?? null,
        }),
      ),
    } satisfies Jwks;
  });
  router.get(TOKEN_KEYS_PATH, rateLimitByClient(svc.redis, BUCKETS.keys), async (ctx) => {
    const keys = await publishedKeys(svc.sql, TOKEN_KEY, SESSION_LIFETIME_SECONDS * 1000);
    // a revoked key may have leaked: a client must not trust what it signed (D32)
    ctx.body = { keys: keys.filter((key) => key.revokedAt === null).map(jwkOf) };
  });
  return router;
}
