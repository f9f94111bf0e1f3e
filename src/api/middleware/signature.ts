import { rateLimited, serviceUnavailable, signatureError } from '../../shared/platform/errors.js';
import { BUCKETS, chargeTokens, peekTokens, type Holding } from '../../shared/platform/rate-limit.js';
import { CredentialUnreadableError, isValidAt, revealSecret, type PublicKeyAlg } from '../../shared/wallet/credentials.js';
import { KeyUnavailableError, type PublicKeys } from '../../shared/wallet/public-keys.js';
import type { Logger } from '../../shared/platform/logger.js';
import type { Redis } from '../../shared/platform/redis.js';
import { SIGNATURE_HEADERS, canonicalString, sign, signatureMatches } from '../../shared/wallet/signer.js';
import type { ApiMiddleware } from '../state.js';

// contract 5.2 verification, in its order, then D17 replay protection. Only a request that
// passes every step has its body parsed and reaches idempotency, rate limits and handlers.
// D34: a credential of RS256 or EdDSA is verified with the operator's public key instead
// (publicKeys), over the same canonical string.
export const verifySignature = (masterKey: Buffer, redis: Redis, now: () => Date, logger: Logger, publicKeys: PublicKeys): ApiMiddleware => async (ctx, next) => {
  const requestUuid = requestUuidHint(ctx.state.rawBody);
  const fail = (code: Parameters<typeof signatureError>[0], message: string) => signatureError(code, message, requestUuid);

  // step 1: all three headers
  const kid = ctx.get(SIGNATURE_HEADERS.keyId);
  const timestamp = ctx.get(SIGNATURE_HEADERS.timestamp);
  const presented = ctx.get(SIGNATURE_HEADERS.signature);
  const missing = [
    [SIGNATURE_HEADERS.keyId, kid],
    [SIGNATURE_HEADERS.timestamp, timestamp],
    [SIGNATURE_HEADERS.signature, presented],
  ].filter(([, value]) => !value);
  if (missing.length > 0) throw fail('invalid_signature', `missing header ${missing.map(([name]) => name).join(', ')}`);

  // inbound requests are signed with an API credential only (contract 5.3)
  const credential = ctx.state.credential;
  if (!credential || credential.kind !== 'API') throw fail('unknown_key', 'unknown key id');

  // step 2: the timestamp is an integer within the operator's window
  if (!/^-?[0-9]{1,15}$/.test(timestamp)) throw fail('invalid_signature', 'timestamp is not integer unix seconds');
  const clock = now();
  const window = credential.operator.signatureWindowSeconds; // contract 8.1: 30 s unless overridden
  if (Math.abs(Math.floor(clock.getTime() / 1000) - Number(timestamp)) > window) {
    throw fail('stale_timestamp', `timestamp is outside the ${window} s window`);
  }

  // notBefore, notAfter and revokedAt (contract 5.3); a revoked secret is zeroed anyway
  if (!isValidAt(credential, clock)) throw fail('key_not_valid_now', 'the key is not valid now');

  // steps 3-5: recompute over the raw bytes and compare in constant time
  let expected: string;
  if (credential.alg !== 'HS256') {
    // D34: the signature is verified with the credential's own algorithm only; the replay
    // marker below takes its canonical base64 (a re-spelling is the same signature)
    const signature = Buffer.from(presented, 'base64');
    const canonical = canonicalString(ctx.method, ctx.path, timestamp, ctx.state.rawBody);
    // D24: a public-key verification costs CPU every tenant shares, and it comes before any
    // per-operator limit: failed signatures are limited per kid and per client IP, checked
    // here, before verifying, and charged when one fails. HMAC needs no such limit: it
    // costs less than the Redis call that would guard it.
    const failures: Holding[] = [
      { bucket: BUCKETS.signatureFailuresPerKey, holder: kid },
      { bucket: BUCKETS.signatureFailuresPerClient, holder: `ip:${ctx.ip}` },
    ];
    const room = await peekTokens(redis, failures).catch(() => {
      throw serviceUnavailable('rate limiting is unavailable (Redis)');
    });
    if (!room.allowed) throw rateLimited(room.retryAfterSeconds);
    let verified: boolean;
    try {
      verified = await publicKeys.verify(
        { ...credential, alg: credential.alg as PublicKeyAlg, privateAllowed: credential.operator.walletUrlPrivateAllowed },
        canonical,
        signature,
      );
    } catch (err) {
      // the operator's key server is the operator's to keep up: its requests are refused,
      // nobody else's (D24)
      if (!(err instanceof KeyUnavailableError)) throw err;
      (ctx.state.log ?? logger).warn({ kid, operatorId: credential.operator.id }, err.message);
      throw fail('key_unavailable', "the credential's key set cannot be fetched, or it holds no usable key");
    }
    if (!verified) {
      await chargeTokens(redis, failures).catch(() => undefined);
      throw fail('invalid_signature', 'signature does not match');
    }
    expected = signature.toString('base64');
  } else {
    let secret: string;
    try {
      secret = revealSecret(masterKey, credential);
    } catch (err) {
      if (!(err instanceof CredentialUnreadableError)) throw err;
      // the service's own misconfiguration, to alert on; the caller learns only that its
      // signature could not be verified (D24: no input gives a 5xx)
      (ctx.state.log ?? logger).error({ kid: err.kid, operatorId: credential.operator.id }, err.message);
      throw fail('invalid_signature', 'the signature cannot be verified');
    }
    expected = sign(secret, ctx.method, ctx.path, timestamp, ctx.state.rawBody);
    if (!signatureMatches(expected, presented)) throw fail('invalid_signature', 'signature does not match');
  }

  // D17: a POST whose (kid, timestamp, signature) was already accepted is a replay. The
  // marker outlives the window on either side, after which the timestamp check refuses it.
  // It is keyed on the canonical encoding of the MAC (`expected`, equal in bytes to what was
  // presented), so that re-spelling the same MAC (no padding, base64url, spaces) is still a replay.
  // The markers share the feature's hash tag (D36).
  if (ctx.method === 'POST') {
    const fresh = await redis
      .set(`{replay}:${kid}:${timestamp}:${expected}`, '1', 'PX', (2 * window + 1) * 1000, 'NX')
      .catch(() => {
        throw serviceUnavailable('replay protection is unavailable (Redis)');
      });
    if (fresh !== 'OK') throw fail('replayed_signature', 'this signed request was already accepted');
  }

  // step 6: only now parse
  ctx.state.operator = credential.operator;
  parseJsonBody(ctx.state);
  await next();
};

function parseJsonBody(state: { rawBody: Buffer; body: unknown; bodyIsJson: boolean }): void {
  if (state.rawBody.length === 0) {
    state.body = undefined;
    state.bodyIsJson = true;
    return;
  }
  try {
    state.body = JSON.parse(state.rawBody.toString('utf8'));
    state.bodyIsJson = true;
  } catch {
    state.body = undefined;
    state.bodyIsJson = false;
  }
}

// D3: the 401 body echoes the request's requestUuid when one can be read, else "": only a
// UUID, so that nothing else a caller wrote comes back (D24)
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
function requestUuidHint(raw: Buffer): string {
  if (raw.length === 0) return '';
  try {
    const body = JSON.parse(raw.toString('utf8')) as { requestUuid?: unknown };
    return typeof body?.requestUuid === 'string' && UUID.test(body.requestUuid) ? body.requestUuid : '';
  } catch {
    return '';
  }
}
