import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import type { Bet, Db, Prisma, WalletJob } from '../db/client.js';
import { WALLET_RETRY_BUDGET_MS, walletRetryDelayMs } from '../queues.js';
import type { WalletEndpoint } from '../wallet/status.js';
import { walletTarget } from '../wallet/target.js';

// Pending wallet jobs (contract 2.13, 3.4, 4.2): a win or a rollback is first a row here,
// then a BullMQ job that carries its id. Running a job calls the wallet once and records
// the attempt; completion follows contract 7.1, and a job that keeps failing for 24 hours
// is abandoned with its row kept as a ticket for a human (`rgs jobs abandoned`).

export type RollbackPurpose = 'uncertain_bet' | 'round_voided' | 'late_bet' | 'win_exhausted';

// contract 2.8: a rollback has its own transactionUuid and references the bet's.
export function rollbackJobData(
  bet: Pick<Bet, 'id' | 'operatorId' | 'sessionId' | 'playerRef' | 'currency' | 'gameCode' | 'betTransactionUuid' | 'roundId'>,
  rollbackTransactionUuid: string,
  purpose: RollbackPurpose,
  now: Date,
): Prisma.WalletJobUncheckedCreateInput {
  return {
    id: randomUUID(),
    operatorId: bet.operatorId,
    sessionId: bet.sessionId,
    endpoint: 'rollback',
    purpose,
    betId: bet.id,
    transactionUuid: rollbackTransactionUuid,
    nextAttemptAt: now,
    payload: {
      operatorId: bet.operatorId,
      playerRef: bet.playerRef,
      currency: bet.currency,
      gameCode: bet.gameCode,
      transactionUuid: rollbackTransactionUuid,
      referenceTransactionUuid: bet.betTransactionUuid,
      roundId: bet.roundId,
    },
  };
}

// The row is the record and the queue its transport: a job that cannot be queued now (Redis
// away) stays pending in Postgres and the recovery sweep queues it (recovery.ts).
export async function enqueueWalletJob(svc: ServiceContext, job: Pick<WalletJob, 'id' | 'endpoint'>, delayMs = 0): Promise<void> {
  const queue = job.endpoint === 'win' ? svc.queues.settle : svc.queues.rollback;
  try {
    await queue.add(job.endpoint, { walletJobId: job.id }, { jobId: job.id, delay: delayMs });
  } catch (err) {
    svc.logger.warn({ walletJobId: job.id, err: (err as Error).message }, 'wallet job not queued; recovery will queue it');
  }
}

export type WalletJobOutcome =
  | { kind: 'completed' }
  | { kind: 'skipped' }
  | { kind: 'retry'; delayMs: number; error: string }
  | { kind: 'abandoned' };

// contract 4.2: rollback warns when stuck over 5 minutes (7.1)
const ROLLBACK_STUCK_MS = 5 * 60 * 1000;

// For /metrics: open jobs, those open longer than the rollback alert threshold, and the
// abandoned ones (each a ticket for a human), per endpoint. Both queries use indexes that
// cover only open, respectively abandoned, rows.
export async function walletJobCounts(db: Db, now: Date): Promise<{ endpoint: string; state: string; count: number }[]> {
  const stuckBefore = new Date(now.getTime() - ROLLBACK_STUCK_MS);
  const [open, abandoned] = await Promise.all([
    db.$queryRaw<{ endpoint: string; pending: bigint; stuck: bigint }[]>`
      SELECT endpoint, count(*) AS pending, count(*) FILTER (WHERE created_at < ${stuckBefore}) AS stuck
      FROM wallet_jobs WHERE completed_at IS NULL AND abandoned_at IS NULL GROUP BY endpoint`,
    db.$queryRaw<{ endpoint: string; abandoned: bigint }[]>`
      SELECT endpoint, count(*) AS abandoned FROM wallet_jobs WHERE abandoned_at IS NOT NULL GROUP BY endpoint`,
  ]);
  return ['win', 'rollback'].flatMap((endpoint) => {
    const row = open.find((r) => r.endpoint === endpoint);
    return [
      { endpoint, state: 'pending', count: Number(row?.pending ?? 0n) },
      { endpoint, state: 'stuck', count: Number(row?.stuck ?? 0n) },
      { endpoint, state: 'abandoned', count: Number(abandoned.find((r) => r.endpoint === endpoint)?.abandoned ?? 0n) },
    ];
  });
}

export async function runWalletJob(svc: ServiceContext, walletJobId: string): Promise<WalletJobOutcome> {
  const job = await svc.db.walletJob.findUnique({ where: { id: walletJobId } });
  if (!job || job.completedAt || job.abandonedAt) return { kind: 'skipped' };
  const endpoint = job.endpoint as WalletEndpoint;
  const target = await walletTarget(svc, job.operatorId);
  const result = await svc.wallet.call({
    target,
    endpoint,
    fields: job.payload as Record<string, unknown>,
    sessionId: job.sessionId ?? undefined,
    transactionUuid: job.transactionUuid,
    // D6, 4.3: the retry of a timed-out call reuses its requestUuid and bytes
    retryOf: job.lastTimedOut && job.lastRequestUuid && job.lastBytes
      ? { requestUuid: job.lastRequestUuid, bytes: job.lastBytes, attempt: job.attempts }
      : undefined,
  });
  const now = svc.now();
  const attempts = job.attempts + 1;

  // contract 7.1: success, or (win and rollback) a transaction the operator does not know,
  // which is alerted and treated as settled
  if (result.statusClass === 'success' || result.statusClass === 'treat_as_settled') {
    if (result.statusClass === 'treat_as_settled') {
      svc.logger.error({ walletJobId, endpoint, transactionUuid: job.transactionUuid }, 'wallet does not know the referenced transaction; treated as settled');
    }
    const done = await svc.db.$transaction(async (tx) => {
      const { count } = await tx.walletJob.updateMany({
        where: { id: job.id, completedAt: null },
        data: { attempts, completedAt: now, nextAttemptAt: null, lastError: null, lastTimedOut: false },
      });
      if (count === 0) return false;
      if (endpoint === 'win' && job.betId) {
        await tx.bet.updateMany({
          where: { id: job.betId, status: 'ACCEPTED' },
          // 4.2: a win the operator cannot match is settled without payout
          data: { status: 'SETTLED', settledAt: now, ...(result.statusClass === 'treat_as_settled' ? { payoutMicro: 0n } : {}) },
        });
        await tx.pendingRoundBet.updateMany({ where: { betId: job.betId, state: 'HELD' }, data: { state: 'RESOLVED', resolvedAt: now } });
      }
      return true;
    });
    if (done && job.sessionId && result.balanceMicro !== undefined) {
      // contract 6.4: a wallet call that changes the balance emits balance_update
      svc.emitter.toSession(job.sessionId, 'balance_update', {
        balanceMicro: result.balanceMicro.toString(),
        currency: result.currency ?? (job.payload as { currency?: string }).currency,
      });
    }
    return { kind: 'completed' };
  }

  const error = `${result.status}${result.httpStatus ? ` (HTTP ${result.httpStatus})` : ''}`;
  const age = now.getTime() - job.createdAt.getTime();
  if (age >= WALLET_RETRY_BUDGET_MS) {
    await abandon(svc, job, attempts, error, now);
    return { kind: 'abandoned' };
  }
  const delayMs = walletRetryDelayMs(attempts);
  await svc.db.walletJob.update({
    where: { id: job.id },
    data: {
      attempts,
      lastError: error,
      nextAttemptAt: new Date(now.getTime() + delayMs),
      lastRequestUuid: result.requestUuid,
      lastBytes: result.bytes,
      lastTimedOut: result.timedOut,
    },
  });
  if (endpoint === 'rollback' && age >= ROLLBACK_STUCK_MS) {
    svc.logger.warn({ walletJobId, transactionUuid: job.transactionUuid, attempts, error }, 'rollback stuck for over 5 minutes');
  }
  return { kind: 'retry', delayMs, error };
}

// contract 3.4: abandoned after 24 hours of failed retries, the row kept for a human. A
// win that exhausts its budget refunds the stake and voids the round (4.2); nothing is
// reversed for the win itself.
async function abandon(svc: ServiceContext, job: WalletJob, attempts: number, error: string, now: Date): Promise<void> {
  const refund = await svc.db.$transaction(async (tx) => {
    const { count } = await tx.walletJob.updateMany({
      where: { id: job.id, completedAt: null, abandonedAt: null },
      data: { attempts, lastError: error, abandonedAt: now, nextAttemptAt: null },
    });
    if (count === 0 || job.endpoint !== 'win' || !job.betId) return null;
    const bet = await tx.bet.findUniqueOrThrow({ where: { id: job.betId } });
    const rollbackTransactionUuid = randomUUID();
    const voided = await tx.bet.updateMany({
      where: { id: bet.id, status: 'ACCEPTED' },
      data: { status: 'VOIDED', voidedAt: now, rollbackTransactionUuid },
    });
    if (voided.count === 0) return null;
    await tx.round.updateMany({ where: { id: bet.roundId }, data: { state: 'VOIDED', voidedAt: now, voidReason: 'win_exhausted' } });
    await tx.pendingRoundBet.updateMany({
      where: { betId: bet.id, state: 'HELD' },
      data: { state: 'REFUNDED', resolutionReason: 'ROUND_VOIDED', resolvedAt: now },
    });
    return tx.walletJob.create({ data: rollbackJobData(bet, rollbackTransactionUuid, 'win_exhausted', now) });
  });
  svc.logger.error({ walletJobId: job.id, endpoint: job.endpoint, transactionUuid: job.transactionUuid, attempts, error }, 'wallet job abandoned after 24 hours: a human must look at it');
  if (refund) await enqueueWalletJob(svc, refund);
}
