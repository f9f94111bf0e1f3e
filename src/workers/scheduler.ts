import { Worker } from 'bullmq';
import type { ServiceContext } from '../shared/context.js';
import { advanceCycle, resumeClocks } from '../shared/game/engine.js';
import { recoverPendingWork } from '../shared/game/recovery.js';
import { QUEUE_NAMES, type EngineJob } from '../shared/queues.js';
import { LeaderLease, type LeaseOptions } from './leader.js';
import { workerConnection, type RunningWorkers } from './pools.js';

// The scheduler role (D1): only the lease holder processes engine ticks. On election it
// re-derives every running clock from Postgres, so nothing depends on the ticks the
// previous leader had queued, and while it leads it sweeps for pending wallet work whose
// queue job was lost (recovery.ts); on deposition it stops.
const RECOVERY_SWEEP_MS = 30_000;
export function startScheduler(svc: ServiceContext, lease: LeaseOptions = {}): RunningWorkers & { lease: LeaderLease } {
  const leader = new LeaderLease(svc.redis, svc.logger, lease);
  let worker: Worker<EngineJob> | undefined;
  let sweep: NodeJS.Timeout | undefined;
  const recover = () =>
    recoverPendingWork(svc)
      .then((found) => {
        if (found.walletJobs > 0 || found.staleBets > 0) svc.logger.info(found, 'pending work recovered');
      })
      .catch((err: unknown) => svc.logger.error({ err }, 'recovering pending work failed'));
  const connection = workerConnection(svc);

  leader.on('elected', () => {
    worker = new Worker<EngineJob>(QUEUE_NAMES.engine, (job) => advanceCycle(svc, job.data), {
      connection,
      prefix: svc.config.redisKeyPrefix,
      concurrency: 16,
      lockDuration: 8000,
      stalledInterval: 2000,
    });
    worker.on('error', (err) => svc.logger.warn({ err: err.message }, 'scheduler worker error'));
    resumeClocks(svc)
      .then((count) => svc.logger.info({ count }, 'engine clocks resumed'))
      .catch((err: unknown) => svc.logger.error({ err }, 'resuming engine clocks failed'));
    void recover();
    sweep = setInterval(() => void recover(), RECOVERY_SWEEP_MS);
    sweep.unref();
  });
  leader.on('deposed', () => {
    clearInterval(sweep);
    const stopping = worker;
    worker = undefined;
    void stopping?.close();
  });
  leader.start();

  return {
    lease: leader,
    close: async () => {
      clearInterval(sweep);
      await leader.stop();
      await worker?.close();
      connection.disconnect();
    },
  };
}
