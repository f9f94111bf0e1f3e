import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Logger } from '../shared/platform/logger.js';
import type { Redis } from '../shared/platform/redis.js';

// Scheduler leadership as a Redis lease (D1): claimed with one atomic
// SET NX PX, renewed and released only by its holder through compare-and-set scripts, so
// a deposed leader can neither extend nor delete its successor's lease. Emits 'elected'
// (with the Term) and 'deposed'. Every engine transition is also fenced in Postgres on the
// term's epoch (clock.ts), so two leaders for a moment still move nothing twice.
//
// D30: a leader that stops cleanly hands over: in one script, only while the lease is still
// its own, it writes the handover marker (naming its epoch) and deletes the lease. The claim
// that wins the lease next takes the marker in the same script, so a marker is read by the
// very next leader only: it can neither be written by a leader that already lost its lease
// nor outlive one election and make a later crash look like a handover.

const CLAIM = `if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  local epoch = redis.call('INCR', KEYS[2])
  local marker = redis.call('GET', KEYS[3])
  redis.call('DEL', KEYS[3])
  return {epoch, marker}
end
return false`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const HAND_OVER = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[2])
  return redis.call('DEL', KEYS[1])
end
return 0`;
// a later epoch than `floor` for the holder of the lease (the counter was lost with Redis)
const RAISE = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  if tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[2]) then redis.call('SET', KEYS[2], ARGV[2]) end
  return redis.call('INCR', KEYS[2])
end
return false`;

// D36: the lease, its epoch counter and its handover marker share a hash tag, so that one
// script can touch all three on a Redis Cluster
export const LEASE_KEY = '{scheduler}:leader';

// key: the lease's; the epoch and the marker are named after it, and share its hash tag
export type LeaseOptions = { key?: string; ttlMs?: number; renewEveryMs?: number };

// One election: its epoch (grows with every election), its own id and, after a clean
// handover, the epoch of the leader that handed over (null after a crash, a lapse or an
// emptied Redis).
export type Term = { epoch: bigint; id: string; handedOverBy: bigint | null };

export class LeaderLease extends EventEmitter {
  readonly holder = randomUUID();
  private readonly key: string;
  private readonly epochKey: string;
  private readonly markerKey: string;
  private readonly ttlMs: number;
  private readonly renewEveryMs: number;
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private ticking = false;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    options: LeaseOptions = {},
  ) {
    super();
    this.key = options.key ?? LEASE_KEY;
    this.epochKey = `${this.key}:epoch`;
    this.markerKey = `${this.key}:handover`;
    // a dead leader's lease lapses within 3 s and a candidate asks every 750 ms, so a
    // successor leads (and runs recovery, D29) within about 4 s of the kill
    this.ttlMs = options.ttlMs ?? 3000;
    this.renewEveryMs = options.renewEveryMs ?? Math.floor(this.ttlMs / 4);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.renewEveryMs);
  }

  private async tick(): Promise<void> {
    // one check at a time: a slow answer (a Redis Cluster failing over retries its commands
    // for a while) is not overtaken by the next check, whose answer could come first
    if (this.ticking) return;
    this.ticking = true;
    try {
      // a renewal keeps a term or ends it, never starts one: only a claim carries an epoch
      if (this.leading) {
        if ((await this.redis.eval(RENEW, 1, this.key, this.holder, this.ttlMs)) !== 1) this.become(false);
        return;
      }
      const claimed = (await this.redis.eval(CLAIM, 3, this.key, this.epochKey, this.markerKey, this.holder, this.ttlMs)) as [number, string | null] | null;
      if (claimed) this.become(true, { epoch: BigInt(claimed[0]), id: randomUUID(), handedOverBy: this.handedOverBy(claimed[1]) });
    } catch (err) {
      // unable to reach Redis: the lease may lapse, so stop acting as leader
      this.logger.warn({ err: (err as Error).message }, 'scheduler lease check failed');
      this.become(false);
    } finally {
      this.ticking = false;
    }
  }

  private handedOverBy(marker: string | null): bigint | null {
    if (marker === null) return null;
    try {
      const { epoch } = JSON.parse(marker) as { epoch: string };
      return BigInt(epoch);
    } catch {
      // not a marker this version wrote: treated as none, so the election is a crash
      this.logger.warn({ marker: marker.slice(0, 256) }, 'scheduler handover marker unreadable; recovering as after a crash');
      return null;
    }
  }

  private become(leading: boolean, term?: Term): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.logger.info({ holder: this.holder, epoch: term?.epoch.toString() }, leading ? 'scheduler leadership taken' : 'scheduler leadership lost');
    if (leading) this.emit('elected', term);
    else this.emit('deposed');
  }

  // A later epoch than `floor`, while this process holds the lease; null once it does not.
  async raiseEpoch(floor: bigint): Promise<bigint | null> {
    const raised = (await this.redis.eval(RAISE, 2, this.key, this.epochKey, this.holder, floor.toString())) as number | null;
    return raised === null ? null : BigInt(raised);
  }

  // D30: stops leading and names `epoch` as handed over to the next leader, if the lease is
  // still this process's; otherwise only stops. True when the marker was written.
  async handOver(epoch: bigint): Promise<boolean> {
    clearInterval(this.timer);
    if (!this.leading) return false;
    const marker = JSON.stringify({ holder: this.holder, epoch: epoch.toString() });
    const handed = (await this.redis.eval(HAND_OVER, 2, this.key, this.markerKey, this.holder, marker).catch(() => 0)) === 1;
    this.become(false);
    return handed;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.leading) {
      await this.redis.eval(RELEASE, 1, this.key, this.holder).catch(() => undefined);
      this.become(false);
    }
  }
}
