import type { ThreadRequest, ThreadStatus } from './player-thread.js';
import type { BetRecord, PlayerRecords, PlayerSetup, ResultRecord } from './players.js';
import type { BenchSession } from './sessions.js';
import { epochMs } from '../src/shared/platform/clock.js';
import { startThread, type Thread } from './thread.js';

// The players, spread over worker threads (a load generator that does not limit
// what it measures). Each session's player lives in one thread; the threads connect on one
// common schedule, bet while told to, and hand over what they saw at the end.

const startPlayerThread = (setup: PlayerSetup): Thread<ThreadRequest> => startThread(new URL('./player-thread.ts', import.meta.url), setup);

export class PlayerPool {
  private readonly threads: Thread<ThreadRequest>[];
  private closed: Promise<void> | undefined;

  private constructor(setup: PlayerSetup, threadCount: number) {
    this.threads = Array.from({ length: threadCount }, () => startPlayerThread(setup));
  }

  // resolves once every thread has loaded and answers, so that no thread's start-up lands
  // in the first players' connect latency
  static async start(setup: PlayerSetup, threadCount: number): Promise<PlayerPool> {
    const pool = new PlayerPool(setup, threadCount);
    await pool.status();
    return pool;
  }

  // dealt to the threads in turn; every thread follows the same schedule from the same start
  async connectAll(sessions: BenchSession[], ratePerSecond: number): Promise<number> {
    const start = epochMs();
    const counts = await Promise.all(
      this.threads.map((thread, t) =>
        thread.ask({ kind: 'connect', sessions: sessions.filter((_, i) => i % this.threads.length === t), ratePerSecond, start }),
      ),
    );
    return (counts as number[]).reduce((sum, count) => sum + count, 0);
  }

  async setBetting(on: boolean): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.ask({ kind: 'betting', on })));
  }

  async status(): Promise<ThreadStatus> {
    const all = (await Promise.all(this.threads.map((thread) => thread.ask({ kind: 'status' })))) as ThreadStatus[];
    return {
      sent: sum(all, 'sent'),
      accepted: sum(all, 'accepted'),
      unacked: sum(all, 'unacked'),
      unresolved: sum(all, 'unresolved'),
      wonRoundIds: all.flatMap((s) => s.wonRoundIds),
    };
  }

  async collect(): Promise<PlayerRecords> {
    type Collected = Omit<PlayerRecords, 'rollingEndsAt' | 'flightStartedAt' | 'results'> & {
      rollingEndsAt: [string, number][];
      flightStartedAt: [string, number][];
      results: [string, ResultRecord][];
    };
    const all = (await Promise.all(this.threads.map((thread) => thread.ask({ kind: 'collect' })))) as Collected[];
    const bets: BetRecord[] = all.flatMap((c) => c.bets);
    const rollingEndsAt = new Map<string, number>();
    // every thread saw every cycle's ROLLING announced; the earliest arrival is the one kept
    for (const [cycleId, at] of all.flatMap((c) => c.rollingEndsAt)) rollingEndsAt.set(cycleId, Math.min(at, rollingEndsAt.get(cycleId) ?? at));
    // the service's own instant, the same in every thread's round_state
    const flightStartedAt = new Map(all.flatMap((c) => c.flightStartedAt));
    return {
      bets,
      rollingEndsAt,
      flightStartedAt,
      cashOuts: all.flatMap((c) => c.cashOuts),
      results: new Map(all.flatMap((c) => c.results)),
      connectLatenciesMs: all.flatMap((c) => c.connectLatenciesMs),
      failures: all.flatMap((c) => c.failures),
      connected: all.reduce((count, c) => count + c.connected, 0),
      eventLoopDelay: {
        p99Ms: Math.max(0, ...all.map((c) => c.eventLoopDelay.p99Ms)),
        maxMs: Math.max(0, ...all.map((c) => c.eventLoopDelay.maxMs)),
      },
    };
  }

  // once: the run closes the players when it is done, and its cleanup closes them again
  close(): Promise<void> {
    this.closed ??= (async () => {
      await Promise.all(this.threads.map((thread) => thread.ask({ kind: 'close' }).catch(() => undefined)));
      await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
    })();
    return this.closed;
  }
}

const sum = (all: ThreadStatus[], key: 'sent' | 'accepted' | 'unacked' | 'unresolved') => all.reduce((total, s) => total + s[key], 0);
