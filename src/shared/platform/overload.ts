import { performance } from 'node:perf_hooks';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

// D37: a process refuses new work at once while its own work is late, instead of queueing
// it into latency that every bet, the accepted ones included, would then pay (contract 8.5).
// "Its own work" is what this process alone decides how fast it does:
// - its event loop: a bet that arrives while the loop is behind waits for everything
//   queued before it, and so does every answer, refusals included;
// - its intake queues (the Batchers of the hot paths, batch.ts): a bet whose statement
//   waits behind others' because Postgres is slow to answer.
// The wallet's time is not its own: a slow wallet of one operator must not refuse the bets
// of the others (D24). Neither is a dependency that is away (D28 answers that,
// service_unavailable).
//
// Past the bound the process is busy: bets are refused service_busy, and so are the operator
// calls that start work (503 with Retry-After; src/api/load-shedding.ts says which). Refused
// work costs a validation and an answer, so the process catches up, the delays fall back
// under the bound and intake resumes by itself.
//
// A process's own start-up is not overload (D37): loading and compiling its code, opening
// its connections and a crash recovery keep its loop late, and refusing work then would
// give none of that time back, exactly when operators reconcile after a restart. The gate
// refuses nothing until the process has reported ready (roles.ts), for WARM_UP_MS after
// that, and while a recovery begun in that time still runs; its loop window starts when
// that is over, so what start-up delayed is never counted.

// how often the event loop's delay is sampled: the loop cannot be later than this unnoticed
const SAMPLE_EVERY_MS = 20;
// The loop's delay is the mean of its samples over a window of this length (and the one
// before): a loop that stays late, not one late turn. One long turn (a collection, a burst
// of messages read at once) delayed what arrived during it, and refusing what comes after
// it would not give that time back; a loop late turn after turn is queueing work faster
// than it finishes it.
const WINDOW_MS = 100;
// how long after the process reports ready it is still starting: its first requests run
// code paths for the first time (D37: warming is not overload)
export const WARM_UP_MS = 5_000;
// D37: a refusal is logged at most this often per kind, with the count since the last line,
// so that overload is seen in the logs as well as in the metric without flooding them
export const REFUSAL_LOG_EVERY_MS = 10_000;

export type OverloadState = { busy: boolean; loopDelayMs: number; queueWaitMs: number };
export type RefusalKind = 'bet' | 'operator_call';

// The decision, pure: the loop's delay and the oldest wait in any intake queue, whichever is
// worse, against the bound (0: no bound)
export function overloaded(boundMs: number, loopDelayMs: number, queueWaitMs: number): boolean {
  return boundMs > 0 && Math.max(loopDelayMs, queueWaitMs) > boundMs;
}

export class OverloadGate {
  // the oldest item's wait in each intake queue that reports to this gate
  private readonly queues = new Set<() => number>();
  private timer: NodeJS.Timeout | undefined;
  private expected = 0;
  // the samples of the current window, and the mean of the one before
  private sum = 0;
  private count = 0;
  private previousMean = 0;
  private windowStart = 0;
  // start-up: when the process reported ready, the recoveries it began with, and when
  // start-up was over
  private readyAt: number | undefined;
  private readonly starting = new Set<Promise<unknown>>();
  private warmAt: number | undefined;
  // per kind: when its last log line was written, and the refusals since that line
  private readonly refusals = new Map<RefusalKind, { loggedAt: number; unlogged: number }>();

  constructor(
    // OVERLOAD_DELAY_MS (config.ts)
    readonly boundMs: number,
    private readonly clock: () => number = () => performance.now(),
    private readonly warmUpMs = WARM_UP_MS,
  ) {}

  // the process has started its roles and takes work (roles.ts)
  ready(): void {
    this.readyAt ??= this.clock();
  }

  // work of the process's start-up, a recovery (scheduler.ts): the process is not warm until
  // it has settled. Work begun once the process is warm is ordinary work, and counts.
  startingWith(work: Promise<unknown>): void {
    if (this.warm()) return;
    this.starting.add(work);
    const settled = () => void this.starting.delete(work);
    work.then(settled, settled);
  }

  // whether start-up is over; the first call that finds it over starts the loop's window
  warm(): boolean {
    if (this.warmAt !== undefined) return true;
    const now = this.clock();
    if (this.readyAt === undefined || now - this.readyAt < this.warmUpMs || this.starting.size > 0) return false;
    this.warmAt = now;
    this.sum = 0;
    this.count = 0;
    this.previousMean = 0;
    this.windowStart = now;
    return true;
  }

  start(): void {
    if (this.timer || this.boundMs <= 0) return;
    this.windowStart = this.clock();
    this.expected = this.windowStart + SAMPLE_EVERY_MS;
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  // an intake queue reports the wait of its oldest item (0 when empty); returns the undo
  watch(oldestWaitMs: () => number): () => void {
    this.queues.add(oldestWaitMs);
    return () => this.queues.delete(oldestWaitMs);
  }

  busy(): boolean {
    return this.boundMs > 0 && this.state().busy;
  }

  // never busy while the process is starting (D37)
  state(): OverloadState {
    const loopDelayMs = this.loopDelayMs();
    const queueWaitMs = this.queueWaitMs();
    return { busy: this.warm() && overloaded(this.boundMs, loopDelayMs, queueWaitMs), loopDelayMs, queueWaitMs };
  }

  // D37: a refusal of this kind, counted, and logged at most once per REFUSAL_LOG_EVERY_MS
  // with the refusals since the last line, which delay was past the bound, and both delays
  refuse(kind: RefusalKind, svc: { metrics: Metrics; logger: Logger }): void {
    svc.metrics.overloadRefusals.inc({ kind });
    const now = this.clock();
    const last = this.refusals.get(kind);
    if (last && now - last.loggedAt < REFUSAL_LOG_EVERY_MS) {
      last.unlogged += 1;
      return;
    }
    const refused = (last?.unlogged ?? 0) + 1;
    this.refusals.set(kind, { loggedAt: now, unlogged: 0 });
    const { loopDelayMs, queueWaitMs } = this.state();
    svc.logger.warn(
      {
        kind,
        refused,
        reason: loopDelayMs >= queueWaitMs ? 'loop_delay' : 'queue_wait',
        loopDelayMs: Math.round(loopDelayMs),
        queueWaitMs: Math.round(queueWaitMs),
        boundMs: this.boundMs,
        ...(last ? { sinceMs: Math.round(now - last.loggedAt) } : {}),
      },
      'overload: work refused service_busy',
    );
  }

  // the mean delay of the current window and of the one before, whichever is worse, and
  // the delay of a sample overdue now: work that arrives in a turn that has run past the
  // bound sees that turn's own delay
  loopDelayMs(): number {
    if (!this.timer) return 0;
    const now = this.clock();
    this.roll(now);
    return Math.max(this.count > 0 ? this.sum / this.count : 0, this.previousMean, now - this.expected);
  }

  queueWaitMs(): number {
    let worst = 0;
    for (const wait of this.queues) worst = Math.max(worst, wait());
    return worst;
  }

  // exposed for the tests, which move the clock themselves
  sample(): void {
    const now = this.clock();
    // what the loop does while the process starts is not counted
    if (!this.warm()) {
      this.expected = now + SAMPLE_EVERY_MS;
      return;
    }
    this.roll(now);
    this.sum += Math.max(0, now - this.expected);
    this.count += 1;
    this.expected = now + SAMPLE_EVERY_MS;
  }

  private roll(now: number): void {
    if (now - this.windowStart < WINDOW_MS) return;
    // the window just ended becomes the previous one; one that ended a window ago or more
    // (no sample since: the loop was blocked) is too old to count, and the block's own
    // delay is the sample about to be taken
    this.previousMean = now - this.windowStart < 2 * WINDOW_MS && this.count > 0 ? this.sum / this.count : 0;
    this.sum = 0;
    this.count = 0;
    this.windowStart = now;
  }
}
