import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { Batcher, HOT_PATH_BATCH } from '../../platform/batch.js';
import type { ServiceContext } from '../context.js';
import { keyRange, params, statement, type Queryable } from '../../platform/db/sql.js';
import { AUDIT_PARAM_COUNT, auditParams, completeAuditsSql, type AuditCompletion } from '../../wallet/audit.js';
import type { Bet, Prisma, WalletJob } from '../../platform/db/client.js';
import { WALLET_RETRY_BUDGET_MS, walletRetryDelayMs, type WalletJobRef } from '../../platform/queues.js';
import type { WalletEndpoint } from '../../domain/wallet-status.js';
import { isoSql, outboxInsertSql } from '../../platform/outbox.js';
import type { EventData, EventType } from '../../domain/events.js';
import { roundVoidedData } from '../reports/round-view.js';
import { rollbackRequest } from '../../wallet/requests.js';
import { tellFreeBetSessions } from '../freebets/usable.js';

// Pending wallet jobs (contract 2.13, 3.4, 4.2): a win or a rollback is first a row here,
// then a BullMQ job that carries its id. Running a job calls the wallet once and records
// the attempt; completion follows contract 7.1, and a job that keeps failing for 24 hours
// is abandoned with its row kept as a ticket for a human (`rgs jobs abandoned`), as is a
// win the operator does not know (D23).

export type RollbackPurpose = 'uncertain_bet' | 'round_voided' | 'late_bet' | 'win_exhausted';

type RolledBack = Pick<Bet, 'operatorId' | 'playerRef' | 'currency' | 'gameCode' | 'betTransactionUuid' | 'roundId'>;

export function rollbackJobData(
  bet: RolledBack & Pick<Bet, 'id' | 'sessionId' | 'cycleCreatedAt'>,
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
    betCycleCreatedAt: bet.cycleCreatedAt,
    transactionUuid: rollbackTransactionUuid,
    nextAttemptAt: now,
    // the body of its /wallet/rollback call (contract 2.8)
    payload: rollbackRequest(bet, rollbackTransactionUuid),
  };
}

// The row is the record and the queue its transport: a job that cannot be queued now (Redis
// away) stays pending in Postgres and the recovery sweep queues it (recovery.ts). Each
// queue job names the wallet jobs it carries: one (a retry, a rollback), or the first
// attempts of a whole settled cycle's wins together (one queue job, not one per win).
export async function enqueueWalletJob(svc: ServiceContext, job: Pick<WalletJob, 'id' | 'endpoint'>, delayMs = 0): Promise<void> {
  const data = { walletJobIds: [job.id] };
  const options = { jobId: job.id, delay: delayMs };
  try {
    if (job.endpoint === 'win') await svc.queues.settle.add('win', data, options);
    else await svc.queues.rollback.add('rollback', data, options);
  } catch (err) {
    svc.logger.warn({ walletJobId: job.id, err: (err as Error).message }, 'wallet job not queued; recovery will queue it');
  }
}

// the first attempts of many wallet jobs at once; a job among them that must be retried
// is then queued on its own (runWalletBatch, below)
const WALLET_JOBS_PER_BATCH = 100;

export async function enqueueWalletJobs(svc: ServiceContext, endpoint: 'win' | 'rollback', ids: string[]): Promise<void> {
  const queue = endpoint === 'win' ? svc.queues.settle : svc.queues.rollback;
  for (let i = 0; i < ids.length; i += WALLET_JOBS_PER_BATCH) {
    const walletJobIds = ids.slice(i, i + WALLET_JOBS_PER_BATCH);
    try {
      await queue.add('batch', { walletJobIds }, { jobId: `batch-${walletJobIds[0]}` });
    } catch (err) {
      svc.logger.warn({ walletJobs: walletJobIds.length, err: (err as Error).message }, 'wallet jobs not queued; recovery will queue them');
    }
  }
}

export type WalletJobOutcome =
  | { kind: 'completed' }
  | { kind: 'skipped' }
  | { kind: 'retry'; delayMs: number; error: string }
  | { kind: 'abandoned' };

// the last_error of a win the operator did not know (contract 4.2, D23)
const UNMATCHED_WIN_ERROR = 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST';

// D23: what a connected player is told when a win fails after round_result went out
type WinFailedReason = `wallet_rejected:${typeof UNMATCHED_WIN_ERROR}` | 'win_exhausted';

function winFailed(svc: ServiceContext, job: { sessionId: string | null; betId: string | null; payload: unknown }, reason: WinFailedReason): void {
  if (!job.sessionId || !job.betId) return;
  const { roundId } = job.payload as { roundId?: string };
  svc.emitter.toSession(job.sessionId, 'win_failed', { roundId, betId: job.betId, reason });
}

// contract 4.2: rollback warns when stuck over 5 minutes (7.1)
const ROLLBACK_STUCK_MS = 5 * 60 * 1000;

// For /metrics: open jobs, those open longer than the rollback alert threshold, and the
// abandoned ones (each a ticket for a human), per endpoint. Both queries use indexes that
// cover only open, respectively abandoned, rows.
const OPEN_JOB_COUNTS = statement(
  'wallet_jobs_open_counts',
  `SELECT endpoint, count(*) AS pending, count(*) FILTER (WHERE created_at < $1) AS stuck
   FROM wallet_jobs WHERE completed_at IS NULL AND abandoned_at IS NULL GROUP BY endpoint`,
);

const ABANDONED_JOB_COUNTS = statement(
  'wallet_jobs_abandoned_counts',
  `SELECT endpoint, count(*) AS abandoned FROM wallet_jobs WHERE abandoned_at IS NOT NULL GROUP BY endpoint`,
);

export async function walletJobCounts(sql: Queryable, now: Date): Promise<{ endpoint: string; state: string; count: number }[]> {
  const stuckBefore = new Date(now.getTime() - ROLLBACK_STUCK_MS);
  const [open, abandoned] = await Promise.all([
    sql.query<{ endpoint: string; pending: bigint; stuck: bigint }>(OPEN_JOB_COUNTS, [stuckBefore]),
    sql.query<{ endpoint: string; abandoned: bigint }>(ABANDONED_JOB_COUNTS),
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

// Only open jobs run (a finished one is skipped), so only they are read: through the index of
// open jobs by id (wallet_jobs_open_id), empty in the months whose jobs are all finished,
// instead of every month's primary key (D36)
const READ_JOBS = statement(
  'wallet_jobs_read',
  `SELECT id, operator_id, session_id, endpoint, transaction_uuid, bet_id, bet_cycle_created_at, payload, last_request_uuid, last_bytes,
          last_timed_out, attempts, completed_at, abandoned_at, created_at
   FROM wallet_jobs WHERE id = ANY($1::uuid[]) AND completed_at IS NULL AND abandoned_at IS NULL`,
);

type JobRow = {
  id: string;
  operator_id: string;
  session_id: string | null;
  endpoint: WalletEndpoint;
  transaction_uuid: string;
  bet_id: string | null;
  bet_cycle_created_at: Date | null;
  payload: Record<string, unknown>;
  last_request_uuid: string | null;
  last_bytes: string | null;
  last_timed_out: boolean;
  attempts: number;
  completed_at: Date | null;
  abandoned_at: Date | null;
  created_at: Date;
};

// COMPLETE_JOBS's parameters, in the order the desk's completions (below) give their values
const C = (() => {
  const p = params();
  return {
    ids: p.one(),
    attempts: p.one(),
    unmatched: p.one(),
    now: p.one(),
    audit: p.many(AUDIT_PARAM_COUNT),
    createdAt: p.one(),
    jobsFrom: p.one(),
    jobsTo: p.one(),
    betsFrom: p.one(),
    betsTo: p.one(),
  };
})();

// Completed (fenced on not yet completed nor abandoned) with the audit rows of their calls;
// a completed win settles its bet and resolves its pending round bet, with payout 0 when the
// operator did not know the transaction (4.2). Such a win has failed the player: its job is
// ended as abandoned, a ticket for a human like one abandoned after 24 hours (D23).
const COMPLETE_JOBS = statement(
  'wallet_jobs_complete',
  `WITH input AS (SELECT * FROM unnest(${C.ids}::uuid[], ${C.attempts}::int[], ${C.unmatched}::bool[], ${C.createdAt}::timestamptz[]) AS u(id, attempts, unmatched, created_at)),
   audit AS (${completeAuditsSql(C.audit)}),
   done AS (
     UPDATE wallet_jobs j SET attempts = input.attempts, next_attempt_at = NULL, last_timed_out = false,
       completed_at = CASE WHEN input.unmatched AND j.endpoint = 'win' THEN NULL ELSE ${C.now}::timestamptz END,
       abandoned_at = CASE WHEN input.unmatched AND j.endpoint = 'win' THEN ${C.now}::timestamptz END,
       last_error = CASE WHEN input.unmatched AND j.endpoint = 'win' THEN '${UNMATCHED_WIN_ERROR}' END
     FROM input WHERE j.id = input.id AND j.created_at = input.created_at AND j.created_at BETWEEN ${C.jobsFrom}::timestamptz AND ${C.jobsTo}::timestamptz
       AND j.completed_at IS NULL AND j.abandoned_at IS NULL
     RETURNING j.id, j.endpoint, j.bet_id, j.bet_cycle_created_at, j.operator_id, j.transaction_uuid, j.payload, input.unmatched
   ),
   -- D31, D23: a win the wallet did not know is a discrepancy the operator hears of
   not_found AS (
     ${outboxInsertSql(
       'reconciliation.discrepancy',
       `(SELECT done.operator_id, ${C.now}::timestamptz AS occurred_at,
                jsonb_build_object('kind', 'win_not_found', 'roundId', done.payload->>'roundId', 'transactionUuid', done.transaction_uuid,
                  'endpoint', 'win', 'amountMicro', done.payload->>'amountMicro', 'detectedAt', ${isoSql(`${C.now}::timestamptz`)}) AS data
         FROM done WHERE done.unmatched AND done.endpoint = 'win')`,
     )}
   ),
   settled AS (
     UPDATE bets b SET status = 'SETTLED', settled_at = ${C.now}, payout_micro = CASE WHEN done.unmatched THEN 0 ELSE b.payout_micro END
     FROM done WHERE done.endpoint = 'win' AND b.id = done.bet_id AND b.cycle_created_at = done.bet_cycle_created_at
       AND b.cycle_created_at BETWEEN ${C.betsFrom}::timestamptz AND ${C.betsTo}::timestamptz AND b.status = 'ACCEPTED'
   ),
   resolved AS (
     UPDATE pending_round_bets p SET state = 'RESOLVED', resolved_at = ${C.now}
     FROM done WHERE done.endpoint = 'win' AND p.bet_id = done.bet_id AND p.cycle_created_at = done.bet_cycle_created_at
       AND p.cycle_created_at BETWEEN ${C.betsFrom}::timestamptz AND ${C.betsTo}::timestamptz AND p.state = 'HELD'
   )
   SELECT id FROM done`,
);

// createdAt, betCycleCreatedAt: the job's and its bet's months (D36: the statement reads those
// partitions alone)
type Completion = { id: string; attempts: number; unmatched: boolean; audit: AuditCompletion; createdAt: Date; betCycleCreatedAt: Date | null };

// The settle and rollback pools' desk: runs wallet jobs, the rows read and the completions
// written for many jobs at once.
export class WalletJobDesk {
  private readonly reads: Batcher<string, JobRow | undefined>;
  private readonly completions: Batcher<Completion, boolean>;

  constructor(private readonly svc: ServiceContext) {
    this.reads = new Batcher(
      async (ids) => {
        const rows = new Map((await svc.sql.query<JobRow>(READ_JOBS, [ids])).map((row) => [row.id, row]));
        return ids.map((id) => rows.get(id));
      },
      HOT_PATH_BATCH,
    );
    this.completions = new Batcher(
      async (items) => {
        const done = new Set(
          (
            await svc.sql.query<{ id: string }>(COMPLETE_JOBS, [
              items.map((i) => i.id),
              items.map((i) => i.attempts),
              items.map((i) => i.unmatched),
              svc.now(),
              ...auditParams(items.map((i) => i.audit)),
              items.map((i) => i.createdAt),
              ...keyRange(items.map((i) => i.createdAt)),
              ...keyRange(items.map((i) => i.betCycleCreatedAt)),
            ])
          ).map((row) => row.id),
        );
        return items.map((i) => done.has(i.id));
      },
      // one job twice in a statement would be completed by the first of the two
      { ...HOT_PATH_BATCH, keyOf: (item) => item.id },
    );
  }

  async run(walletJobId: string): Promise<WalletJobOutcome> {
    const { svc } = this;
    const job = await this.reads.add(walletJobId);
    if (!job || job.completed_at || job.abandoned_at) return { kind: 'skipped' };
    const endpoint = job.endpoint;
    // a success's audit row is completed with its job (COMPLETE_JOBS); any other, below
    const { audit, ...result } = await svc.wallet.call(
      {
        operatorId: job.operator_id,
        endpoint,
        fields: job.payload,
        sessionId: job.session_id ?? undefined,
        transactionUuid: job.transaction_uuid,
        // D6, 4.3: the retry of a timed-out call reuses its requestUuid and bytes
        retryOf:
          job.last_timed_out && job.last_request_uuid && job.last_bytes
            ? { requestUuid: job.last_request_uuid, bytes: job.last_bytes, attempt: job.attempts }
            : undefined,
      },
      { deferAudit: true },
    );
    const now = svc.now();
    const attempts = job.attempts + 1;

    // contract 7.1: success, or (win and rollback) a transaction the operator does not know,
    // which is alerted and treated as settled
    if (result.statusClass === 'success' || result.statusClass === 'treat_as_settled') {
      if (result.statusClass === 'treat_as_settled') {
        svc.logger.error({ walletJobId, endpoint, transactionUuid: job.transaction_uuid }, 'wallet does not know the referenced transaction; treated as settled');
      }
      const unmatched = result.statusClass === 'treat_as_settled';
      const done = await this.completions.add({
        id: job.id,
        attempts,
        unmatched,
        audit,
        createdAt: job.created_at,
        betCycleCreatedAt: job.bet_cycle_created_at,
      });
      svc.metrics.walletJobAttempts.inc({ endpoint, outcome: unmatched ? 'treated_as_settled' : 'completed' });
      if (done && unmatched && endpoint === 'win') {
        winFailed(svc, { sessionId: job.session_id, betId: job.bet_id, payload: job.payload }, `wallet_rejected:${UNMATCHED_WIN_ERROR}`);
        return { kind: 'abandoned' };
      }
      if (done && job.session_id && result.balanceMicro !== undefined) {
        // contract 6.4: a wallet call that changes the balance emits balance_update
        svc.emitter.toSession(job.session_id, 'balance_update', {
          balanceMicro: result.balanceMicro.toString(),
          currency: result.currency ?? (job.payload as { currency?: string }).currency,
        });
      }
      return { kind: 'completed' };
    }

    await svc.wallet.audit.complete(audit);
    const error = `${result.status}${result.httpStatus ? ` (HTTP ${result.httpStatus})` : ''}`;
    const age = now.getTime() - job.created_at.getTime();
    if (age >= WALLET_RETRY_BUDGET_MS) {
      await abandon(svc, job, attempts, error, now);
      svc.metrics.walletJobAttempts.inc({ endpoint, outcome: 'abandoned' });
      return { kind: 'abandoned' };
    }
    const delayMs = walletRetryDelayMs(attempts);
    await svc.sql.query(RETRY_JOB, [
      job.id,
      job.created_at,
      attempts,
      error,
      new Date(now.getTime() + delayMs),
      result.requestUuid,
      result.bytes,
      result.timedOut,
    ]);
    if (endpoint === 'rollback' && age >= ROLLBACK_STUCK_MS) {
      svc.logger.warn({ walletJobId, transactionUuid: job.transaction_uuid, attempts, error }, 'rollback stuck for over 5 minutes');
    }
    svc.metrics.walletJobAttempts.inc({ endpoint, outcome: 'retried' });
    return { kind: 'retry', delayMs, error };
  }
}

// An attempt that failed, recorded for the next (D6: a timed-out call's requestUuid and
// bytes are resent); created_at names the job's month (D36)
const RETRY_JOB = statement(
  'wallet_jobs_retry',
  `UPDATE wallet_jobs SET attempts = $3, last_error = $4, next_attempt_at = $5, last_request_uuid = $6, last_bytes = $7, last_timed_out = $8
   WHERE id = $1 AND created_at = $2`,
);

// The statements of an abandonment, in one transaction (abandon, below). The job is fenced
// on being neither completed nor abandoned; every other row is named with its month (D36).
const ABANDON_JOB = statement(
  'wallet_jobs_abandon',
  `UPDATE wallet_jobs SET attempts = $3, last_error = $4, abandoned_at = $5, next_attempt_at = NULL
   WHERE id = $1 AND created_at = $2 AND completed_at IS NULL AND abandoned_at IS NULL
   RETURNING id`,
);

const ABANDONED_BET = statement(
  'wallet_jobs_abandoned_bet',
  `SELECT id, round_id, session_id, cycle_created_at, operator_id, player_ref, currency, game_code, bet_transaction_uuid, amount_micro,
          is_free, payout_micro
   FROM bets WHERE id = $1`,
);

type AbandonedBet = {
  id: string;
  round_id: string;
  session_id: string;
  cycle_created_at: Date;
  operator_id: string;
  player_ref: string;
  currency: string;
  game_code: string;
  bet_transaction_uuid: string;
  amount_micro: bigint;
  is_free: boolean;
  payout_micro: bigint | null;
};

const VOID_BET = statement(
  'wallet_jobs_void_bet',
  `UPDATE bets SET status = 'VOIDED', voided_at = $3, rollback_transaction_uuid = $4
   WHERE id = $1 AND cycle_created_at = $2 AND status = 'ACCEPTED'
   RETURNING id`,
);

const VOID_ROUND = statement(
  'wallet_jobs_void_round',
  `UPDATE rounds SET state = 'VOIDED', voided_at = $3, void_reason = 'win_exhausted'
   WHERE id = $1 AND cycle_created_at = $2
   RETURNING id, operator_id, session_id, game_code, currency`,
);

const REFUND_HELD_STAKE = statement(
  'wallet_jobs_refund_held_stake',
  `UPDATE pending_round_bets SET state = 'REFUNDED', resolution_reason = 'ROUND_VOIDED', resolved_at = $3
   WHERE bet_id = $1 AND cycle_created_at = $2 AND state = 'HELD'`,
);

const INSERT_ROLLBACK_JOB = statement(
  'wallet_jobs_insert_rollback',
  `INSERT INTO wallet_jobs (id, operator_id, session_id, endpoint, purpose, bet_id, bet_cycle_created_at, transaction_uuid, next_attempt_at,
                           payload)
   VALUES ($1, $2, $3, 'rollback', $4, $5, $6, $7, $8, $9::jsonb)
   RETURNING id, endpoint`,
);

// D31: one event of the operator, written in the transaction that makes the change it reports
const eventStatement = (name: string, type: EventType) =>
  statement(
    name,
    `WITH input AS (SELECT $1::text AS operator_id, $2::timestamptz AS occurred_at, $3::jsonb AS data)
   ${outboxInsertSql(type, 'input')}`,
  );
const DISCREPANCY_EVENT = eventStatement('wallet_jobs_discrepancy_event', 'reconciliation.discrepancy');
const ROUND_VOIDED_EVENT = eventStatement('wallet_jobs_round_voided_event', 'round.voided');

// contract 3.4: abandoned after 24 hours of failed retries, the row kept for a human. A
// win that exhausts its budget refunds the stake and voids the round (4.2); nothing is
// reversed for the win itself, and a connected player is told (win_failed, D23).
async function abandon(svc: ServiceContext, job: JobRow, attempts: number, error: string, now: Date): Promise<void> {
  let abandoned = false;
  // D42: a free bet voided here gives its grant's round back; its session is told after the commit
  let freeSession: string | undefined;
  const refund = await svc.sql.transaction(async (tx) => {
    const fenced = await tx.query(ABANDON_JOB, [job.id, job.created_at, attempts, error, now]);
    abandoned = fenced.length > 0;
    if (!abandoned || !job.bet_id) return null;
    const [bet] = await tx.query<AbandonedBet>(ABANDONED_BET, [job.bet_id]);
    if (!bet) throw new Error(`wallet job ${job.id}: its bet ${job.bet_id} does not exist`);
    // D31: the operator hears of a call given up in the transaction that gives it up
    const discrepancy: EventData['reconciliation.discrepancy'] = {
      kind: job.endpoint === 'win' ? 'win_abandoned' : 'rollback_abandoned',
      roundId: bet.round_id,
      transactionUuid: job.transaction_uuid,
      endpoint: job.endpoint === 'win' ? 'win' : 'rollback',
      // the win's amount, or the stake the rollback would have returned
      amountMicro: job.endpoint === 'win' ? (bet.payout_micro ?? 0n).toString() : (bet.is_free ? 0n : bet.amount_micro).toString(),
      detectedAt: now.toISOString(),
    };
    await tx.query(DISCREPANCY_EVENT, [job.operator_id, now, JSON.stringify(discrepancy)]);
    if (job.endpoint !== 'win') return null;
    const rollbackTransactionUuid = randomUUID();
    const voided = await tx.query(VOID_BET, [bet.id, bet.cycle_created_at, now, rollbackTransactionUuid]);
    if (voided.length === 0) return null;
    freeSession = bet.is_free ? bet.session_id : undefined;
    const [round] = await tx.query<{ id: string; operator_id: string; session_id: string; game_code: string; currency: string }>(VOID_ROUND, [
      bet.round_id,
      bet.cycle_created_at,
      now,
    ]);
    if (!round) throw new Error(`wallet job ${job.id}: its round ${bet.round_id} does not exist`);
    const voidedData = roundVoidedData(
      { id: round.id, sessionId: round.session_id, gameCode: round.game_code, currency: round.currency },
      { amountMicro: bet.amount_micro, isFree: bet.is_free },
      'win_exhausted',
      now,
    );
    await tx.query(ROUND_VOIDED_EVENT, [round.operator_id, now, JSON.stringify(voidedData)]);
    await tx.query(REFUND_HELD_STAKE, [bet.id, bet.cycle_created_at, now]);
    const data = rollbackJobData(
      {
        id: bet.id,
        sessionId: bet.session_id,
        cycleCreatedAt: bet.cycle_created_at,
        operatorId: bet.operator_id,
        playerRef: bet.player_ref,
        currency: bet.currency,
        gameCode: bet.game_code,
        betTransactionUuid: bet.bet_transaction_uuid,
        roundId: bet.round_id,
      },
      rollbackTransactionUuid,
      'win_exhausted',
      now,
    );
    const [created] = await tx.query<{ id: string; endpoint: string }>(INSERT_ROLLBACK_JOB, [
      data.id,
      data.operatorId,
      data.sessionId,
      data.purpose,
      data.betId,
      data.betCycleCreatedAt,
      data.transactionUuid,
      data.nextAttemptAt,
      JSON.stringify(data.payload),
    ]);
    return created!;
  });
  svc.logger.error({ walletJobId: job.id, endpoint: job.endpoint, transactionUuid: job.transaction_uuid, attempts, error }, 'wallet job abandoned after 24 hours: a human must look at it');
  if (abandoned && job.endpoint === 'win') winFailed(svc, { sessionId: job.session_id, betId: job.bet_id, payload: job.payload }, 'win_exhausted');
  if (refund) await enqueueWalletJob(svc, refund);
  if (refund && freeSession) await tellFreeBetSessions(svc, [freeSession]);
}

// The settle and rollback pools' job handlers (workers/registry.ts binds them to rgs-settle and
// rgs-rollback); the desk batches the reads and completions of one worker's jobs.
export type WalletJobScope = { svc: ServiceContext; desk: WalletJobDesk };

// A queue job of one wallet job retries itself with the delay the job computed (contract
// 3.4, the wallet backoff of workers/registry.ts).
export async function runOneWalletJob({ desk }: WalletJobScope, job: Job<WalletJobRef>): Promise<string> {
  const outcome = await desk.run(job.data.walletJobIds[0]!);
  if (outcome.kind === 'retry') {
    await job.updateData({ ...job.data, retryDelayMs: outcome.delayMs });
    throw new Error(outcome.error);
  }
  return outcome.kind;
}

// In a batch of first attempts, each wallet job that must be retried is queued on its own,
// so that the others are not held back or repeated.
export const walletBatch = (endpoint: 'win' | 'rollback') =>
  async function runWalletBatch({ svc, desk }: WalletJobScope, job: Job<WalletJobRef>): Promise<'batch'> {
    await Promise.all(
      job.data.walletJobIds.map(async (id) => {
        const outcome = await desk.run(id).catch((err: unknown) => {
          svc.logger.warn({ walletJobId: id, err: (err as Error).message }, 'wallet job failed; retried on its own');
          return { kind: 'retry', delayMs: walletRetryDelayMs(1) } as const;
        });
        if (outcome.kind === 'retry') await enqueueWalletJob(svc, { id, endpoint }, outcome.delayMs);
      }),
    );
    return 'batch';
  };
