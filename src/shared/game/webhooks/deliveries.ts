import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import { publicWebhookFailure } from '../../domain/webhook-failure.js';
import { recordTestEvent } from '../../platform/outbox.js';
import { encodeCursor, type ListingPosition } from '../reports/cursor.js';
import { queueDelivery } from './delivery.js';

// D31, D38: what an operator sees of, and asks of, its webhook deliveries through the signed
// API: a test event, the deliveries newest first, a redelivery.

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export type DeliveryView = {
  eventId: string;
  eventType: string;
  occurredAt: string;
  status: DeliveryStatus;
  attempts: number;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
};

export type DeliveryPage = { deliveries: DeliveryView[]; nextCursor: string | null };

type Row = {
  id: string;
  event_type: string;
  occurred_at: Date;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
};

// newest first through webhook_events_operator_id_occurred_at_id_idx; the keyset after the
// cursor's (occurred_at, id), and the status when asked
const LIST = statement(
  'webhook_deliveries_list',
  `SELECT id, event_type, occurred_at, status, attempts, last_attempt_at, last_status_code, last_error, next_attempt_at
   FROM webhook_events
   WHERE operator_id = $1 AND ($2::text IS NULL OR status = $2)
     AND ($3::timestamptz IS NULL OR (occurred_at, id) < ($3::timestamptz, $4::uuid))
   ORDER BY occurred_at DESC, id DESC
   LIMIT $5`,
);

const ENABLED_ENDPOINT = statement('webhook_endpoint_enabled', `SELECT 1 AS enabled FROM webhook_endpoints WHERE operator_id = $1 AND enabled`);

// a new attempt of the same event (same eventId, same bytes), due now, whatever its state
const REDELIVER = statement(
  'webhook_redeliver',
  `UPDATE webhook_events SET status = 'pending', next_attempt_at = $3, delivered_at = NULL, failed_at = NULL
   WHERE id = $1 AND operator_id = $2
   RETURNING attempts`,
);

const OWNED = statement('webhook_event_owned', `SELECT 1 AS found FROM webhook_events WHERE id = $1 AND operator_id = $2`);

const view = (row: Row): DeliveryView => ({
  eventId: row.id,
  eventType: row.event_type,
  occurredAt: row.occurred_at.toISOString(),
  status: row.status,
  attempts: row.attempts,
  lastAttemptAt: row.last_attempt_at?.toISOString() ?? null,
  lastStatusCode: row.last_status_code,
  // D24: a category only, even on a row written before categories were stored
  lastError: publicWebhookFailure(row.last_error),
  nextAttemptAt: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
});

export async function listDeliveries(
  svc: Pick<ServiceContext, 'sql'>,
  operatorId: string,
  query: { status?: DeliveryStatus; after?: ListingPosition; limit: number },
): Promise<DeliveryPage> {
  const rows = await svc.sql.query<Row>(LIST, [operatorId, query.status ?? null, query.after?.at ?? null, query.after?.id ?? null, query.limit + 1]);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    deliveries: page.map(view),
    nextCursor: rows.length > query.limit && last ? encodeCursor({ at: last.occurred_at, id: last.id }) : null,
  };
}

export async function hasEnabledEndpoint(svc: Pick<ServiceContext, 'sql'>, operatorId: string): Promise<boolean> {
  return (await svc.sql.query(ENABLED_ENDPOINT, [operatorId])).length > 0;
}

// POST /v1/webhooks/test: a webhook.test event, delivered like any other; null when the
// operator has no enabled endpoint
export async function sendTestEvent(svc: ServiceContext, operatorId: string): Promise<string | null> {
  const now = svc.now();
  const eventId = await recordTestEvent(svc.db, operatorId, now);
  // the sweep would find it too; queued here, it goes at once
  if (eventId) await queueDelivery(svc, eventId, 0, now);
  return eventId;
}

// POST /v1/webhooks/deliveries/{eventId}/redeliver. 'not_found': no event of this operator
// with the id (another operator's reads as unknown, D10); 'not_configured': no enabled
// endpoint to send it to.
export async function redeliver(svc: ServiceContext, operatorId: string, eventId: string): Promise<'queued' | 'not_found' | 'not_configured'> {
  if ((await svc.sql.query(OWNED, [eventId, operatorId])).length === 0) return 'not_found';
  if (!(await hasEnabledEndpoint(svc, operatorId))) return 'not_configured';
  const now = svc.now();
  const [row] = await svc.sql.query<{ attempts: number }>(REDELIVER, [eventId, operatorId, now]);
  if (!row) return 'not_found';
  await queueDelivery(svc, eventId, row.attempts, now);
  return 'queued';
}
