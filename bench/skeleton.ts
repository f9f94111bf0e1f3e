import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import pg from 'pg';
import { DEFERRED_FLUSH } from '../src/shared/platform/db/sql.js';
import { createRedis } from '../src/shared/platform/redis.js';
import { QUEUE_HOP_STEPS } from './bet-steps.js';
import { loopbackHttp } from './floors.js';
import { startThread } from './thread.js';

// The bet path's skeleton ("if a target cannot be met on this box, show by
// measurement where the floor is"): the steps the service's bet path is made of on this
// stack, run for real, one after another, with none of the service's own work around them:
// - placed: a row inserted without waiting for the disk (the bet row, place.ts);
// - queued: a BullMQ job added (the bet job);
// - picked_up: a BullMQ worker starts it (the bet worker);
// - audited: a row inserted, fenced on the first row, committed to the disk (the debit's
//   audit row, contract 2.13);
//   (where the realtime node debits its own bets, debit.ts, there is no queue hop and
//   placed is both rows inserted by one statement, committed to the disk: no audited step)
// - debited: a signed loopback HTTP call answered (/wallet/bet);
// - accepted: the first row updated, committed to the disk (the acceptance).
// Timed while the players bet, from a thread of its own (skeleton-thread.ts), it is the least
// the service's steps from a place_bet's arrival to its acceptance take on this box at that
// moment: what the service adds on top is its own work and the waits it causes. Unlike the
// chain floor (path-floor.ts), its steps run in sequence, as a bet's do, so slow moments
// land on it as they land on a bet.

export const SKELETON_STEPS = ['placed', 'queued', 'picked_up', 'audited', 'debited', 'accepted'] as const;
export type SkeletonStep = (typeof SKELETON_STEPS)[number];
// each step's milliseconds, in SKELETON_STEPS order (without the queue hop, no queued nor picked_up)
export type SkeletonSample = Partial<Record<SkeletonStep, number>>;
export const skeletonSteps = (queueHop: boolean): SkeletonStep[] =>
  SKELETON_STEPS.filter((step) => queueHop || (!QUEUE_HOP_STEPS.includes(step) && step !== 'audited'));

export type Skeleton = { once: () => Promise<SkeletonSample>; close: () => Promise<void> };

const QUEUE = 'bench-skeleton';

type InFlight = { started: number; at: Partial<Record<SkeletonStep, number>>; resolve: () => void; reject: (err: Error) => void };

// `redisPrefix`: the run's own, so that the run's clean-up removes the queue's keys;
// `queueHop`: whether the service's bets go through the bet queue
export async function openSkeleton(databaseUrl: string, redisUrl: string, redisPrefix: string, queueHop = true): Promise<Skeleton> {
  // the bet path's statements run on a pool, as the service's do
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  const tables = `bench_skeleton_${randomUUID().replaceAll('-', '')}`;
  const bets = `${tables}_bets`;
  const audits = `${tables}_audits`;
  await pool.query(`CREATE TABLE ${bets} (id uuid PRIMARY KEY, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
  await pool.query(`CREATE TABLE ${audits} (id uuid PRIMARY KEY, bet_id uuid NOT NULL, request_body text NOT NULL)`);
  const wallet = await loopbackHttp();
  const inFlight = new Map<string, InFlight>();
  const mark = (betId: string, step: SkeletonStep) => {
    inFlight.get(betId)!.at[step] = performance.now();
  };

  const connection = createRedis(redisUrl, { maxRetriesPerRequest: null, enableOfflineQueue: true });
  const workerConnection = createRedis(redisUrl, { maxRetriesPerRequest: null, enableOfflineQueue: true });
  const queue = new Queue<{ betId: string }>(QUEUE, { connection, prefix: redisPrefix });
  const requestBody = () => JSON.stringify({ requestUuid: randomUUID(), amountMicro: '1000000' });
  // the debit and the acceptance, as a bet worker (or the node itself, whose placement
  // wrote the audit row) runs them
  const debit = async (betId: string) => {
    const bet = inFlight.get(betId);
    if (!bet) return;
    try {
      if (queueHop) {
        await pool.query(
          `INSERT INTO ${audits} (id, bet_id, request_body) SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM ${bets} WHERE id = $2 AND status = 'PENDING')`,
          [randomUUID(), betId, requestBody()],
        );
        mark(betId, 'audited');
      }
      await wallet.step();
      mark(betId, 'debited');
      await pool.query(`UPDATE ${bets} SET status = 'ACCEPTED' WHERE id = $1 AND status = 'PENDING'`, [betId]);
      mark(betId, 'accepted');
      bet.resolve();
    } catch (err) {
      bet.reject(err as Error);
    }
  };
  const worker =
    queueHop &&
    new Worker<{ betId: string }>(
      QUEUE,
      async (job) => {
        if (!inFlight.has(job.data.betId)) return;
        mark(job.data.betId, 'picked_up');
        await debit(job.data.betId);
      },
      { connection: workerConnection, prefix: redisPrefix, concurrency: 4 },
    );
  if (worker) await worker.waitUntilReady();
  const steps = skeletonSteps(queueHop);

  const once = async (): Promise<SkeletonSample> => {
    const betId = randomUUID();
    const done = new Promise<void>((resolve, reject) => inFlight.set(betId, { started: performance.now(), at: {}, resolve, reject }));
    try {
      if (queueHop) {
        await pool.query(`WITH ${DEFERRED_FLUSH} INSERT INTO ${bets} (id, status) SELECT $1, 'PENDING' FROM deferred_flush`, [betId]);
      } else {
        await pool.query(`WITH bet AS (INSERT INTO ${bets} (id, status) VALUES ($1, 'PENDING')) INSERT INTO ${audits} (id, bet_id, request_body) VALUES ($2, $1, $3)`, [
          betId,
          randomUUID(),
          requestBody(),
        ]);
      }
      mark(betId, 'placed');
      if (queueHop) {
        await queue.add('bet', { betId }, { jobId: betId, removeOnComplete: true });
        mark(betId, 'queued');
      } else {
        void debit(betId);
      }
      await done;
      const { started, at } = inFlight.get(betId)!;
      const sample: SkeletonSample = {};
      steps.forEach((step, i) => {
        sample[step] = at[step]! - (i === 0 ? started : at[steps[i - 1]!]!);
      });
      return sample;
    } finally {
      inFlight.delete(betId);
    }
  };

  return {
    once,
    close: async () => {
      if (worker) await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      connection.disconnect();
      workerConnection.disconnect();
      await wallet.close();
      try {
        await pool.query(`DROP TABLE ${audits}, ${bets}`);
      } finally {
        await pool.end();
      }
    },
  };
}

// about thirty skeleton bets a second: enough for a p99 in 20 s of betting, and load of
// their own beside a light load, hence only when asked (--skeleton)
const SAMPLE_PAUSE_MS = 25;

// what the skeleton's thread (skeleton-thread.ts) is started with and asked; declared here, by
// the side that starts it, so that the thread imports this module and not the other way round
export type SkeletonThreadRequest = { kind: 'start' } | { kind: 'stop' };
export type SkeletonThreadSetup = { databaseUrl: string; redisUrl: string; redisPrefix: string; queueHop: boolean; pauseMs: number };

// Runs the skeleton over and over on its own thread (skeleton-thread.ts) until stopped.
export async function sampleSkeletonUnderLoad(
  databaseUrl: string,
  redisUrl: string,
  redisPrefix: string,
  queueHop: boolean,
): Promise<{ stop: () => Promise<SkeletonSample[]> }> {
  const setup: SkeletonThreadSetup = { databaseUrl, redisUrl, redisPrefix, queueHop, pauseMs: SAMPLE_PAUSE_MS };
  const thread = startThread<SkeletonThreadRequest>(new URL('./skeleton-thread.ts', import.meta.url), setup);
  try {
    await thread.ask({ kind: 'start' });
  } catch (err) {
    await thread.worker.terminate();
    throw err;
  }
  return {
    stop: async () => {
      try {
        return (await thread.ask({ kind: 'stop' })) as SkeletonSample[];
      } finally {
        await thread.worker.terminate();
      }
    },
  };
}
