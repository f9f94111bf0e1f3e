import { Queue, type JobsOptions } from 'bullmq';
import type { BetTicket } from '../game/bets/ticket.js';
import { createRedis } from './redis.js';

// The one table of queue names. Redis is the transport only: every job carries the id of
// a Postgres row (a cycle, a bet, a wallet job) that is the record of the work, so a lost
// queue can be rebuilt from the database. A bet job carries the bets one realtime node
// placed at the same moment (one job, not one per bet), with what their debits need.
export const QUEUE_NAMES = {
  // engine clock ticks (D1), processed by the elected scheduler only
  engine: 'rgs-engine',
  // wallet debits of place_bet (contract 3.2)
  bet: 'rgs-bet',
  // wallet credits of winning bets (contract 3.1 RESULT -> SETTLED)
  settle: 'rgs-settle',
  // wallet rollbacks (contract 4.2)
  rollback: 'rgs-rollback',
} as const;

// The phase a tick moves a cycle out of; PENDING and RESULT move on at once, so only the
// timed phases are ticks.
export type EngineJob = { cycleId: string; from: 'PENDING' | 'BETTING_OPEN' | 'ROLLING' | 'RESULT' | 'COOLDOWN' };
// node: the realtime node waiting for the verdicts (its place_bet acknowledgements)
export type BetJob = { node: string; tickets: BetTicket[] };
// the wallet job rows a queue job carries: one, or a batch of first attempts (wallet-jobs.ts);
// retryDelayMs: set by the runner before it fails an attempt, read by the backoff strategy
export type WalletJobRef = { walletJobIds: string[]; retryDelayMs?: number };

export const WALLET_BACKOFF = 'wallet';

export type Queues = {
  engine: Queue<EngineJob>;
  bet: Queue<BetJob>;
  settle: Queue<WalletJobRef>;
  rollback: Queue<WalletJobRef>;
  close: () => Promise<void>;
};

// Producers share one connection that fails fast instead of buffering while Redis is away.
export function createQueues(redisUrl: string, prefix: string): Queues {
  const connection = createRedis(redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const defaults: JobsOptions = { removeOnComplete: 1000, removeOnFail: 5000 };
  // ticks are fenced in Postgres, so a duplicate is harmless; none is kept, so that a
  // clock resumed from the database can always enqueue its tick again
  const engine = new Queue<EngineJob>(QUEUE_NAMES.engine, {
    connection,
    prefix,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 5, backoff: { type: 'exponential', delay: 200 } },
  });
  const bet = new Queue<BetJob>(QUEUE_NAMES.bet, { connection, prefix, defaultJobOptions: { ...defaults, attempts: 1 } });
  // wallet jobs retry with the backoff the job itself computed (contract 3.4) until their
  // 24-hour budget, which the job runner enforces
  const walletJobs: JobsOptions = { ...defaults, attempts: WALLET_JOB_ATTEMPTS, backoff: { type: WALLET_BACKOFF } };
  const settle = new Queue<WalletJobRef>(QUEUE_NAMES.settle, { connection, prefix, defaultJobOptions: walletJobs });
  const rollback = new Queue<WalletJobRef>(QUEUE_NAMES.rollback, { connection, prefix, defaultJobOptions: walletJobs });
  return {
    engine,
    bet,
    settle,
    rollback,
    close: async () => {
      await Promise.all([engine.close(), bet.close(), settle.close(), rollback.close()]);
      connection.disconnect();
    },
  };
}

// contract 3.4 and 8.1: wallet retries back off from 1 s, doubling to a 60 s cap, jittered.
export function walletRetryDelayMs(attemptsMade: number, random: () => number = Math.random): number {
  const base = Math.min(60_000, 1000 * 2 ** Math.max(0, attemptsMade - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

// A wallet job keeps retrying until this much time has passed since it was created
// (contract 3.4: abandoned after 24 hours).
export const WALLET_RETRY_BUDGET_MS = 24 * 60 * 60 * 1000;
export const WALLET_JOB_ATTEMPTS = 100_000;
