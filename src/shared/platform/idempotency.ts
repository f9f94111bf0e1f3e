import type { Queryable } from './db/sql.js';
// DECISIONS D17: the store of inbound idempotency keys, (operatorId, requestUuid, endpoint).
// The api role's middleware claims a key before the handler runs; what completes it with
// the response lives here, so that a handler whose effect is one statement can complete
// the key in that same statement (see IdempotencyClaim).

export type IdempotencyKey = [operatorId: string, requestUuid: string, endpoint: string];

// A key this request owns. A handler that folds the completion into the statement that
// makes its effect sets `completed`: the effect and the response to replay then commit
// together, or neither does, and the middleware has nothing left to write.
export type IdempotencyClaim = { key: IdempotencyKey; completed: boolean };

export const IDEMPOTENCY_PARAM_COUNT = 5;

// Completes a claimed key with the response to replay; a caller embeds it in its own
// statement, in the IDEMPOTENCY_PARAM_COUNT parameters it declared for it (db/sql.ts
// params().many); completionParams gives their values, in order.
export const completeIdempotencySql = ($: readonly string[]) => {
  if ($.length !== IDEMPOTENCY_PARAM_COUNT) throw new Error(`the key's completion takes ${IDEMPOTENCY_PARAM_COUNT} parameters, not ${$.length}`);
  const [operatorId, requestUuid, endpoint, status, body] = $;
  return `UPDATE idempotency_entries SET state = 'COMPLETED', response_status = ${status}::int, response_body = ${body}::jsonb
   WHERE operator_id = ${operatorId}::text AND request_uuid = ${requestUuid}::uuid AND endpoint = ${endpoint}::text`;
};

// without a claim (the request carried no requestUuid) the parameters match no row
export const completionParams = (claim: IdempotencyClaim | undefined, status: number, body: unknown): unknown[] =>
  claim ? [...claim.key, status, JSON.stringify(body ?? null)] : [null, null, null, null, null];

// D17 keeps a key for 24 hours; a claim drops its own key once expired, and the scheduler
// leader sweeps the rest (every key whose operator never sent its requestUuid again), in
// batches through the expires_at index so that no statement holds many locks. The table is
// not partitioned (D36: a key carries no month), so this sweep is what bounds it.
const EXPIRED_BATCH = 5000;
export async function dropExpiredIdempotencyKeys(sql: Queryable, now: Date): Promise<number> {
  let dropped = 0;
  for (;;) {
    const rows = await sql.query(
      `DELETE FROM idempotency_entries WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM idempotency_entries WHERE expires_at <= $1 ORDER BY expires_at LIMIT ${EXPIRED_BATCH}))
       RETURNING 1`,
      [now],
    );
    dropped += rows.length;
    if (rows.length < EXPIRED_BATCH) return dropped;
  }
}
