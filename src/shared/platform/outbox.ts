import { randomUUID } from 'node:crypto';
import type { EventData, EventType } from '../domain/events.js';

// D31: the transactional outbox. An event is written by the statement, or in the
// transaction, that makes the change it reports: it exists exactly when the change
// committed, and the webhooks role delivers it from Postgres (Redis only carries the
// delivery jobs). A row is written only for an operator whose enabled endpoint takes the
// event's type, so an operator without webhooks costs a lookup and nothing more. The first
// attempt is due at once.

// An INSERT of events of one type from `rows`: a CTE or subquery with operator_id,
// occurred_at (timestamptz), data (jsonb) and, with `dedupe`, dedupe_key columns. A caller
// embeds it as a CTE of its own statement. An event whose dedupe key was written before is
// not written again: with `dedupe`, the statement also carries outboxDedupeCte(type, rows),
// and only the events whose key it claimed are written.
export const outboxInsertSql = (type: EventType, rows: string, { dedupe = false } = {}) =>
  `INSERT INTO webhook_events (id, operator_id, event_type, occurred_at, data, dedupe_key, next_attempt_at)
   SELECT ${dedupe ? 'DISTINCT ON (x.dedupe_key)' : ''} gen_random_uuid(), x.operator_id, '${type}', x.occurred_at, x.data,
          ${dedupe ? 'x.dedupe_key' : 'NULL'}, x.occurred_at
   FROM ${rows} x JOIN webhook_endpoints e ON e.operator_id = x.operator_id AND e.enabled AND '${type}' = ANY(e.events)
   ${dedupe ? 'WHERE x.dedupe_key IN (SELECT dedupe_key FROM dedupe_claimed)' : ''}`;

// D36: the dedupe keys of events about to be written, claimed in webhook_dedupe_keys: the
// events are partitioned by month and a key carries none, so the rule "once ever" is kept by
// this unpartitioned table. A CTE `dedupe_claimed` of the statement that writes the events.
export const outboxDedupeCte = (type: EventType, rows: string) =>
  `dedupe_claimed AS (
     INSERT INTO webhook_dedupe_keys (dedupe_key, created_at)
     SELECT DISTINCT x.dedupe_key, now() FROM ${rows} x
     JOIN webhook_endpoints e ON e.operator_id = x.operator_id AND e.enabled AND '${type}' = ANY(e.events)
     WHERE x.dedupe_key IS NOT NULL
     ON CONFLICT DO NOTHING
     RETURNING dedupe_key
   )`;

// An ISO 8601 instant in UTC with milliseconds, as Date.toISOString() writes it, of a
// timestamptz expression (event data carries times as strings, contract 6)
export const isoSql = (expression: string) => `to_char((${expression}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

// what runs a statement: a Prisma client or transaction, or anything with its $executeRawUnsafe
type Executor = { $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number> };

const ONE_EVENT = (type: EventType, dedupe: boolean) =>
  `WITH input AS (SELECT $1::text AS operator_id, $2::timestamptz AS occurred_at, $3::jsonb AS data, $4::text AS dedupe_key)
   ${dedupe ? `, ${outboxDedupeCte(type, 'input')}` : ''}
   ${outboxInsertSql(type, 'input', { dedupe })}`;

// One event, in the caller's transaction (`tx`). Returns whether a row was written (false:
// the operator's endpoint does not take it, or its dedupe key was written before).
export async function recordEvent<T extends EventType>(
  tx: Executor,
  type: T,
  operatorId: string,
  occurredAt: Date,
  data: EventData[T],
  dedupeKey?: string,
): Promise<boolean> {
  const written = await tx.$executeRawUnsafe(ONE_EVENT(type, dedupeKey !== undefined), operatorId, occurredAt, JSON.stringify(data), dedupeKey ?? null);
  return written > 0;
}

// webhook.test (D31) is written for the endpoint whatever events it takes; its id is the
// answer of POST /v1/webhooks/test
export async function recordTestEvent(tx: Executor, operatorId: string, occurredAt: Date): Promise<string | null> {
  const id = randomUUID();
  const written = await tx.$executeRawUnsafe(
    `INSERT INTO webhook_events (id, operator_id, event_type, occurred_at, data, next_attempt_at)
     SELECT $1::uuid, e.operator_id, 'webhook.test', $3::timestamptz, '{}'::jsonb, $3::timestamptz
     FROM webhook_endpoints e WHERE e.operator_id = $2 AND e.enabled`,
    id,
    operatorId,
    occurredAt,
  );
  return written > 0 ? id : null;
}
