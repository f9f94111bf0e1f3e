import type { ServiceContext } from '../context.js';
import { rejectWithRollback } from './bets.js';

// Postgres is the record, Redis the transport (issue 3): work that a lost queue, a killed
// worker or a restarted Redis dropped is re-derived from the rows. Every step is fenced on
// the row's state, so running this while the original job still runs, or in two processes
// at once, books nothing twice.

// A debit still PENDING this long after the bet was placed has outlived any wallet call
// (its timeout) and its worker's lock: the process that made it died.
const STALE_BET_MARGIN_MS = 30_000;

export type Recovered = { walletJobs: number; staleBets: number };

export async function recoverPendingWork(svc: ServiceContext): Promise<Recovered> {
  return { walletJobs: await requeueWalletJobs(svc), staleBets: await resolveStaleBets(svc) };
}

// contract 2.13: every pending wallet job has its row; one without a live queue job is
// queued again at its next attempt time.
async function requeueWalletJobs(svc: ServiceContext): Promise<number> {
  const jobs = await svc.db.walletJob.findMany({ where: { completedAt: null, abandonedAt: null } });
  let requeued = 0;
  for (const job of jobs) {
    const queue = job.endpoint === 'win' ? svc.queues.settle : svc.queues.rollback;
    const existing = await queue.getJob(job.id);
    const state = existing ? await existing.getState() : undefined;
    if (state && ['waiting', 'delayed', 'active', 'prioritized', 'waiting-children'].includes(state)) continue;
    if (existing) await existing.remove().catch(() => undefined);
    const delay = job.nextAttemptAt ? Math.max(0, job.nextAttemptAt.getTime() - svc.now().getTime()) : 0;
    await queue.add(job.endpoint, { walletJobId: job.id }, { jobId: job.id, delay });
    requeued += 1;
  }
  return requeued;
}

// contract 7.1 and issue 4: a debit whose outcome nobody recorded is uncertain: the bet is
// rejected and the same transactionUuid rolled back (a rollback of a debit the wallet never
// booked is answered TRANSACTION_DOES_NOT_EXIST, which completes it).
async function resolveStaleBets(svc: ServiceContext): Promise<number> {
  // real time, not the service clock: what went stale is a real HTTP call and a real lock
  const before = new Date(Date.now() - svc.config.walletCallTimeoutMs - STALE_BET_MARGIN_MS);
  const stale = await svc.db.bet.findMany({ where: { status: 'PENDING', createdAt: { lt: before } } });
  let resolved = 0;
  for (const bet of stale) {
    const ack = await rejectWithRollback(svc, bet, 'wallet_timeout', 'uncertain_bet');
    if (!ack.ok && ack.reason === 'wallet_timeout') resolved += 1;
  }
  if (resolved > 0) svc.logger.warn({ resolved }, 'debits left in flight by a stopped process were rolled back');
  return resolved;
}
