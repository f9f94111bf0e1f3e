import { Worker, type Queue } from 'bullmq';
import type { ServiceContext } from '../shared/game/context.js';
import { BetDesk } from '../shared/game/bets/debit.js';
import { WalletJobDesk } from '../shared/game/wallet-jobs/wallet-jobs.js';
import { SWEEP_INTERVAL_MS, WebhookDeliverer } from '../shared/game/webhooks/delivery.js';
import { QUEUES, queuePrefix, type QueueKey } from '../shared/platform/queues.js';
import { createRedis, type Redis } from '../shared/platform/redis.js';
import { finishedInTime } from '../shared/platform/shutdown.js';
import { POOLS, processorFor, type WorkerScope } from './registry.js';
import { CHECK_EVERY_MS, StallWatch } from './stall-watch.js';

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
  const desk = new BetDesk(svc);
  return superviseWorker(svc, 'bet', (connection) => startWorker(svc, 'bet', { svc, desk }, connection));
}

export function startSettleWorkers(svc: ServiceContext): RunningWorkers {
  const desk = new WalletJobDesk(svc);
  return superviseWorker(svc, 'settle', (connection) => startWorker(svc, 'settle', { svc, desk }, connection));
}

export function startRollbackWorkers(svc: ServiceContext): RunningWorkers {
  const desk = new WalletJobDesk(svc);
  return superviseWorker(svc, 'rollback', (connection) => startWorker(svc, 'rollback', { svc, desk }, connection));
}

// D31: the webhooks pool, and its sweep: every SWEEP_INTERVAL_MS it queues a job for each
// event due (delivery.ts), which is how events written by any process are picked up, and
// how deliveries resume after Redis lost its jobs or a webhooks process died mid-attempt.
export function startWebhookWorkers(svc: ServiceContext): RunningWorkers {
  const deliverer = new WebhookDeliverer(svc);
  const workers = superviseWorker(svc, 'webhooks', (connection) => startWorker(svc, 'webhooks', { svc, deliverer }, connection));
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

// A queue's worker in this process, on a connection of its own, replaced by a new one (a new
// connection too) when it stops taking the jobs its queue holds (stall-watch.ts). The one it
// replaces is closed in the background: a job it still runs finishes or is handed back, and
// every handler is fenced on its row, so two workers for a moment book nothing twice.
export function superviseWorker(svc: ServiceContext, queue: QueueKey, make: (connection: Redis) => Worker): RunningWorkers {
  const stalls = new StallWatch();
  let running = new Set<string>();
  let started = 0;
  let startedAtCheck = 0;
  const open = () => {
    const connection = workerConnection(svc);
    const worker = make(connection);
    const mine = new Set<string>();
    running = mine;
    worker.on('error', (err) => svc.logger.warn({ pool: queue, err: err.message }, 'worker error'));
    worker.on('active', (job) => {
      started += 1;
      if (job.id) mine.add(job.id);
    });
    worker.on('completed', (job) => job.id && mine.delete(job.id));
    worker.on('failed', (job, err) => {
      if (job?.id) mine.delete(job.id);
      svc.logger.debug({ pool: queue, jobId: job?.id, err: err.message }, 'job attempt failed');
    });
    return { connection, worker };
  };
  let current = open();
  let checking = false;
  let closed = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    readyJobs(svc.queues[queue] as Queue)
      .then((ready) => {
        const idle = running.size === 0 && started === startedAtCheck;
        startedAtCheck = started;
        // a check still reading when the pool closed replaces nothing
        if (closed || ready === undefined || !stalls.observe(ready, idle)) return;
        svc.logger.warn({ pool: queue, jobsReady: ready.length }, 'worker took no job while jobs waited: renewing the worker');
        const stalled = current;
        current = open();
        void closeWorker(stalled.worker, svc.logger).finally(() => stalled.connection.disconnect());
      })
      .finally(() => (checking = false));
  }, CHECK_EVERY_MS);
  timer.unref();
  return {
    close: async (inFlightUntil) => {
      closed = true;
      clearInterval(timer);
      await closeWorker(current.worker, svc.logger, inFlightUntil);
      current.connection.disconnect();
    },
  };
}

// The ids of the queue's jobs ready to run now: waiting, or delayed and due (BullMQ's own
// clock). Undefined when Redis does not answer in time: no verdict is made on that check.
const READ_WITHIN_MS = 2000;
const LOOKED_AT = 50;
async function readyJobs(queue: Queue): Promise<string[] | undefined> {
  const read = async () => {
    const [waiting, delayed] = await Promise.all([queue.getJobs(['wait', 'prioritized'], 0, LOOKED_AT - 1, true), queue.getJobs(['delayed'], 0, LOOKED_AT - 1, true)]);
    const now = Date.now();
    return [...waiting, ...delayed.filter((job) => job && job.timestamp + job.delay <= now)].flatMap((job) => (job?.id ? [job.id] : []));
  };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), READ_WITHIN_MS);
  });
  try {
    return await Promise.race([read().catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
