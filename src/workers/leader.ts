import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Logger } from '../shared/logger.js';
import type { Redis } from '../shared/redis.js';

// Scheduler leadership as a Redis lease (design card, D1): claimed with one atomic
// SET NX PX, renewed and released only by its holder through compare-and-set scripts, so
// a deposed leader can neither extend nor delete its successor's lease. Emits 'elected'
// and 'deposed'. Every engine transition is also fenced in Postgres, so two leaders for a
// moment still move nothing twice.

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export type LeaseOptions = { key?: string; ttlMs?: number; renewEveryMs?: number };

export class LeaderLease extends EventEmitter {
  readonly holder = randomUUID();
  private readonly key: string;
  private readonly ttlMs: number;
  private readonly renewEveryMs: number;
  private timer: NodeJS.Timeout | undefined;
  private leading = false;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
    options: LeaseOptions = {},
  ) {
    super();
    this.key = options.key ?? 'scheduler:leader';
    // issue 4, recovery time: a dead leader's lease lapses within 3 s and a candidate asks
    // every 750 ms, so a successor leads within about 4 s of the kill
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
    try {
      const held = this.leading
        ? (await this.redis.eval(RENEW, 1, this.key, this.holder, this.ttlMs)) === 1
        : (await this.redis.set(this.key, this.holder, 'PX', this.ttlMs, 'NX')) === 'OK';
      this.become(held);
    } catch (err) {
      // unable to reach Redis: the lease may lapse, so stop acting as leader
      this.logger.warn({ err: (err as Error).message }, 'scheduler lease check failed');
      this.become(false);
    }
  }

  private become(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.logger.info({ holder: this.holder }, leading ? 'scheduler leadership taken' : 'scheduler leadership lost');
    this.emit(leading ? 'elected' : 'deposed');
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.leading) {
      await this.redis.eval(RELEASE, 1, this.key, this.holder).catch(() => undefined);
      this.become(false);
    }
  }
}
