import { Worker } from 'bullmq';
import type { ServiceContext } from '../shared/context.js';
import { advanceCycle } from '../shared/game/engine.js';
import { recoverOnElection, recoverPendingWork, resolveOrphanBets, type ElectionKind, type Recovered } from '../shared/game/recovery.js';
import { QUEUE_NAMES, type EngineJob } from '../shared/queues.js';
import { LeaderLease, type LeaseOptions } from './leader.js';
import { LOCKING, closeWorker, workerConnection, type RunningWorkers } from './pools.js';

// The scheduler role (D1): only the lease holder processes engine ticks. On election it
// recovers from Postgres (recovery.ts): after a crash, the cycles the previous leader was
// running are interrupted and their rounds settled or voided (contract 3.1); after a clean
// handover (D12) the clocks simply resume. While it leads it sweeps for wallet work whose
// queue job was lost and for debits left in flight; on deposition it stops.
const RECOVERY_SWEEP_MS = 10_000;
// issue 4, recovery time: a debit left in flight by a node that debits its own bets
// (local-debits.ts) is found within a second of its node's heartbeat lapsing, as a bet
// worker's job is redelivered within a second of its lock lapsing (pools.ts LOCKING). The
// query reads the few PENDING bets through the partial index bets_pending.
const SELF_DEBITED_SWEEP_MS = 1000;
// written by a leader that stops cleanly, read (and deleted) by its successor
const HANDOVER_KEY = 'scheduler:handover';
const HANDOVER_TTL_MS = 60_000;

export function startScheduler(svc: ServiceContext, lease: LeaseOptions = {}): RunningWorkers & { lease: LeaderLease } {
  const leader = new LeaderLease(svc.redis, svc.logger, lease);
  let worker: Worker<EngineJob> | undefined;
  let sweeps: NodeJS.Timeout[] = [];
  const connection = workerConnection(svc);

  // each sweep runs again only once its previous run is done
  const every = (ms: number, sweep: () => Promise<Partial<Pick<Recovered, 'walletJobs' | 'orphanBets'>>>) => {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      sweep()
        .then((found) => {
          if (Object.values(found).some((count) => count > 0)) svc.logger.info(found, 'pending work recovered');
        })
        .catch((err: unknown) => svc.logger.error({ err }, 'recovering pending work failed'))
        .finally(() => {
          running = false;
        });
    }, ms);
    timer.unref();
    return timer;
  };

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
    sweeps = [
      every(RECOVERY_SWEEP_MS, () => recoverPendingWork(svc)),
      every(SELF_DEBITED_SWEEP_MS, async () => ({ orphanBets: await resolveOrphanBets(svc, 'self-debited') })),
    ];
  });
  leader.on('deposed', () => {
    sweeps.forEach(clearInterval);
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
      sweeps.forEach(clearInterval);
      if (worker) {
        await closeWorker(worker, svc.logger);
        if (leader.isLeader) await svc.redis.set(HANDOVER_KEY, leader.holder, 'PX', HANDOVER_TTL_MS).catch(() => undefined);
      }
      await leader.stop();
      connection.disconnect();
    },
  };
}
