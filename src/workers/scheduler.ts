import type { ServiceContext } from '../shared/game/context.js';
import { finishCampaigns } from '../shared/game/freebets/campaigns.js';
import { SupersededError } from '../shared/game/rounds/clock.js';
import { recoverOnElection, recoverPendingWork, recoverStaleCycles, resolveOrphanBets } from '../shared/game/rounds/recovery.js';
import { finishedInTime } from '../shared/platform/shutdown.js';
import { ensurePartitions } from '../shared/platform/db/partitions.js';
import { dropExpiredIdempotencyKeys } from '../shared/platform/idempotency.js';
import { LeaderLease, type LeaseOptions, type Term } from './leader.js';
import { startWorker, superviseWorker, type RunningWorkers } from './pools.js';

// The scheduler role (D1): only the lease holder processes engine ticks. On election it
// recovers from Postgres (recovery.ts) before it runs any tick (D29): after a crash, the
// cycles the previous leader was running are interrupted and their rounds settled or voided
// (contract 3.1); after a clean handover (D30) its clocks simply resume. A recovery that
// fails is tried again, and the ticks wait for it. While it leads it sweeps for wallet work
// whose queue job was lost, for debits left in flight and for cycles a deposed leader's
// late tick left behind; on deposition it stops.
const RECOVERY_SWEEP_MS = 10_000;
// a debit left in flight by a node that debits its own bets
// (debit.ts) is found within a second of its node's heartbeat lapsing, as a bet
// worker's job is redelivered within a second of its lock lapsing (pools.ts LOCKING). The
// query reads the few PENDING bets through the partial index bets_pending.
const SELF_DEBITED_SWEEP_MS = 1000;
// a failed recovery on election is tried again after this, doubling up to the cap
const RECOVERY_RETRY_MS = 500;
const RECOVERY_RETRY_CAP_MS = 5000;
// D36: the leader makes the coming months' partitions of the money tables when elected and
// then daily (a month's rows have nowhere to go without its partition; ensure makes three
// months ahead, so a leader that misses days loses nothing)
const PARTITIONS_EVERY_MS = 24 * 60 * 60 * 1000;
// D17: inbound idempotency keys expire after 24 hours; the leader drops the expired ones
// this often, so the table holds at most a day and an hour of keys
const IDEMPOTENCY_SWEEP_MS = 60 * 60 * 1000;
// D42, D31: free-bet campaigns whose totals became final (every round played and settled,
// past their end, or cancelled while a bet was undecided) are finished, each with its
// freebet.campaign_finished event, this often, and on election (what became final during a
// change of leader is not left a whole interval): the event follows within one interval (a
// bounded number of campaigns a run, finishCampaigns)
const FREE_BET_FINISH_SWEEP_MS = 15_000;

export function startScheduler(svc: ServiceContext, lease: LeaseOptions = {}): RunningWorkers & { lease: LeaderLease } {
  const leader = new LeaderLease(svc.redis, svc.logger, lease);
  // the epoch of this process's term once its recovery completed, until it is deposed
  let recoveredEpoch: bigint | undefined;
  // the ticks and sweeps of that term
  let leading: { worker: RunningWorkers; sweeps: NodeJS.Timeout[] } | undefined;
  // each election and each deposition starts a new generation; an election's recovery
  // starts the ticks only if no other began meanwhile
  let generation = 0;
  let electing: Promise<void> = Promise.resolve();
  let stopping = false;
  // ends the wait before a recovery's next attempt, when the term ends meanwhile
  let wake = () => {};

  // each sweep runs again only once its previous run is done; what it did is logged under
  // `done` when it did anything. `atOnce`: a first run now, not only after `ms`.
  type Sweep = { done: string; failed: string; atOnce?: boolean };
  const RECOVERY: Sweep = { done: 'pending work recovered', failed: 'recovering pending work failed' };
  const every = (ms: number, sweep: () => Promise<Record<string, number>>, { done, failed, atOnce = false }: Sweep = RECOVERY) => {
    let running = false;
    const run = () => {
      if (running) return;
      running = true;
      sweep()
        .then((found) => {
          if (Object.values(found).some((count) => count > 0)) svc.logger.info(found, done);
        })
        .catch((err: unknown) => svc.logger.error({ err }, failed))
        .finally(() => {
          running = false;
        });
    };
    const timer = setInterval(run, ms);
    timer.unref();
    if (atOnce) run();
    return timer;
  };

  const startTicks = (epoch: bigint) => {
    const worker = superviseWorker(svc, 'engine', (connection) => startWorker(svc, 'engine', { svc, epoch }, connection));
    const sweeps = [
      every(PARTITIONS_EVERY_MS, async () => ({ partitionsMade: (await ensurePartitions(svc.sql, { now: svc.now() })).created.length }), {
        done: 'partitions made',
        failed: 'making partitions failed',
        atOnce: true,
      }),
      every(IDEMPOTENCY_SWEEP_MS, async () => ({ expiredIdempotencyKeys: await dropExpiredIdempotencyKeys(svc.sql, svc.now()) }), {
        done: 'expired idempotency keys dropped',
        failed: 'dropping expired idempotency keys failed',
        atOnce: true,
      }),
      every(FREE_BET_FINISH_SWEEP_MS, async () => ({ freeBetCampaignsFinished: (await finishCampaigns({ sql: svc.sql, now: svc.now() })).finished }), {
        done: 'free-bet campaigns finished',
        failed: 'finishing free-bet campaigns failed',
        atOnce: true,
      }),
      every(RECOVERY_SWEEP_MS, async () => ({ ...(await recoverStaleCycles(svc, epoch)), ...(await recoverPendingWork(svc)) })),
      every(SELF_DEBITED_SWEEP_MS, async () => ({ orphanBets: await resolveOrphanBets(svc, 'self-debited') })),
    ];
    leading = { worker, sweeps };
  };

  const stopTicks = () => {
    const stopped = leading;
    leading = undefined;
    stopped?.sweeps.forEach(clearInterval);
    return stopped;
  };

  // D29: recovery completes before this term runs a tick. It is tried until it succeeds or
  // the term ends (deposed, stopping); a term that Postgres already knows a later one of
  // (Redis lost its counter) takes a term above it, as long as it holds the lease.
  const lead = async (mine: number, term: Term) => {
    const current = () => mine === generation && !stopping;
    let epoch = term.epoch;
    for (let attempt = 0; current(); attempt++) {
      try {
        const recovered = await recoverOnElection(svc, { ...term, epoch });
        svc.logger.info({ kind: term.handedOverBy === null ? 'crash' : 'handover', epoch: epoch.toString(), ...recovered }, 'scheduler recovered on election');
        if (mine !== generation) return;
        recoveredEpoch = epoch;
        if (!stopping) startTicks(epoch);
        return;
      } catch (err) {
        if (err instanceof SupersededError) {
          const raised = await leader.raiseEpoch(err.current).catch(() => null);
          if (raised === null) return;
          epoch = raised;
          continue;
        }
        svc.logger.error({ err, attempt }, 'recovery on election failed; no tick runs until it is retried and completes');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(RECOVERY_RETRY_CAP_MS, RECOVERY_RETRY_MS * 2 ** attempt));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  };

  leader.on('elected', (term: Term) => {
    const mine = ++generation;
    electing = lead(mine, term);
    // D37: a recovery the process starts with is its start-up, not overload
    svc.overload.startingWith(electing);
  });
  leader.on('deposed', () => {
    generation++;
    recoveredEpoch = undefined;
    wake();
    void stopTicks()?.worker.close();
  });
  leader.start();

  return {
    lease: leader,
    // D12, D30: the running tick finishes; then, if this process's term had recovered and
    // still holds the lease, it hands over (the marker and the release are one step,
    // leader.ts), so that its successor resumes the clocks at once and voids nothing
    close: async (inFlightUntil?: number) => {
      stopping = true;
      wake();
      // a recovery under way is let finish: then it hands over what it adopted; a term that
      // never recovered hands nothing over, and its successor recovers as after a crash
      await finishedInTime(electing, inFlightUntil);
      const stopped = stopTicks();
      if (stopped) await stopped.worker.close(inFlightUntil);
      const epoch = recoveredEpoch;
      if (!(epoch !== undefined && (await leader.handOver(epoch)))) await leader.stop();
    },
  };
}
