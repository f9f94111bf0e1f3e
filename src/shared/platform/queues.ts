import { Queue, type JobsOptions } from 'bullmq';
import type { Side } from '../domain/dice.js';
import { createRedis, type RedisTarget } from './redis.js';

// The queues and the jobs each carries: the enqueue side of the job registry, which the
// game and realtime modules add jobs through. Every name here has exactly one handler in
// src/workers/registry.ts (checked when a process starts). Redis is the transport only: every
// job carries the id of a Postgres row (a cycle, a bet, a wallet job) that is the record of
// the work, so a lost queue can be rebuilt from the database.

// The phase a tick moves a cycle out of; PENDING and RESULT move on at once, so only the
// timed phases are ticks.
// flight: for a ROLLING tick, whether the cycle's ROLLING is a flight (D40), as the code that
// scheduled it knew; a tick without it (a test's, or one queued before it was carried) reads
// the cycle's game
export type EngineJob = { cycleId: string; from: 'PENDING' | 'BETTING_OPEN' | 'ROLLING' | 'RESULT' | 'COOLDOWN'; flight?: boolean };
// the bets one realtime node placed at the same moment, with what their debits need;
// node: the realtime node waiting for the verdicts (its place_bet acknowledgements)
export type BetJob = { node: string; tickets: BetTicket[] };
// the wallet job rows a queue job carries: one, or a batch of first attempts (wallet-jobs.ts);
// retryDelayMs: set by the runner before it fails an attempt, read by the backoff strategy
export type WalletJobRef = { walletJobIds: string[]; retryDelayMs?: number };
// D31: the webhook event (a webhook_events row) whose delivery is due
export type WebhookJob = { eventId: string };

// The bet as the debit needs it, carried from the placing node to the debit in a bet job
// (game/bets/place.ts, then debit.ts); amountMicro is a MicroAmount string (it
// crosses Redis, D18).
export type BetTicket = {
  betId: string;
  roundId: string;
  sessionId: string;
  cycleId: string;
  // D36: the cycle's start (ISO), the month of the bet's partition, named when the debit
  // updates the bet
  cycleCreatedAt: string;
  operatorId: string;
  playerRef: string;
  gameCode: string;
  currency: string;
  // dice: the side; crash: none, and the auto cash-out in cents, or none (D40)
  side: Side | null;
  autoCashOutCents: string | null;
  amountMicro: string;
  isFree: boolean;
  // D42: a free bet's campaignRef, its debit's bonusRef (contract 2.6)
  bonusRef?: string;
  demo: boolean;
  betTransactionUuid: string;
  clientBetId?: string;
  // D41: an instant play: whether it bought the feature, and its contribution to the jackpot's
  // pool (sent on its debit, contract 2.6 with D41)
  featureBuy?: boolean;
  jackpotContributionMicro?: string;
};

// each queue, each job name it carries, and that job's payload
export type JobPayloads = {
  engine: { tick: EngineJob };
  bet: { bets: BetJob };
  settle: { win: WalletJobRef; batch: WalletJobRef };
  rollback: { rollback: WalletJobRef; batch: WalletJobRef };
  webhooks: { deliver: WebhookJob };
};
export type QueueKey = keyof JobPayloads;
export type JobName<Q extends QueueKey> = keyof JobPayloads[Q] & string;
export type JobData<Q extends QueueKey, N extends JobName<Q> = JobName<Q>> = JobPayloads[Q][N];

// contract 3.4: a wallet job keeps retrying until this much time has passed since it was
// created (abandoned after 24 hours); the job runner enforces it, so BullMQ's own limit is
// only a bound
export const WALLET_RETRY_BUDGET_MS = 24 * 60 * 60 * 1000;
export const WALLET_JOB_ATTEMPTS = 100_000;
// the backoff type whose delay the failed job itself computed (walletRetryDelayMs)
export const WALLET_BACKOFF = 'wallet';

// contract 3.4 and 8.1: wallet retries back off from 1 s, doubling to a 60 s cap, jittered.
export function walletRetryDelayMs(attemptsMade: number, random: () => number = Math.random): number {
  const base = Math.min(60_000, 1000 * 2 ** Math.max(0, attemptsMade - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

type QueueSpec<Q extends QueueKey> = {
  // the BullMQ queue
  name: string;
  // each job name the queue carries, and what its payload is
  jobs: Record<JobName<Q>, string>;
  // what every job of the queue is added with: how often it is tried, and the backoff between
  options: JobsOptions;
};

const KEPT: JobsOptions = { removeOnComplete: 1000, removeOnFail: 5000 };
// wallet jobs retry with the backoff the job itself computed (contract 3.4) until their
// 24-hour budget
const WALLET_JOB_OPTIONS: JobsOptions = { ...KEPT, attempts: WALLET_JOB_ATTEMPTS, backoff: { type: WALLET_BACKOFF } };

export const QUEUES: { [Q in QueueKey]: QueueSpec<Q> } = {
  // engine clock ticks (D1), processed by the elected scheduler only. Ticks are fenced in
  // Postgres, so a duplicate is harmless; none is kept, so that a clock resumed from the
  // database can always enqueue its tick again
  engine: {
    name: 'rgs-engine',
    jobs: { tick: 'EngineJob: a cycle and the timed phase it leaves' },
    options: { removeOnComplete: true, removeOnFail: true, attempts: 5, backoff: { type: 'exponential', delay: 200 } },
  },
  // wallet debits of place_bet (contract 3.2); a bet whose job fails is resolved by recovery
  bet: {
    name: 'rgs-bet',
    jobs: { bets: 'BetJob: the bets one realtime node placed at one moment, and that node' },
    options: { ...KEPT, attempts: 1 },
  },
  // wallet credits of winning bets (contract 3.1 RESULT -> SETTLED)
  settle: {
    name: 'rgs-settle',
    jobs: { win: 'WalletJobRef: one win (a retry, or queued again by recovery)', batch: "WalletJobRef: the first attempts of a settled cycle's wins" },
    options: WALLET_JOB_OPTIONS,
  },
  // wallet rollbacks (contract 4.2)
  rollback: {
    name: 'rgs-rollback',
    jobs: { rollback: 'WalletJobRef: one rollback', batch: 'WalletJobRef: the first attempts of rollbacks decided together' },
    options: WALLET_JOB_OPTIONS,
  },
  // D31: webhook deliveries. A job is one attempt; its retries are new jobs that the attempt
  // schedules from the event row (game/webhooks/delivery.ts), which also re-derives them. None
  // is kept: a job id names an attempt of an event, and a finished job holding the id would
  // make a later attempt (a redelivery) a duplicate that BullMQ drops
  webhooks: {
    name: 'rgs-webhooks',
    jobs: { deliver: 'WebhookJob: a webhook event whose delivery attempt is due' },
    options: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
  },
};

export const QUEUE_KEYS = Object.keys(QUEUES) as QueueKey[];

// a producer whose add() takes only the names its queue carries, each with its payload
type TypedQueue<Q extends QueueKey> = Queue<JobData<Q>, unknown, JobName<Q>>;

export type Queues = { [Q in QueueKey]: TypedQueue<Q> } & { close: () => Promise<void> };

// D36: the BullMQ prefix of a queue: the deployment's (REDIS_KEY_PREFIX), then the queue's
// name as a hash tag, so that every key of one queue is in one slot of a Redis Cluster (its
// scripts touch several at once) while the queues spread over the cluster's masters. The
// producers and the workers of a queue both use it.
export const queuePrefix = (prefix: string, queue: QueueKey): string => `${prefix}:{${QUEUES[queue].name}}`;

// Producers share one connection that fails fast instead of buffering while Redis is away.
export function createQueues(target: RedisTarget, prefix: string): Queues {
  const connection = createRedis(target, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const open = <Q extends QueueKey>(key: Q): TypedQueue<Q> => {
    const queue = new Queue<JobData<Q>, unknown, JobName<Q>>(QUEUES[key].name, { connection, prefix: queuePrefix(prefix, key), defaultJobOptions: QUEUES[key].options });
    // the connection's errors, repeated: the add() that fails reports them (without a
    // listener BullMQ prints each to the console)
    queue.on('error', () => undefined);
    return queue;
  };
  const queues = { engine: open('engine'), bet: open('bet'), settle: open('settle'), rollback: open('rollback'), webhooks: open('webhooks') };
  return {
    ...queues,
    close: async () => {
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
      connection.disconnect();
    },
  };
}
