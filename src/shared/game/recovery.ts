import type { JobType, Queue } from 'bullmq';
import type { ServiceContext } from '../context.js';
import type { WalletJobRef } from '../queues.js';
import type { CyclePhase } from '../db/client.js';
import { rejectWithRollback, ticketOf } from './bets.js';
import { resumeClocks, stopClock } from './engine.js';
import { settleRounds } from './settlement.js';
import { voidRound } from './voids.js';
import { liveDebitNodes } from './local-debits.js';
import { enqueueWalletJob } from './wallet-jobs.js';

// Postgres is the record, Redis the transport (issue 4): work that a crash, a lost queue or
// a restarted Redis dropped is re-derived from the rows. Every step is fenced on the row's
// state, so running this while the original work still runs, twice, or in two processes at
// once, books nothing twice.

export type Recovered = {
  interruptedCycles: number;
  settledRounds: number;
  voidedRounds: number;
  walletJobs: number;
  orphanBets: number;
};

// 'crash': the previous scheduler stopped without handing over (killed, or Redis lost its
// lease and queues), so cycles it was running are interrupted and recovered as contract 3.1
// says. 'handover': it stopped cleanly (D12), so its clocks simply resume.
export type ElectionKind = 'crash' | 'handover';

// Run by a scheduler when it is elected (at start-up, or when leadership changes hands).
export async function recoverOnElection(svc: ServiceContext, kind: ElectionKind): Promise<Recovered> {
  const interrupted = kind === 'crash' ? await interruptCycles(svc) : [];
  const rounds = await recoverRounds(svc);
  for (const cycle of interrupted) await stopClock(svc, cycle);
  await resumeClocks(svc);
  return { interruptedCycles: interrupted.length, ...rounds, ...(await recoverPendingWork(svc)) };
}

// Run on election and by the leader every few seconds: queue jobs whose queue entry was
// lost and resolve debits left in flight by a process that died.
export async function recoverPendingWork(svc: ServiceContext): Promise<Pick<Recovered, 'walletJobs' | 'orphanBets'>> {
  return { walletJobs: await requeueWalletJobs(svc), orphanBets: await resolveOrphanBets(svc) };
}

// contract 3.1: a cycle caught by a crash before its outcome was settled does not go on.
// Moving it to FINISHED (fenced on the phase read) also closes it to late debits: bet
// acceptance reads the cycle FOR SHARE and accepts only in BETTING_OPEN or ROLLING.
const INTERRUPTIBLE: CyclePhase[] = ['BETTING_OPEN', 'ROLLING', 'RESULT'];

async function interruptCycles(svc: ServiceContext) {
  const cycles = await svc.db.cycle.findMany({
    where: { phase: { in: INTERRUPTIBLE } },
    select: { id: true, phase: true, operatorId: true, gameCode: true, currency: true },
  });
  const interrupted = [];
  for (const cycle of cycles) {
    const { count } = await svc.db.cycle.updateMany({
      where: { id: cycle.id, phase: cycle.phase },
      data: { phase: 'FINISHED', phaseEndsAt: null, finishedAt: svc.now() },
    });
    if (count > 0) interrupted.push(cycle);
  }
  if (interrupted.length > 0) svc.logger.warn({ cycles: interrupted.map((c) => c.id) }, 'cycles interrupted by a crash are recovered');
  return interrupted;
}

// contract 3.1, crash recovery: rounds with settled=false whose cycle no longer runs. With
// an outcome recorded (RESULT) the win is enqueued and settled set true; without one the
// round is VOIDED, its accepted bet VOIDED with a rollback, its pending round bet REFUNDED
// with ROUND_VOIDED (voidRound).
async function recoverRounds(svc: ServiceContext): Promise<Pick<Recovered, 'settledRounds' | 'voidedRounds'>> {
  const rounds = await svc.db.round.findMany({
    where: { settled: false, cycle: { phase: { in: ['COOLDOWN', 'FINISHED'] } } },
    select: { id: true, state: true, cycleId: true },
  });
  let voidedRounds = 0;
  for (const round of rounds.filter((r) => r.state === 'BETTING_OPEN' || r.state === 'ROLLING')) {
    if (await voidRound(svc, round.id, 'crash_recovery')) voidedRounds += 1;
  }
  const withOutcome = rounds.filter((r) => r.state === 'RESULT');
  for (const cycleId of new Set(withOutcome.map((r) => r.cycleId))) {
    await settleRounds(svc, await svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } }));
  }
  if (rounds.length > 0) svc.logger.warn({ voided: voidedRounds, settled: withOutcome.length }, 'unsettled rounds recovered');
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
// bet its own node debits (debit_node, local-debits.ts) is in flight while that node's
// heartbeat lives.
const ORPHAN_AFTER_MS = 3000;
// Whatever the queue says, a debit PENDING this long past the wallet timeout has outlived
// any call and any lock: the process that made it is gone.
const STALE_BET_MARGIN_MS = 30_000;

// contract 7.1 and issue 4: a debit whose outcome nobody recorded is uncertain: the bet is
// rejected and the same transactionUuid rolled back (a rollback of a debit the wallet never
// booked is answered TRANSACTION_DOES_NOT_EXIST, which completes it).
// which: 'all', or only the bets their own node debits ('self-debited'), whose check is one
// Redis read where the others' reads every live job of the bet queue
export async function resolveOrphanBets(svc: ServiceContext, which: 'all' | 'self-debited' = 'all'): Promise<number> {
  // real time, not the service clock: what went stale is a real HTTP call and a real lock
  const now = Date.now();
  const pending = await svc.db.bet.findMany({
    where: { status: 'PENDING', createdAt: { lt: new Date(now - ORPHAN_AFTER_MS) }, ...(which === 'self-debited' ? { debitNode: { not: null } } : {}) },
  });
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
