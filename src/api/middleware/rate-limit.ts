import { rateLimited, serviceUnavailable } from '../../shared/platform/errors.js';
import { sandboxBucket, takeToken, type BucketSpec } from '../../shared/platform/rate-limit.js';
import type { Redis } from '../../shared/platform/redis.js';
import type { ApiMiddleware } from '../state.js';

// contract 8.1: limits are per operator; the excess is 429 with Retry-After. D35: a sandbox
// operator's are ten times larger.
export const rateLimit = (redis: Redis, bucket: BucketSpec): ApiMiddleware => {
  const sandbox = sandboxBucket(bucket);
  return limitBy(redis, (ctx) => (ctx.state.sandbox ? sandbox : bucket), (ctx) => ctx.state.operator.id);
};

// an unsigned route has no operator: its bucket is the caller IP's (ctx.ip honours
// TRUST_PROXY_HOPS, D12)
export const rateLimitByClient = (redis: Redis, bucket: BucketSpec): ApiMiddleware => limitBy(redis, () => bucket, (ctx) => `ip:${ctx.ip}`);

type Of<T> = (ctx: Parameters<ApiMiddleware>[0]) => T;

const limitBy = (redis: Redis, bucket: Of<BucketSpec>, holder: Of<string>): ApiMiddleware => async (ctx, next) => {
  const verdict = await takeToken(redis, holder(ctx), bucket(ctx)).catch(() => {
    throw serviceUnavailable('rate limiting is unavailable (Redis)');
  });
  if (!verdict.allowed) throw rateLimited(verdict.retryAfterSeconds);
  await next();
};
