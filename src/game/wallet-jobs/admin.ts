import type { Db } from '../../platform/db/client.js';

// `rgs jobs abandoned` (D11, D36): the wallet jobs the service gave up on (contract 3.4, D23),
// oldest first, with what a human needs to settle each with the operator and, once done,
// the record `rgs jobs reconcile` left on it.
export async function listAbandonedJobs(db: Db) {
  const abandoned = await db.walletJob.findMany({ where: { abandonedAt: { not: null } }, orderBy: { abandonedAt: 'asc' } });
  return {
    jobs: abandoned.map((job) => ({
      id: job.id,
      operatorId: job.operatorId,
      endpoint: job.endpoint,
      purpose: job.purpose,
      betId: job.betId,
      transactionUuid: job.transactionUuid,
      attempts: job.attempts,
      lastError: job.lastError,
      createdAt: job.createdAt.toISOString(),
      abandonedAt: job.abandonedAt?.toISOString() ?? null,
      reconciledAt: job.reconciledAt?.toISOString() ?? null,
      reconciledBy: job.reconciledBy,
      reconciliationNote: job.reconciliationNote,
      payload: job.payload,
    })),
  };
}
