import type { Db } from '../../platform/db/client.js';
import type { Queryable } from '../../platform/db/sql.js';

// A wallet job abandoned after 24 hours (contract 3.4) or unknown to the wallet (D23) is a
// ticket for a human: the service has stopped trying, and only the operator's wallet knows
// whether the money moved. Once a human has settled it with the operator, `rgs jobs
// reconcile` records who did, when and why on the job's row. Retention keeps the job's month
// until then (D36): dropping it would destroy the last record of money the wallet may owe.

export class ReconcileError extends Error {
  override name = 'ReconcileError';
  // true: the command line was wrong (a note or a name out of bounds), not the job
  constructor(
    message: string,
    readonly usage = false,
  ) {
    super(message);
  }
}

// the note and the name are written by a person and read back in reports: bounded like the
// wallet's strings (D24)
export const RECONCILIATION_TEXT_MAX = 1000;
export const RECONCILED_BY_MAX = 128;

export type Reconciled = {
  id: string;
  endpoint: string;
  purpose: string;
  abandonedAt: string;
  reconciledAt: string;
  reconciledBy: string;
  reconciliationNote: string;
};

type Row = { id: string; endpoint: string; purpose: string; abandoned_at: Date | null; reconciled_at: Date | null; reconciled_by: string | null; reconciliation_note: string | null };

// Marks an abandoned job reconciled, once: a second mark would overwrite the first record of
// who settled it, so it is refused (as is a job not abandoned: the service still owns it).
export async function reconcileWalletJob(q: Queryable, { id, note, by, now }: { id: string; note: string; by: string; now: Date }): Promise<Reconciled> {
  if (note.trim() === '' || note.length > RECONCILIATION_TEXT_MAX) throw new ReconcileError(`--note must say why, in 1 to ${RECONCILIATION_TEXT_MAX} characters`, true);
  if (by.trim() === '' || by.length > RECONCILED_BY_MAX) throw new ReconcileError(`--by must name who, in 1 to ${RECONCILED_BY_MAX} characters`, true);
  const [done] = await q.query<Row>(
    `UPDATE wallet_jobs SET reconciled_at = $2, reconciled_by = $3, reconciliation_note = $4
     WHERE id = $1 AND abandoned_at IS NOT NULL AND reconciled_at IS NULL
     RETURNING id, endpoint, purpose, abandoned_at, reconciled_at, reconciled_by, reconciliation_note`,
    [id, now, by, note],
  );
  if (done) return reconciled(done);
  const [job] = await q.query<Row>(
    'SELECT id, endpoint, purpose, abandoned_at, reconciled_at, reconciled_by, reconciliation_note FROM wallet_jobs WHERE id = $1',
    [id],
  );
  if (!job) throw new ReconcileError(`wallet job ${id} does not exist`);
  if (!job.abandoned_at) throw new ReconcileError(`wallet job ${id} is not abandoned: the service still owns it`);
  throw new ReconcileError(`wallet job ${id} was reconciled already, by ${job.reconciled_by} at ${job.reconciled_at!.toISOString()}`);
}

const reconciled = (row: Row): Reconciled => ({
  id: row.id,
  endpoint: row.endpoint,
  purpose: row.purpose,
  abandonedAt: row.abandoned_at!.toISOString(),
  reconciledAt: row.reconciled_at!.toISOString(),
  reconciledBy: row.reconciled_by!,
  reconciliationNote: row.reconciliation_note!,
});

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
