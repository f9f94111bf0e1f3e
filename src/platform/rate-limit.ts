import type { Redis } from './redis.js';

// Per-operator token buckets in Redis (contract 8.1), shared by every API node. The script
// reads Redis's own clock so that nodes with skewed clocks agree.

export type BucketSpec = { name: string; burst: number; perSecond: number };

export const BUCKETS = {
  // contract 8.1: session creation, burst 10, steady 5 per second
  session: { name: 'session', burst: 10, perSecond: 5 },
  // contract 8.1 and D10: reads (rounds, reports, proofs), burst 60, steady 20 per second
  read: { name: 'read', burst: 60, perSecond: 20 },
  // not in the contract: session termination gets its own bucket with the read figures, so
  // that a burst of terminations (an exclusion sweep) does not starve launches
  terminate: { name: 'terminate', burst: 60, perSecond: 20 },
  // D32: the public keys (GET /v1/keys), unsigned, so per client IP, with the read figures
  keys: { name: 'keys', burst: 60, perSecond: 20 },
  // not in the contract: a test event or a redelivery sends a request to the operator's own
  // endpoint (D31), so they get a bucket of their own, smaller than the reads'
  webhooks: { name: 'webhooks', burst: 10, perSecond: 2 },
} satisfies Record<string, BucketSpec>;

// D35: a sandbox operator's buckets hold ten times the tokens and refill ten times as fast.
// Same key: an operator whose flag changes keeps its tokens, capped by the new burst.
export const SANDBOX_RATE_FACTOR = 10;

export const sandboxBucket = (bucket: BucketSpec): BucketSpec => ({
  name: bucket.name,
  burst: bucket.burst * SANDBOX_RATE_FACTOR,
  perSecond: bucket.perSecond * SANDBOX_RATE_FACTOR,
});

const TOKEN_BUCKET = `
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil then tokens = burst; at = now end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local allowed = 0
local wait_ms = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait_ms = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, wait_ms}
`;

export type BucketVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

// holder: the operator id, or for an unsigned route `ip:` and the caller IP. D36: every
// bucket shares the hash tag of the feature.
export const bucketKey = (bucket: Pick<BucketSpec, 'name'>, holder: string) => `{rate}:${bucket.name}:${holder}`;

export async function takeToken(redis: Redis, holder: string, bucket: BucketSpec): Promise<BucketVerdict> {
  const [allowed, waitMs] = (await redis.eval(
    TOKEN_BUCKET,
    1,
    bucketKey(bucket, holder),
    bucket.burst,
    bucket.perSecond,
  )) as [number, number];
  if (allowed === 1) return { allowed: true };
  // D3: Retry-After in whole seconds, at least 1
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}
