import { Worker } from 'bullmq';
import type { ServiceContext } from '../shared/context.js';
import { advanceCycle } from '../shared/game/engine.js';
import { recoverOnElection, recoverPendingWork, type ElectionKind } from '../shared/game/recovery.js';
import { QUEUE_NAMES, type EngineJob } from '../shared/queues.js';
import { LeaderLease, type LeaseOptions } from './leader.js';
import { LOCKING, closeWorker, workerConnection, type RunningWorkers } from './pools.js';

// The scheduler role (D1): only the lease holder processes engine ticks. On election it
// recovers from Postgres (recovery.ts): after a crash, the cycles the previous leader was
// running are interrupted and their rounds settled or voided (contract 3.1); after a clean
// handover (D12) the clocks simply resume. While it leads it sweeps for wallet work whose
// queue job was lost and for debits left in flight; on deposition it stops.
const RECOVERY_SWEEP_MS = 10_000;
// written by a leader that stops cleanly, read (and deleted) by its successor
const HANDOVER_KEY = 'scheduler:handover';
const HANDOVER_TTL_MS = 60_000;

export function startScheduler(svc: ServiceContext, lease: LeaseOptions = {}): RunningWorkers & { lease: LeaderLease } {
  const leader = new LeaderLease(svc.redis, svc.logger, lease);
  let worker: Worker<EngineJob> | undefined;
  let sweep: NodeJS.Timeout | undefined;
  const connection = workerConnection(svc);

  const sweepPendingWork = () =>
    recoverPendingWork(svc)
      .then((found) => {
        if (found.walletJobs > 0 || found.orphanBets > 0) svc.logger.info(found, 'pending work recovered');
      })
      .catch((err: unknown) => svc.logger.error({ err }, 'recovering pending work failed'));

  const recover = async () => {
    const kind: ElectionKind = (await svc.redis.getdel(HANDOVER_KEY)) ? 'handover' : 'crash';
    const recovered = await recoverOnElection(svc, kind);
    svc.logger.info({ kind, ...recovered }, 'scheduler recovered on election');
  };

  leader.on('elected', () => {
    worker = new Worker<EngineJob>(QUEUE_NAMES.engine, (job) => advanceCycle(svc, job.data), {
      connection,
      prefix: svc.config.redisKeyPrefix,
      concurrency: 16,
      ...LOCKING,
    });
    worker.on('error', (err) => svc.logger.warn({ err: err.message }, 'scheduler worker error'));
    recover().catch((err: unknown) => svc.logger.error({ err }, 'recovery on election failed; the sweep retries'));
    sweep = setInterval(() => void sweepPendingWork(), RECOVERY_SWEEP_MS);
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
    // D12: the running tick finishes, the successor is told this was a clean handover, and
    // the lease is released so that it takes over at once
    close: async () => {
      clearInterval(sweep);
      if (worker) {
        await closeWorker(worker, svc.logger);
        if (leader.isLeader) await svc.redis.set(HANDOVER_KEY, leader.holder, 'PX', HANDOVER_TTL_MS).catch(() => undefined);
      }
      await leader.stop();
      connection.disconnect();
    },
  };
}
