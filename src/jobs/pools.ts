import { Worker, type Job } from 'bullmq';
import { betStep } from '../platform/bet-steps.js';
import type { ServiceContext } from '../platform/context.js';
import { BetDesk, type BetAck } from '../game/bets/bets.js';
import { BATCH_JOB, WalletJobDesk, enqueueWalletJob } from '../game/wallet-jobs/wallet-jobs.js';
import { QUEUE_NAMES, WALLET_BACKOFF, walletRetryDelayMs, type BetJob, type WalletJobRef } from '../platform/queues.js';
import { createRedis, type Redis } from '../platform/redis.js';
import { finishedInTime } from '../platform/shutdown.js';

// The bet, settle and rollback worker pools (D12): each calls the operator wallet
// for the Postgres row its job names. BullMQ delivers at least once; every handler is
// fenced on the row's state, so a second delivery books nothing twice.

export type RunningWorkers = { close: () => Promise<void> };

// Worker connections must not give up on a command (BullMQ: maxRetriesPerRequest null).
export const workerConnection = (svc: ServiceContext): Redis =>
  createRedis(svc.config.redisUrl, { maxRetriesPerRequest: null, enableOfflineQueue: true });

// A killed worker's job is handed to another worker once its lock
// lapses (3 s, renewed every 1.5 s while the worker lives; checked every second), so work in
// flight resumes within about 4 s of the kill. A job may stall a few times (a process killed
// again and again) before BullMQ fails it; the recovery sweep picks up even that.
export const LOCKING = { lockDuration: 3000, stalledInterval: 1000, maxStalledCount: 5 };

// D12: on SIGTERM a worker stops taking jobs and lets the running ones finish. A job still
// running after that is handed back: the caller then drops the connection, the lock is no
// longer renewed, and once it lapses another worker takes the job (every handler is
// fenced, so nothing is booked twice).
export async function closeWorker(worker: Worker, logger: ServiceContext['logger']): Promise<void> {
  if (!(await finishedInTime(worker.close()))) logger.warn({ queue: worker.name }, 'jobs still running at shutdown are handed back to the queue');
}

// Each bet of a job is debited on its own, and its verdict goes back to the realtime node
// that placed it as soon as it is known. A bet whose handling fails is answered
// wallet_timeout and stays PENDING: recovery resolves it as uncertain (recovery.ts).
export function startBetWorkers(svc: ServiceContext, concurrency = 64): RunningWorkers {
  const connection = workerConnection(svc);
  const desk = new BetDesk(svc);
  const worker = new Worker<BetJob, BetAck[]>(
    QUEUE_NAMES.bet,
    (job) => {
      const redelivered = job.attemptsStarted > 1 || job.stalledCounter > 0;
      return Promise.all(
        job.data.tickets.map(async (ticket) => {
          betStep(ticket.betId, 'picked_up');
          const ack = await desk.process(ticket, { redelivered }).catch((err: unknown): BetAck => {
            svc.logger.error({ err, betId: ticket.betId }, 'bet could not be handled; recovery resolves it');
            return { ok: false, reason: 'wallet_timeout' };
          });
          svc.emitter.verdict(job.data.node, ticket.betId, ack);
          return ack;
        }),
      );
    },
    {
      connection,
      prefix: svc.config.redisKeyPrefix,
      concurrency,
      ...LOCKING,
    },
  );
  return watch(svc, worker, connection, 'bet');
}

// A queue job of one wallet job retries itself with the delay the job computed (contract
// 3.4); in a batch of first attempts, each wallet job that must be retried is queued on its
// own, so that the others are not held back or repeated.
function walletJobWorker(svc: ServiceContext, queue: string, connection: Redis, concurrency: number): Worker<WalletJobRef> {
  const desk = new WalletJobDesk(svc);
  const run = async (job: Job<WalletJobRef>) => {
    if (job.name === BATCH_JOB) {
      const endpoint = queue === QUEUE_NAMES.settle ? 'win' : 'rollback';
      await Promise.all(
        job.data.walletJobIds.map(async (id) => {
          const outcome = await desk.run(id).catch((err: unknown) => {
            svc.logger.warn({ walletJobId: id, err: (err as Error).message }, 'wallet job failed; retried on its own');
            return { kind: 'retry', delayMs: walletRetryDelayMs(1) } as const;
          });
          if (outcome.kind === 'retry') await enqueueWalletJob(svc, { id, endpoint }, outcome.delayMs);
        }),
      );
      return 'batch';
    }
    const outcome = await desk.run(job.data.walletJobIds[0]!);
    if (outcome.kind === 'retry') {
      await job.updateData({ ...job.data, retryDelayMs: outcome.delayMs });
      throw new Error(outcome.error);
    }
    return outcome.kind;
  };
  return new Worker<WalletJobRef>(queue, run, {
    connection,
    prefix: svc.config.redisKeyPrefix,
    concurrency,
    ...LOCKING,
    settings: {
      backoffStrategy: (_attempts, type, _err, job) =>
        type === WALLET_BACKOFF ? ((job?.data as WalletJobRef | undefined)?.retryDelayMs ?? 1000) : 1000,
    },
  });
}

export function startSettleWorkers(svc: ServiceContext, concurrency = 64): RunningWorkers {
  const connection = workerConnection(svc);
  return watch(svc, walletJobWorker(svc, QUEUE_NAMES.settle, connection, concurrency), connection, 'settle');
}

export function startRollbackWorkers(svc: ServiceContext, concurrency = 32): RunningWorkers {
  const connection = workerConnection(svc);
  return watch(svc, walletJobWorker(svc, QUEUE_NAMES.rollback, connection, concurrency), connection, 'rollback');
}

function watch(svc: ServiceContext, worker: Worker, connection: Redis, pool: string): RunningWorkers {
  worker.on('error', (err) => svc.logger.warn({ pool, err: err.message }, 'worker error'));
  worker.on('failed', (job, err) => svc.logger.debug({ pool, jobId: job?.id, err: err.message }, 'job attempt failed'));
  return {
    close: async () => {
      await closeWorker(worker, svc.logger);
      connection.disconnect();
    },
  };
}
