import { rateLimited, serviceUnavailable } from '../../platform/errors.js';
import { takeToken, type BucketSpec } from '../../platform/rate-limit.js';
import type { Redis } from '../../platform/redis.js';
import type { ApiMiddleware } from '../state.js';

// contract 8.1: limits are per operator; the excess is 429 with Retry-After.
export const rateLimit = (redis: Redis, bucket: BucketSpec): ApiMiddleware => async (ctx, next) => {
  const verdict = await takeToken(redis, ctx.state.operator.id, bucket).catch(() => {
    throw serviceUnavailable('rate limiting is unavailable (Redis)');
  });
  if (!verdict.allowed) throw rateLimited(verdict.retryAfterSeconds);
  await next();
};
