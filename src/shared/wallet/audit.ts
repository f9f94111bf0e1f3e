import { Batcher, HOT_PATH_BATCH } from '../platform/batch.js';
import type { Db } from '../platform/db/client.js';
import { keyRange, params, statement, type Sql } from '../platform/db/sql.js';
import type { RsStatus, WalletEndpoint } from '../domain/wallet-status.js';

// The audit trail of wallet calls (contract 2.13): every statement that writes or reads
// wallet_calls is here. A call's row is written before its request is sent and completed
// with the answer. The rows of calls made at the same moment are written by one statement
// (which also reads where each operator's wallet is and which credential signs for it) and
// completed by another. A statement of the game that records what an answer means may
// complete the call's row itself (completeAuditsSql), and the statement that places a bet
// may write its debit's row (debitAuditRowsSql): one round trip and one commit less.

// what completes a call's audit row (contract 2.13: updated with the response)
// (status null: the call was refused before it was sent, D25)
// (responseBody: the answer as received, D32 and D33; null when nothing answered)
export type AuditCompletion = {
  id: string;
  httpStatus: number | null;
  status: RsStatus | null;
  latencyMs: number;
  error: string | null;
  respondedAt: Date;
  responseBody: string | null;
  // when the row was written: its month, the wallet_calls partition key (D36), so that the
  // completion reads that month's partition alone
  createdAt: Date;
};

// written to the audit row of a call an open circuit refused (the wallet-calls report counts them)
export const CIRCUIT_OPEN_ERROR = 'circuit_open';

export const AUDIT_PARAM_COUNT = 10;

// Completes audit rows; a caller embeds it as a CTE of its own statement, in the
// AUDIT_PARAM_COUNT parameters the statement declared for it (db/sql.ts params().many);
// auditParams gives their values, in order.
export const completeAuditsSql = ($: readonly string[]) => {
  if ($.length !== AUDIT_PARAM_COUNT) throw new Error(`the audit completion takes ${AUDIT_PARAM_COUNT} parameters, not ${$.length}`);
  return `UPDATE wallet_calls w
   SET http_status = a.http_status, status = a.status, latency_ms = a.latency_ms, error = a.error, responded_at = a.responded_at,
       response_body = a.response_body
   FROM unnest(${$[0]}::uuid[], ${$[1]}::int[], ${$[2]}::text[], ${$[3]}::int[], ${$[4]}::text[],
               ${$[5]}::timestamptz[], ${$[6]}::text[], ${$[7]}::timestamptz[])
     AS a(id, http_status, status, latency_ms, error, responded_at, response_body, created_at)
   WHERE w.id = a.id AND w.created_at = a.created_at AND w.created_at BETWEEN ${$[8]}::timestamptz AND ${$[9]}::timestamptz`;
};


export const auditParams = (audits: AuditCompletion[]): unknown[] => [
  audits.map((a) => a.id),
  audits.map((a) => a.httpStatus),
  audits.map((a) => a.status),
  audits.map((a) => a.latencyMs),
  audits.map((a) => a.error),
  audits.map((a) => a.respondedAt),
  audits.map((a) => a.responseBody),
  audits.map((a) => a.createdAt),
  ...keyRange(audits.map((a) => a.createdAt)),
];

// The operator's wallet address and the newest credential valid at the row's moment (D6: a
// rotation or a revocation applies to the very next call), for each row of `rows` (a CTE
// with id, operator_id and at columns), and whether it may be on a private network (D25).
export const walletTargetSql = (rows: string) =>
  `SELECT ${rows}.id, o.wallet_url, o.wallet_url_private_allowed, c.kid, c.encrypted_secret, c.wrapped_data_key
   FROM ${rows} JOIN operators o ON o.id = ${rows}.operator_id
   JOIN LATERAL (
     SELECT kid, encrypted_secret, wrapped_data_key FROM credentials
     WHERE operator_id = ${rows}.operator_id AND kind = 'WALLET' AND revoked_at IS NULL
       AND not_before <= ${rows}.at AND (not_after IS NULL OR ${rows}.at <= not_after)
     ORDER BY not_before DESC
     LIMIT 1
   ) c ON true`;

// what walletTargetSql reads of one row
export type WalletTargetRow = { wallet_url: string; wallet_url_private_allowed: boolean; kid: string; encrypted_secret: Buffer; wrapped_data_key: Buffer };

// The first attempts of debits (contract 2.6), from `rows` (a CTE with id, operator_id,
// session_id, request_uuid, bet_transaction_uuid, request_body) joined to their wallet
// target (`target`, from walletTargetSql): a debit whose operator has no valid credential
// gets no row, and is not sent.
export const debitAuditRowsSql = (rows: string, target: string) =>
  `INSERT INTO wallet_calls (id, operator_id, session_id, direction, endpoint, request_uuid, transaction_uuid, attempt, request_body)
   SELECT ${rows}.id, ${rows}.operator_id, ${rows}.session_id, 'OUT', 'bet', ${rows}.request_uuid, ${rows}.bet_transaction_uuid, 1, ${rows}.request_body
   FROM ${rows} JOIN ${target} ON ${target}.id = ${rows}.id
   RETURNING id, created_at`;

// contract 2.13: the audit row, before the call, with its wallet's target
const INSERT_AUDIT_ROWS = statement(
  'wallet_audit_insert',
  `WITH u AS (
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::uuid[], $6::uuid[], $7::int[], $8::text[], $9::uuid[],
                          $10::timestamptz[])
       AS u(id, operator_id, session_id, endpoint, request_uuid, transaction_uuid, attempt, request_body, pending_bet_id, at)
   ),
   target AS (${walletTargetSql('u')}),
   written AS (
     INSERT INTO wallet_calls (id, operator_id, session_id, direction, endpoint, request_uuid, transaction_uuid, attempt, request_body)
     SELECT u.id, u.operator_id, u.session_id, 'OUT', u.endpoint, u.request_uuid, u.transaction_uuid, u.attempt, u.request_body
     FROM u JOIN target ON target.id = u.id
     WHERE u.pending_bet_id IS NULL OR EXISTS (SELECT 1 FROM bets b WHERE b.id = u.pending_bet_id AND b.status = 'PENDING')
     RETURNING id, created_at
   )
   SELECT target.*, written.id IS NOT NULL AS written, written.created_at FROM target LEFT JOIN written ON written.id = target.id`,
);

// ... and completed with the response
const COMPLETE_AUDIT_ROWS = statement('wallet_audit_complete', completeAuditsSql(params().many(AUDIT_PARAM_COUNT)));

export type AuditRow = {
  id: string;
  operatorId: string;
  sessionId: string | null;
  endpoint: WalletEndpoint;
  requestUuid: string;
  transactionUuid: string | null;
  attempt: number;
  requestBody: string;
  // the row is written only while this bet is still PENDING (a debit's own fence)
  pendingBetId: string | null;
  // the service clock, for the credential's validity
  at: Date;
};

// the row is written (and the call may go out to `target`), it is not (its bet is no
// longer PENDING), or it cannot be (the operator has no valid wallet credential)
export type AuditWrite = { kind: 'written'; target: WalletTargetRow; createdAt: Date } | { kind: 'not_pending' } | { kind: 'no_target' };

type TargetRow = WalletTargetRow & { id: string; written: boolean; created_at: Date | null };

// The audit rows of the calls of one process, written and completed in batches.
export class AuditLog {
  private readonly inserts: Batcher<AuditRow, AuditWrite>;
  private readonly completions: Batcher<AuditCompletion, undefined>;

  constructor(sql: Sql) {
    this.inserts = new Batcher(async (rows) => {
      const targets = new Map(
        (
          await sql.query<TargetRow>(INSERT_AUDIT_ROWS, [
            rows.map((r) => r.id),
            rows.map((r) => r.operatorId),
            rows.map((r) => r.sessionId),
            rows.map((r) => r.endpoint),
            rows.map((r) => r.requestUuid),
            rows.map((r) => r.transactionUuid),
            rows.map((r) => r.attempt),
            rows.map((r) => r.requestBody),
            rows.map((r) => r.pendingBetId),
            rows.map((r) => r.at),
          ])
        ).map((row) => [row.id, row]),
      );
      return rows.map((r): AuditWrite => {
        const row = targets.get(r.id);
        if (!row) return { kind: 'no_target' };
        if (!row.written) return { kind: 'not_pending' };
        const { wallet_url, wallet_url_private_allowed, kid, encrypted_secret, wrapped_data_key } = row;
        return {
          kind: 'written',
          target: { wallet_url, wallet_url_private_allowed, kid, encrypted_secret, wrapped_data_key },
          createdAt: row.created_at!,
        };
      });
    }, HOT_PATH_BATCH);
    this.completions = new Batcher(async (rows) => {
      await sql.query(COMPLETE_AUDIT_ROWS, auditParams(rows));
      return rows.map(() => undefined);
    }, HOT_PATH_BATCH);
  }

  write(row: AuditRow): Promise<AuditWrite> {
    return this.inserts.add(row);
  }

  // a call whose answer the caller records without a statement of its own to complete the row in
  complete(audit: AuditCompletion): Promise<undefined> {
    return this.completions.add(audit);
  }
}

// whether any attempt of this transaction was written (a debit's redelivery asks: its
// earlier delivery may have sent the call, contract 7.1)
export async function hasAttempt(db: Db, transactionUuid: string, endpoint: WalletEndpoint): Promise<boolean> {
  return (await db.walletCall.findFirst({ where: { transactionUuid, endpoint }, select: { id: true } })) !== null;
}

// the calls of these transactions, in the order they were made (the round view, D10)
export function callsOfTransactions(db: Db, operatorId: string, transactionUuids: string[]) {
  return db.walletCall.findMany({
    where: { operatorId, transactionUuid: { in: transactionUuids } },
    orderBy: [{ createdAt: 'asc' }, { attempt: 'asc' }, { id: 'asc' }],
  });
}

// Per endpoint, the calls whose audit row was written in [from, to) (the wallet-calls
// report, D10): ok is RS_OK or RS_ERROR_DUPLICATE_TRANSACTION (contract 7.1 success);
// percentiles are percentile_disc, so always a latency that was observed; openCircuit counts
// the rows of calls an open circuit refused (CIRCUIT_OPEN_ERROR, contract 3.4).
export type CallAggregate = { endpoint: string; calls: bigint; ok: bigint; openCircuit: bigint; p50: number | null; p99: number | null };

// (a Date goes as ISO text cast to timestamptz: the pg adapter would send it without its zone)
export function callAggregates(db: Db, operatorId: string, range: { from: Date; to: Date }): Promise<CallAggregate[]> {
  return db.$queryRaw<CallAggregate[]>`
    SELECT endpoint,
      count(*) AS calls,
      count(*) FILTER (WHERE status IN ('RS_OK', 'RS_ERROR_DUPLICATE_TRANSACTION')) AS ok,
      count(*) FILTER (WHERE error = ${CIRCUIT_OPEN_ERROR}) AS "openCircuit",
      percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50,
      percentile_disc(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99
    FROM wallet_calls
    WHERE operator_id = ${operatorId} AND created_at >= ${range.from.toISOString()}::timestamptz AND created_at < ${range.to.toISOString()}::timestamptz
    GROUP BY endpoint`;
}
