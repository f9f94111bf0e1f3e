import type { JobType, Queue } from 'bullmq';
import type { ServiceContext } from '../context.js';
import type { WalletJobRef } from '../../platform/queues.js';
import type { CyclePhase } from '../../platform/db/client.js';
import { statement } from '../../platform/db/sql.js';
import { liveDebitNodes, rejectWithRollback } from '../bets/debit.js';
import { ticketOf, type TicketedBet } from '../bets/ticket.js';
import { SupersededError, resumeClocks, runOverdueTicks, scheduleTick, stopClock } from './clock.js';
import { settleRounds } from './settle.js';
import { voidRound } from './voids.js';
import { recordToldEnds } from './flight.js';
import { enqueueWalletJob } from '../wallet-jobs/wallet-jobs.js';
import { finishInstantPlays } from '../plays/sweep.js';
import { tellFreeBetSessions } from '../freebets/usable.js';

// Postgres is the record, Redis the transport (contract 3.1, D29): work that a crash, a
// lost queue or a restarted Redis dropped is re-derived from the rows. Every step is fenced
// on the row's state, so running this while the original work still runs, twice, or in two
// processes at once, books nothing twice.

export type Recovered = {
  interruptedCycles: number;
  settledRounds: number;
  voidedRounds: number;
  walletJobs: number;
  orphanBets: number;
};

// An elected scheduler's term (leader.ts): its epoch, the election's own id, and the epoch
// of the leader that handed over to it (D30), or null when the previous one was lost
// without handing over (killed, lease lapsed, Redis emptied: a crash, contract 3.1).
export type Election = { epoch: bigint; id: string; handedOverBy: bigint | null };

// D29: the term is recorded before anything is recovered. Epochs only grow: a term is taken
// unless a later one was, or the same epoch by another election (Redis, emptied, issued it
// again); the same election takes it again when its recovery is retried.
const TAKE_TERM = statement(
  'scheduler_take_term',
  `WITH taken AS (
     UPDATE scheduler_leader SET epoch = $1, election_id = $2
     WHERE id = 1 AND (epoch < $1 OR (epoch = $1 AND election_id = $2))
     RETURNING epoch
   )
   SELECT EXISTS (SELECT 1 FROM taken) AS taken, (SELECT epoch FROM scheduler_leader WHERE id = 1) AS epoch`,
);

export async function takeTerm(svc: ServiceContext, election: Pick<Election, 'epoch' | 'id'>): Promise<void> {
  const [row] = await svc.sql.query<{ taken: boolean; epoch: bigint }>(TAKE_TERM, [election.epoch, election.id]);
  if (!row!.taken) throw new SupersededError(election.epoch, row!.epoch);
}

// Run by a scheduler when it is elected (at start-up, or when leadership changes hands),
// before it runs any tick (D29). The cycles of a leader that handed over are adopted and
// go on (D30); those of any other earlier term are interrupted (contract 3.1). Throws
// SupersededError, touching nothing, when a later term was taken. Safe to run again after
// a failure: each step picks up what an earlier attempt left.
export async function recoverOnElection(svc: ServiceContext, election: Election): Promise<Recovered> {
  await takeTerm(svc, election);
  const { interrupted } = await endEarlierTerms(svc, election.epoch, election.handedOverBy);
  const rounds = await recoverInterrupted(svc);
  await resumeClocks(svc);
  return { interruptedCycles: interrupted, ...rounds, ...(await recoverPendingWork(svc)) };
}

// Run by the leader every few seconds: a tick of a deposed leader that was under way when
// this term began can leave a cycle under the old term; it is recovered as on election. And a
// tick whose job was lost is run (clock.ts runOverdueTicks).
export async function recoverStaleCycles(
  svc: ServiceContext,
  epoch: bigint,
): Promise<Pick<Recovered, 'interruptedCycles' | 'settledRounds' | 'voidedRounds'> & { overdueTicks: number }> {
  const { interrupted, adopted } = await endEarlierTerms(svc, epoch, null);
  for (const cycle of adopted) await scheduleTick(svc, cycle);
  const recovered = interrupted === 0 ? { interruptedCycles: 0, settledRounds: 0, voidedRounds: 0 } : { interruptedCycles: interrupted, ...(await recoverInterrupted(svc)) };
  return { ...recovered, overdueTicks: await runOverdueTicks(svc, epoch) };
}

// Run on election and by the leader every few seconds: queue jobs whose queue entry was
// lost and resolve debits left in flight by a process that died.
// And (D41) the instant plays left unfinished are played and settled (plays/sweep.ts).
export async function recoverPendingWork(svc: ServiceContext): Promise<Pick<Recovered, 'walletJobs' | 'orphanBets'> & Awaited<ReturnType<typeof finishInstantPlays>>> {
  const orphanBets = await resolveOrphanBets(svc);
  return { walletJobs: await requeueWalletJobs(svc), orphanBets, ...(await finishInstantPlays(svc)) };
}

// contract 3.1: a cycle caught by a crash before its outcome was settled does not go on. An
// instant play's cycle (D41) is not the clock's: it is played on, never interrupted
// (plays/sweep.ts).
// Moving it to FINISHED also closes it to late debits: bet acceptance reads the cycle FOR
// SHARE and accepts only in BETTING_OPEN or ROLLING. One statement, fenced on the term: a
// tick of the dead (or deposed) leader that holds the cycle is waited for and its result
// read again, so a cycle it moved on within these phases is interrupted all the same, and a
// recovery whose term is over interrupts nothing.
const INTERRUPT_CYCLES = statement(
  'recovery_interrupt_cycles',
  `UPDATE cycles SET phase = 'FINISHED', phase_ends_at = NULL, finished_at = $2
   WHERE phase IN ('BETTING_OPEN', 'ROLLING', 'RESULT') AND NOT instant AND (leader_epoch IS NULL OR leader_epoch < $1::bigint)
     AND $1::bigint = (SELECT epoch FROM scheduler_leader WHERE id = 1)
   RETURNING id`,
);
// D30: the cycles of the leader that handed over go on under this term, as do cycles of any
// earlier term that were already settled (COOLDOWN: nothing of them is left to recover).
const ADOPT_CYCLES = statement(
  'recovery_adopt_cycles',
  `UPDATE cycles SET leader_epoch = $1::bigint
   WHERE phase IN ('BETTING_OPEN', 'ROLLING', 'RESULT', 'COOLDOWN') AND NOT instant AND (leader_epoch IS NULL OR leader_epoch < $1::bigint)
     AND (phase = 'COOLDOWN' OR leader_epoch = $2::bigint)
     AND $1::bigint = (SELECT epoch FROM scheduler_leader WHERE id = 1)
   RETURNING id, game_code, phase, phase_ends_at, flight_started_at`,
);

type AdoptedCycle = { id: string; game_code: string; phase: CyclePhase; phase_ends_at: Date | null; flight_started_at: Date | null };

// The cycles of terms before `epoch`: the handed-over term's are adopted first, the others
// interrupted, and the settled ones adopted last, so that a cycle a late tick moved from
// RESULT to COOLDOWN meanwhile is adopted rather than left under its old term.
async function endEarlierTerms(svc: ServiceContext, epoch: bigint, handedOverBy: bigint | null) {
  const handedOver = handedOverBy === null ? [] : await svc.sql.query<AdoptedCycle>(ADOPT_CYCLES, [epoch, handedOverBy]);
  const interrupted = await svc.sql.query<{ id: string }>(INTERRUPT_CYCLES, [epoch, svc.now()]);
  const settled = await svc.sql.query<AdoptedCycle>(ADOPT_CYCLES, [epoch, null]);
  if (interrupted.length > 0) svc.logger.warn({ cycles: interrupted.map((c) => c.id) }, 'cycles interrupted by a crash are recovered');
  const adopted = [...handedOver, ...settled].map((c) => ({
    id: c.id,
    gameCode: c.game_code,
    phase: c.phase,
    phaseEndsAt: c.phase_ends_at,
    flightStartedAt: c.flight_started_at,
  }));
  return { interrupted: interrupted.length, adopted };
}

// The rounds of interrupted cycles, then their engines: an engine whose current cycle was
// interrupted stops, and starts again with a new cycle while it has a reason to run. Both
// steps find their work in the rows, so a recovery that failed half-way is finished by the
// next attempt.
const INTERRUPTED_ENGINES = statement(
  'recovery_interrupted_engines',
  `SELECT e.operator_id, e.game_code, e.currency, e.current_cycle_id AS id
   FROM engines e JOIN cycles c ON c.id = e.current_cycle_id
   WHERE e.running AND c.phase = 'FINISHED'`,
);

async function recoverInterrupted(svc: ServiceContext): Promise<Pick<Recovered, 'settledRounds' | 'voidedRounds'>> {
  const rounds = await recoverRounds(svc);
  const engines = await svc.sql.query<{ operator_id: string; game_code: string; currency: string; id: string }>(INTERRUPTED_ENGINES);
  for (const e of engines) await stopClock(svc, { id: e.id, operatorId: e.operator_id, gameCode: e.game_code, currency: e.currency });
  return rounds;
}

// contract 3.1, crash recovery: rounds with settled=false whose cycle no longer runs. With
// an outcome recorded (RESULT) the win is enqueued and settled set true; without one the
// round is VOIDED, its accepted bet VOIDED with a rollback, its pending round bet REFUNDED
// with ROUND_VOIDED (voidRound).
//
// A crash round (D40) whose own end a refused cash-out told is not voided (voids.ts): its end
// is recorded (flight.ts recordToldEnds) and it is settled with the others. The rounds with an
// outcome are read after the voids, not with the rounds to void: a crash round can reach
// RESULT while this runs, by a cash-out that read its flight before the cycle was
// interrupted and commits before the void (both are fenced on the round's state, so one of the two wins). Such a round has a
// durable result and is settled here, whether or not the node that decided it lives to
// settle it. Once every round listed as flying is voided or has its result, none of these
// cycles has a round left that could still move.
const UNSETTLED_IN_CLOSED_CYCLES = { settled: false, cycle: { phase: { in: ['COOLDOWN' as const, 'FINISHED' as const] } } };

async function recoverRounds(svc: ServiceContext): Promise<Pick<Recovered, 'settledRounds' | 'voidedRounds'>> {
  const open = await svc.db.round.findMany({
    where: { ...UNSETTLED_IN_CLOSED_CYCLES, state: { in: ['BETTING_OPEN', 'ROLLING'] } },
    select: { id: true },
  });
  let voidedRounds = 0;
  // D42: the sessions whose free bets the voids gave back, told once each
  const freeSessions = new Set<string>();
  for (const round of open) {
    if (await voidRound(svc, round.id, 'crash_recovery', freeSessions)) voidedRounds += 1;
  }
  await tellFreeBetSessions(svc, freeSessions);
  // D40: a flight's round whose end a refusal told is not voided above; its end is recorded
  await recordToldEnds(svc);
  const withOutcome = await svc.db.round.findMany({ where: { ...UNSETTLED_IN_CLOSED_CYCLES, state: 'RESULT' }, select: { cycleId: true } });
  for (const cycleId of new Set(withOutcome.map((r) => r.cycleId))) {
    await settleRounds(svc, await svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } }));
  }
  if (open.length + withOutcome.length > 0) svc.logger.warn({ voided: voidedRounds, settled: withOutcome.length }, 'unsettled rounds recovered');
  return { settledRounds: withOutcome.length, voidedRounds };
}

// contract 2.13: every pending wallet job has its row; one that no live queue job carries
// (alone, or in a batch) is queued again at its next attempt time.
const LIVE_JOB_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

// A wallet job row is committed a moment before its queue job is added (settlement adds one
// queue job for a cycle's wins): rows younger than this are left to that add.
const QUEUEING_GRACE_MS = 5000;

async function requeueWalletJobs(svc: ServiceContext): Promise<number> {
  const jobs = await svc.db.walletJob.findMany({
    where: { completedAt: null, abandonedAt: null, createdAt: { lt: new Date(Date.now() - QUEUEING_GRACE_MS) } },
    select: { id: true, endpoint: true, nextAttemptAt: true },
  });
  if (jobs.length === 0) return 0;
  const live = { win: await carried(svc.queues.settle), rollback: await carried(svc.queues.rollback) };
  let requeued = 0;
  for (const job of jobs) {
    const queue = job.endpoint === 'win' ? svc.queues.settle : svc.queues.rollback;
    if (live[job.endpoint === 'win' ? 'win' : 'rollback'].has(job.id)) continue;
    // a finished queue job under the same id would make the new one a duplicate
    await (await queue.getJob(job.id))?.remove().catch(() => undefined);
    const delay = job.nextAttemptAt ? Math.max(0, job.nextAttemptAt.getTime() - svc.now().getTime()) : 0;
    await enqueueWalletJob(svc, job, delay);
    requeued += 1;
  }
  return requeued;
}

// the wallet jobs that the live queue jobs of a queue carry
async function carried(queue: Queue<WalletJobRef>): Promise<Set<string>> {
  const jobs = await queue.getJobs([...LIVE_JOB_STATES] as JobType[]);
  return new Set(jobs.flatMap((job) => job?.data.walletJobIds ?? []));
}

// A bet is queued right after its row is written; one still PENDING this long without a
// live queue job lost it (Redis restarted, or its job failed after stalling too often). A
// bet its own node debits (debit_node, debit.ts) is in flight while that node's
// heartbeat lives.
const ORPHAN_AFTER_MS = 3000;
// Whatever the queue says, a debit PENDING this long past the wallet timeout has outlived
// any call and any lock: the process that made it is gone.
const STALE_BET_MARGIN_MS = 30_000;

// contract 7.1: a debit whose outcome nobody recorded is uncertain: the bet is
// rejected and the same transactionUuid rolled back (a rollback of a debit the wallet never
// booked is answered TRANSACTION_DOES_NOT_EXIST, which completes it).
// which: 'all', or only the bets their own node debits ('self-debited'), whose check is one
// Redis read where the others' reads every live job of the bet queue
// The PENDING bets, through the partial index of bets still PENDING (the status is a literal:
// an ORM's parameter for it would not match the index's predicate, and the sweep, run every
// second, read every month of bets whole: seen at 10M bets of history, D36).
const ORPHAN_CANDIDATES = statement(
  'recovery_pending_bets',
  `SELECT id, round_id AS "roundId", session_id AS "sessionId", cycle_id AS "cycleId", cycle_created_at AS "cycleCreatedAt",
          operator_id AS "operatorId", player_ref AS "playerRef", game_code AS "gameCode", currency, side, auto_cash_out_cents AS "autoCashOutCents", amount_micro AS "amountMicro",
          is_free AS "isFree", demo, bet_transaction_uuid AS "betTransactionUuid", client_bet_id AS "clientBetId",
          debit_node AS "debitNode", created_at AS "createdAt"
   FROM bets
   WHERE status = 'PENDING' AND created_at < $1 AND ($2::bool OR debit_node IS NOT NULL)`,
);

export async function resolveOrphanBets(svc: ServiceContext, which: 'all' | 'self-debited' = 'all'): Promise<number> {
  // real time, not the service clock: what went stale is a real HTTP call and a real lock
  const now = Date.now();
  const pending = await svc.sql.query<TicketedBet & { debitNode: string | null; createdAt: Date }>(ORPHAN_CANDIDATES, [
    new Date(now - ORPHAN_AFTER_MS),
    which === 'all',
  ]);
  if (pending.length === 0) return 0;
  const queued = pending.some((bet) => bet.debitNode === null) ? await liveBetIds(svc) : new Set<string>();
  const liveNodes = await liveDebitNodes(svc.redis, [...new Set(pending.flatMap((bet) => (bet.debitNode ? [bet.debitNode] : [])))]);
  let resolved = 0;
  for (const bet of pending) {
    const stale = bet.createdAt.getTime() < now - svc.config.walletCallTimeoutMs - STALE_BET_MARGIN_MS;
    const inFlight = bet.debitNode ? liveNodes.has(bet.debitNode) : queued.has(bet.id);
    if (!stale && inFlight) continue;
    const ack = await rejectWithRollback(svc, ticketOf(bet), 'wallet_timeout', 'uncertain_bet');
    if (!ack.ok && ack.reason === 'wallet_timeout') resolved += 1;
  }
  if (resolved > 0) svc.logger.warn({ resolved }, 'debits left in flight by a stopped process were rolled back');
  return resolved;
}

// the bets of every bet job the queue still holds (a job carries a batch of bets)
async function liveBetIds(svc: ServiceContext): Promise<Set<string>> {
  const jobs = await svc.queues.bet.getJobs([...LIVE_JOB_STATES] as JobType[]);
  return new Set(jobs.flatMap((job) => job?.data.tickets.map((ticket) => ticket.betId) ?? []));
}
