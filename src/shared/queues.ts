import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';

// The one table of queue names. Redis is the transport only: every job carries the id of
// a Postgres row (a cycle, a bet, a wallet job) that is the record of the work, so a lost
// queue can be rebuilt from the database.
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

export type EngineJob =
  | { kind: 'advance'; cycleId: string; from: 'BETTING_OPEN' | 'ROLLING' | 'COOLDOWN' }
  | { kind: 'ensure'; operatorId: string; gameCode: string; currency: string };
export type BetJob = { betId: string };
export type WalletJobRef = { walletJobId: string };

export type Queues = {
  engine: Queue<EngineJob>;
  bet: Queue<BetJob>;
  settle: Queue<WalletJobRef>;
  rollback: Queue<WalletJobRef>;
  close: () => Promise<void>;
};

// Producers fail fast instead of queueing commands while Redis is away.
export function createQueues(connection: ConnectionOptions): Queues {
  const defaults: JobsOptions = { removeOnComplete: 1000, removeOnFail: 5000 };
  const engine = new Queue<EngineJob>(QUEUE_NAMES.engine, { connection, defaultJobOptions: defaults });
  const bet = new Queue<BetJob>(QUEUE_NAMES.bet, { connection, defaultJobOptions: { ...defaults, attempts: 1 } });
  const settle = new Queue<WalletJobRef>(QUEUE_NAMES.settle, { connection, defaultJobOptions: defaults });
  const rollback = new Queue<WalletJobRef>(QUEUE_NAMES.rollback, { connection, defaultJobOptions: defaults });
  return {
    engine,
    bet,
    settle,
    rollback,
    close: async () => {
      await Promise.all([engine.close(), bet.close(), settle.close(), rollback.close()]);
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
