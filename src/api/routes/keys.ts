import Router from '@koa/router';
import type { ServiceContext } from '../../platform/context.js';
import { BUCKETS } from '../../platform/rate-limit.js';
import { PACK_KEY, publishedKeys } from '../../platform/signing-keys.js';
import { publicJwk, type Jwks } from '../../domain/dispute-pack.js';
import { rateLimitByClient } from '../middleware/rate-limit.js';
import type { ApiState } from '../state.js';

// GET /v1/keys (D32): the service's public signing keys as a JWKS (RFC 7517, 8037), unsigned
// so that anyone holding a dispute pack can fetch them. Every pack key is listed, the
// current one and those retired by `rgs signing-key rotate`, so that older packs still
// verify. There is no operator to charge it to: the bucket is the client IP's.
export const KEYS_PATH = '/v1/keys';

export function keysRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  router.get(KEYS_PATH, rateLimitByClient(svc.redis, BUCKETS.keys), async (ctx) => {
    const keys = await publishedKeys(svc.sql, PACK_KEY);
    ctx.body = { keys: keys.map((key) => publicJwk(key.kid, key.x)) } satisfies Jwks;
  });
  return router;
}
