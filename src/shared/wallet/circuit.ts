import type { Logger } from '../platform/logger.js';
import { scanKeys, type Redis } from '../platform/redis.js';

// The circuit breaker per (operator, endpoint) (contract 3.4, 8.1; D13), shared by every
// process through Redis: it opens after 5 consecutive uncertain answers, refuses calls at
// once while open, lets exactly one probe through the whole cluster after 30 s, closes on
// the probe's success and opens again on its failure. A clean business answer counts as
// healthy (D13). Redis time is used, so nodes with skewed clocks agree.
//
// The healthy path costs no Redis round trip. A circuit exists in Redis only once
// it has counted a failure, and every change of that (a first failure, a reset) is
// announced on a channel that each process follows; a process asks Redis only about the
// circuits it knows to hold failures, and resynchronises from Redis whenever its
// subscription (re)connects. A success seen in one process while another's failure is
// still on its way does not reset that failure: "consecutive" across processes is as
// exact as their answers are ordered.

export const CIRCUIT_THRESHOLD = 5;
export const CIRCUIT_OPEN_MS = 30_000;

// Redis's clock in milliseconds, as `now`
const REDIS_NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

const ADMIT = `
local open_until = tonumber(redis.call('HGET', KEYS[1], 'openUntil') or '0')
if open_until == 0 then return 'closed' end
${REDIS_NOW_MS}if now < open_until then return 'open' end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return 'probe' end
return 'open'
`;

const RECORD = `
if ARGV[1] == '1' then
  if redis.call('DEL', KEYS[1], KEYS[2]) > 0 then redis.call('PUBLISH', ARGV[4], 'closed ' .. ARGV[5]) end
  return 'closed'
end
${REDIS_NOW_MS}local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
if failures == 1 then redis.call('PUBLISH', ARGV[4], 'failing ' .. ARGV[5]) end
local open_until = tonumber(redis.call('HGET', KEYS[1], 'openUntil') or '0')
if open_until > 0 or failures >= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'openUntil', now + tonumber(ARGV[3]))
  redis.call('DEL', KEYS[2])
  return 'open'
end
return 'closed'
`;

const STATE = `
local open_until = tonumber(redis.call('HGET', KEYS[1], 'openUntil') or '0')
if open_until == 0 then return 'closed' end
${REDIS_NOW_MS}if now < open_until then return 'open' end
return 'half_open'
`;

export type Admission = 'closed' | 'open' | 'probe';
// half_open: the open period is over; the next call (one in the cluster) is the probe
export type CircuitState = 'closed' | 'open' | 'half_open' | 'unknown';
export type CircuitStatus = { operatorId: string; endpoint: string; state: CircuitState };

// D36: every circuit's keys share the feature's hash tag: a script touches a circuit's state
// and its probe together, which a Redis Cluster allows only within one slot
const STATE_KEY = '{circuit}:state:';
const PROBE_KEY = '{circuit}:probe:';
export const circuitKey = (operatorId: string, endpoint: string) => `${STATE_KEY}${operatorId}:${endpoint}`;

export class CircuitBreaker {
  // "<operatorId>:<endpoint>" of every circuit that holds failures (or is open)
  private readonly failing = new Set<string>();
  private readonly announcements: string;
  private subscriber: Redis | undefined;
  // the set above mirrors Redis: subscribed, then read back, since the last (re)connection
  private synced = false;

  // redis carries the deployment's key prefix; subscribe makes the connection that follows
  // the announcements (none: every call asks Redis, as a process that cannot listen must)
  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    private readonly probeTimeoutMs: number,
    subscribe?: () => Redis,
  ) {
    this.announcements = `${redis.options.keyPrefix ?? ''}circuit-events`;
    if (subscribe) this.follow(subscribe());
  }

  private follow(subscriber: Redis): void {
    this.subscriber = subscriber;
    subscriber.on('error', () => undefined);
    subscriber.on('close', () => {
      this.synced = false;
    });
    subscriber.on('message', (_channel: string, message: string) => {
      // "<failing|closed> <operatorId>:<endpoint>"
      const space = message.indexOf(' ');
      const name = message.slice(space + 1);
      if (message.slice(0, space) === 'failing') this.failing.add(name);
      else this.failing.delete(name);
    });
    // on every (re)connection: subscribe first, then read what Redis holds, so that no
    // announcement falls between the two
    const resync = () => {
      subscriber
        .subscribe(this.announcements)
        .then(() => this.tracked())
        .then((circuits) => {
          this.failing.clear();
          for (const circuit of circuits) this.failing.add(`${circuit.operatorId}:${circuit.endpoint}`);
          this.synced = subscriber.status === 'ready';
        })
        .catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'circuit announcements unavailable'));
    };
    subscriber.on('ready', resync);
    // D36: a Redis Cluster connection stays ready when one of its nodes is lost, and moves
    // its subscription to another node; what was announced meanwhile is read back
    subscriber.on('-node', () => {
      this.synced = false;
      resync();
    });
  }

  close(): void {
    this.subscriber?.disconnect();
  }

  // no subscription (or not yet in step with Redis): nothing is known, Redis is asked
  private knownHealthy(operatorId: string, endpoint: string): boolean {
    return this.synced && !this.failing.has(`${operatorId}:${endpoint}`);
  }

  private keys(operatorId: string, endpoint: string): [string, string] {
    return [circuitKey(operatorId, endpoint), `${PROBE_KEY}${operatorId}:${endpoint}`];
  }

  // Whether a call may go out. Without Redis the breaker cannot decide and lets calls
  // through: the wallet's own answers still classify them.
  async admit(operatorId: string, endpoint: string): Promise<Admission> {
    if (this.knownHealthy(operatorId, endpoint)) return 'closed';
    try {
      return (await this.redis.eval(ADMIT, 2, ...this.keys(operatorId, endpoint), this.probeTimeoutMs)) as Admission;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'circuit state unavailable; calling the wallet');
      return 'closed';
    }
  }

  // For the wallet-calls report and /metrics: 'unknown' while Redis cannot be read.
  async state(operatorId: string, endpoint: string): Promise<CircuitState> {
    try {
      return (await this.redis.eval(STATE, 1, this.keys(operatorId, endpoint)[0])) as CircuitState;
    } catch {
      return 'unknown';
    }
  }

  // Every circuit that has counted a failure since it last closed (a closed circuit with
  // no failures has no key).
  async tracked(): Promise<CircuitStatus[]> {
    const prefix = this.redis.options.keyPrefix ?? '';
    const found: CircuitStatus[] = [];
    // SCAN's pattern is a glob: the tag's braces match themselves
    for await (const keys of scanKeys(this.redis, `${prefix}${STATE_KEY}*`, 200)) {
      for (const key of keys) {
        // <STATE_KEY><operatorId>:<endpoint>; the endpoint never holds a colon
        const name = key.slice(prefix.length + STATE_KEY.length);
        const split = name.lastIndexOf(':');
        const [operatorId, endpoint] = [name.slice(0, split), name.slice(split + 1)];
        if (split > 0) found.push({ operatorId, endpoint, state: await this.state(operatorId, endpoint) });
      }
    }
    return found;
  }

  async record(operatorId: string, endpoint: string, healthy: boolean): Promise<void> {
    if (healthy && this.knownHealthy(operatorId, endpoint)) return;
    const name = `${operatorId}:${endpoint}`;
    try {
      const state = await this.redis.eval(
        RECORD,
        2,
        ...this.keys(operatorId, endpoint),
        healthy ? '1' : '0',
        CIRCUIT_THRESHOLD,
        CIRCUIT_OPEN_MS,
        this.announcements,
        name,
      );
      // this process's own view does not wait for its announcement to come back
      if (healthy) this.failing.delete(name);
      else this.failing.add(name);
      if (state === 'open' && !healthy) this.logger.warn({ operatorId, endpoint }, 'wallet circuit open');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'circuit state unavailable');
    }
  }
}
