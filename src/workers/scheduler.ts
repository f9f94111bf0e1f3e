import { Worker } from 'bullmq';
import type { ServiceContext } from '../shared/context.js';
import { advanceCycle, resumeClocks } from '../shared/game/engine.js';
import { QUEUE_NAMES, type EngineJob } from '../shared/queues.js';
import { LeaderLease, type LeaseOptions } from './leader.js';
import { workerConnection, type RunningWorkers } from './pools.js';

// The scheduler role (D1): only the lease holder processes engine ticks. On election it
// re-derives every running clock from Postgres, so nothing depends on the ticks the
// previous leader had queued; on deposition it stops taking ticks.
export function startScheduler(svc: ServiceContext, lease: LeaseOptions = {}): RunningWorkers & { lease: LeaderLease } {
  const leader = new LeaderLease(svc.redis, svc.logger, lease);
  let worker: Worker<EngineJob> | undefined;
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
  });
  leader.on('deposed', () => {
    const stopping = worker;
    worker = undefined;
    void stopping?.close();
  });
  leader.start();

  return {
    lease: leader,
    close: async () => {
      await leader.stop();
      await worker?.close();
      connection.disconnect();
    },
  };
}
