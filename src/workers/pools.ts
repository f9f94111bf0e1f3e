import { Worker } from 'bullmq';
import type { ServiceContext } from '../shared/game/context.js';
import { BetDesk } from '../shared/game/bets/debit.js';
import { WalletJobDesk } from '../shared/game/wallet-jobs/wallet-jobs.js';
import { SWEEP_INTERVAL_MS, WebhookDeliverer } from '../shared/game/webhooks/delivery.js';
import { QUEUES, queuePrefix, type QueueKey } from '../shared/platform/queues.js';
import { createRedis, type Redis } from '../shared/platform/redis.js';
import { finishedInTime } from '../shared/platform/shutdown.js';
import { POOLS, processorFor, type WorkerScope } from './registry.js';

// The bet, settle, rollback and webhooks worker pools (D12, D31): each calls the operator
// (its wallet, or its webhook endpoint) for the Postgres row its job names, through the handler the job registry binds the job's
// name to (registry.ts). BullMQ delivers at least once; every handler is fenced on the
// row's state, so a second delivery books nothing twice.

// close: inFlightUntil is the shutdown's one instant for the work in flight (platform/shutdown.ts)
export type RunningWorkers = { close: (inFlightUntil?: number) => Promise<void> };

// Worker connections must not give up on a command (BullMQ: maxRetriesPerRequest null).
export const workerConnection = (svc: ServiceContext): Redis =>
  createRedis(svc.config, { maxRetriesPerRequest: null, enableOfflineQueue: true });

// A killed worker's job is handed to another worker once its lock
// lapses (3 s, renewed every 1.5 s while the worker lives; checked every second), so work in
// flight resumes within about 4 s of the kill. A job may stall a few times (a process killed
// again and again) before BullMQ fails it; the recovery sweep picks up even that.
const LOCKING = { lockDuration: 3000, stalledInterval: 1000, maxStalledCount: 5 };

// D12: on SIGTERM a worker stops taking jobs and lets the running ones finish. A job still
// running after that is handed back: the caller then drops the connection, the lock is no
// longer renewed, and once it lapses another worker takes the job (every handler is
// fenced, so nothing is booked twice).
export async function closeWorker(worker: Worker, logger: ServiceContext['logger'], inFlightUntil?: number): Promise<void> {
  if (!(await finishedInTime(worker.close(), inFlightUntil))) logger.warn({ queue: worker.name }, 'jobs still running at shutdown are handed back to the queue');
}

// A queue's worker pool in this process: a BullMQ Worker whose processor is the registry's
// (registry.ts), with the pool's concurrency and settings.
export function startWorker<Q extends QueueKey>(svc: ServiceContext, queue: Q, scope: WorkerScope[Q], connection: Redis): Worker {
  const { concurrency, settings } = POOLS[queue];
  return new Worker(QUEUES[queue].name, processorFor(queue, scope), {
    connection,
    prefix: queuePrefix(svc.config.redisKeyPrefix, queue),
    concurrency,
    ...LOCKING,
    ...(settings ? { settings } : {}),
  });
}

export function startBetWorkers(svc: ServiceContext): RunningWorkers {
  const connection = workerConnection(svc);
  return watch(svc, startWorker(svc, 'bet', { svc, desk: new BetDesk(svc) }, connection), connection, 'bet');
}

export function startSettleWorkers(svc: ServiceContext): RunningWorkers {
  const connection = workerConnection(svc);
  return watch(svc, startWorker(svc, 'settle', { svc, desk: new WalletJobDesk(svc) }, connection), connection, 'settle');
}

export function startRollbackWorkers(svc: ServiceContext): RunningWorkers {
  const connection = workerConnection(svc);
  return watch(svc, startWorker(svc, 'rollback', { svc, desk: new WalletJobDesk(svc) }, connection), connection, 'rollback');
}

// D31: the webhooks pool, and its sweep: every SWEEP_INTERVAL_MS it queues a job for each
// event due (delivery.ts), which is how events written by any process are picked up, and
// how deliveries resume after Redis lost its jobs or a webhooks process died mid-attempt.
export function startWebhookWorkers(svc: ServiceContext): RunningWorkers {
  const connection = workerConnection(svc);
  const deliverer = new WebhookDeliverer(svc);
  const workers = watch(svc, startWorker(svc, 'webhooks', { svc, deliverer }, connection), connection, 'webhooks');
  // one sweep at a time: a slow one is not overlapped by the next
  let sweeping: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    sweeping ??= deliverer
      .sweep()
      .catch((err: unknown) => svc.logger.warn({ err: (err as Error).message }, 'webhook sweep failed; tried again'))
      .finally(() => (sweeping = undefined));
  }, SWEEP_INTERVAL_MS);
  return {
    close: async (inFlightUntil) => {
      clearInterval(timer);
      await sweeping;
      await workers.close(inFlightUntil);
      deliverer.close();
    },
  };
}

function watch(svc: ServiceContext, worker: Worker, connection: Redis, pool: string): RunningWorkers {
  worker.on('error', (err) => svc.logger.warn({ pool, err: err.message }, 'worker error'));
  worker.on('failed', (job, err) => svc.logger.debug({ pool, jobId: job?.id, err: err.message }, 'job attempt failed'));
  return {
    close: async (inFlightUntil) => {
      await closeWorker(worker, svc.logger, inFlightUntil);
      connection.disconnect();
    },
  };
}
