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
  // not in the contract: a free-bet campaign's create writes a grant per player (up to
  // 10,000) and its cancel updates them all (D42), so the two writes get a bucket of their own,
  // smaller than the launches', whose tokens they would otherwise spend
  freebets: { name: 'freebets', burst: 10, perSecond: 2 },
  // D24, D34: failed signatures of a public-key credential (RS256, EdDSA), per key id and
  // per client IP. Checked before the signature is verified, charged when it fails: whoever
  // sends signatures that do not verify, naming any kid, gets that much of the CPU
  // verification costs and no more; an honest caller's signatures do not fail.
  signatureFailuresPerKey: { name: 'sigfail-key', burst: 10, perSecond: 1 },
  signatureFailuresPerClient: { name: 'sigfail-ip', burst: 10, perSecond: 1 },
} satisfies Record<string, BucketSpec>;

// D35: a sandbox operator's buckets hold ten times the tokens and refill ten times as fast.
// Same key: an operator whose flag changes keeps its tokens, capped by the new burst.
export const SANDBOX_RATE_FACTOR = 10;

export const sandboxBucket = (bucket: BucketSpec): BucketSpec => ({
  name: bucket.name,
  burst: bucket.burst * SANDBOX_RATE_FACTOR,
  perSecond: bucket.perSecond * SANDBOX_RATE_FACTOR,
});

// One script for every bucket: KEYS are the buckets, ARGV[1] the mode, then each bucket's
// burst and rate. 'take': a token from each bucket if every one has one (allowed), else
// none; 'peek': whether every bucket has a token, taking none; 'charge': a token from each
// bucket, whatever is left (down to zero). Returns {allowed, ms until every bucket has one}.
const TOKEN_BUCKET = `
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local mode = ARGV[1]
local allowed = 1
local wait_ms = 0
local tokens = {}
for i, key in ipairs(KEYS) do
  local burst = tonumber(ARGV[2 * i])
  local rate = tonumber(ARGV[2 * i + 1])
  local state = redis.call('HMGET', key, 'tokens', 'at')
  local held = tonumber(state[1])
  local at = tonumber(state[2])
  if held == nil then held = burst; at = now end
  held = math.min(burst, held + math.max(0, now - at) * rate / 1000)
  if held < 1 then
    allowed = 0
    wait_ms = math.max(wait_ms, math.ceil((1 - held) * 1000 / rate))
  end
  tokens[i] = held
end
if mode == 'peek' or (mode == 'take' and allowed == 0) then return {allowed, wait_ms} end
for i, key in ipairs(KEYS) do
  local burst = tonumber(ARGV[2 * i])
  local rate = tonumber(ARGV[2 * i + 1])
  redis.call('HSET', key, 'tokens', tostring(math.max(0, tokens[i] - 1)), 'at', tostring(now))
  redis.call('PEXPIRE', key, math.ceil(burst * 1000 / rate) + 1000)
end
return {allowed, wait_ms}
`;

export type BucketVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

// holder: the operator id, or for an unsigned route `ip:` and the caller IP. D36: every
// bucket shares the hash tag of the feature.
export const bucketKey = (bucket: Pick<BucketSpec, 'name'>, holder: string) => `{rate}:${bucket.name}:${holder}`;

export type Holding = { bucket: BucketSpec; holder: string };

async function run(redis: Redis, mode: 'take' | 'peek' | 'charge', holdings: Holding[]): Promise<BucketVerdict> {
  const [allowed, waitMs] = (await redis.eval(
    TOKEN_BUCKET,
    holdings.length,
    ...holdings.map(({ bucket, holder }) => bucketKey(bucket, holder)),
    mode,
    ...holdings.flatMap(({ bucket }) => [bucket.burst, bucket.perSecond]),
  )) as [number, number];
  if (allowed === 1) return { allowed: true };
  // D3: Retry-After in whole seconds, at least 1
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}

export const takeToken = (redis: Redis, holder: string, bucket: BucketSpec): Promise<BucketVerdict> => run(redis, 'take', [{ bucket, holder }]);

// whether every bucket holds a token, taking none (a check before work that only its
// failure pays for)
export const peekTokens = (redis: Redis, holdings: Holding[]): Promise<BucketVerdict> => run(redis, 'peek', holdings);

// a token taken from every bucket, whatever is left (the failure a peek guarded)
export const chargeTokens = async (redis: Redis, holdings: Holding[]): Promise<void> => {
  await run(redis, 'charge', holdings);
};
