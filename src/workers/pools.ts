import { Worker, type Job } from 'bullmq';
import type { ServiceContext } from '../shared/context.js';
import { processBet, type BetAck } from '../shared/game/bets.js';
import { runWalletJob } from '../shared/game/wallet-jobs.js';
import { QUEUE_NAMES, WALLET_BACKOFF, type BetJob, type WalletJobRef } from '../shared/queues.js';
import { createRedis, type Redis } from '../shared/redis.js';

// The bet, settle and rollback worker pools (design card): each calls the operator wallet
// for the Postgres row its job names. BullMQ delivers at least once; every handler is
// fenced on the row's state, so a second delivery books nothing twice.

export type RunningWorkers = { close: () => Promise<void> };

// Worker connections must not give up on a command (BullMQ: maxRetriesPerRequest null).
export const workerConnection = (svc: ServiceContext): Redis =>
  createRedis(svc.config.redisUrl, { maxRetriesPerRequest: null, enableOfflineQueue: true });

// A crashed worker's job is picked up again after its lock lapses (checked every 2 s).
const LOCKING = { lockDuration: 8000, stalledInterval: 2000 };

export function startBetWorkers(svc: ServiceContext, concurrency = 64): RunningWorkers {
  const connection = workerConnection(svc);
  const worker = new Worker<BetJob, BetAck>(QUEUE_NAMES.bet, (job) => processBet(svc, job.data.betId), {
    connection,
    prefix: svc.config.redisKeyPrefix,
    concurrency,
    ...LOCKING,
  });
  return watch(svc, worker, connection, 'bet');
}

function walletJobWorker(svc: ServiceContext, queue: string, connection: Redis, concurrency: number): Worker<WalletJobRef> {
  const run = async (job: Job<WalletJobRef>) => {
    const outcome = await runWalletJob(svc, job.data.walletJobId);
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
      await worker.close();
      connection.disconnect();
    },
  };
}
