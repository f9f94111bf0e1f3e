import type { ServiceContext } from '../../platform/context.js';
import { statement } from '../../platform/db/sql.js';
import { webhookBody } from '../../domain/events.js';
import { walletTargetSql } from '../../wallet/audit.js';
import { CredentialUnreadableError, revealSecret } from '../../wallet/credentials.js';
import { OutboundHttp, type SendOutcome } from '../../wallet/outbound.js';
import { DELIVERY_TIMEOUT_MS, nextAttempt } from './schedule.js';

// D31: the delivery of webhook events. Postgres holds every event and its delivery state
// (webhook_events, written by the outbox, platform/outbox.ts); Redis only carries the
// `deliver` jobs, each one attempt of one event. An attempt:
//   1. claims the event: pending, due, its endpoint enabled, and not held by another attempt
//      (a lease that a crashed deliverer's attempt lets lapse), and in the same statement
//      counts the attempt and writes its webhook_attempts row, so that two jobs of one
//      attempt, or a sweep racing a job, never send twice at once;
//   2. sends the envelope (webhookBody: the same bytes every attempt), signed like a wallet
//      call with the operator's current wallet credential (D6), through the one outbound
//      path (wallet/outbound.ts), behind the endpoint's circuit (as a wallet's, P13);
//   3. records the result in one statement: delivered, due again per the schedule
//      (schedule.ts), or failed once 72 hours after the event are spent; and queues the
//      next attempt's job.
// The sweep (every SWEEP_INTERVAL_MS in each webhooks process) queues a job for every event
// that is due and not held: how new events are picked up (they are written by any process,
// none of which queues), and how delivery resumes after Redis lost its jobs or a deliverer
// died mid-attempt. Delivery is at least once: a receiver dedupes on eventId.

// an attempt holds its event this long: the send's timeout and the two statements around it
const LEASE_MS = 30_000;
export const SWEEP_INTERVAL_MS = 2000;
// events queued per sweep; the next sweep takes the rest
const SWEEP_LIMIT = 500;
// D24: a receiver's answer is read up to this and ignored (only its status code counts)
const ANSWER_MAX_BYTES = 4096;
// the circuit's name for an operator's webhook endpoint (one circuit per endpoint, D31)
export const WEBHOOK_CIRCUIT = 'webhook';
// an attempt that an open circuit stopped is due again after about this long
const CIRCUIT_RETRY_MS = 30_000;

// Claims a due event and starts its attempt. The event's endpoint and the operator's current
// wallet credential come with it (walletTargetSql: the credential a wallet call made now
// would be signed with); no credential row: the attempt cannot be signed.
const CLAIM = statement(
  'webhook_claim',
  `WITH claimed AS (
     UPDATE webhook_events ev
     SET locked_until = $2::timestamptz + make_interval(secs => $3::int / 1000.0), attempts = ev.attempts + 1, last_attempt_at = $2
     FROM webhook_endpoints w
     WHERE ev.id = $1 AND ev.status = 'pending' AND ev.next_attempt_at <= $2 AND (ev.locked_until IS NULL OR ev.locked_until < $2)
       AND w.operator_id = ev.operator_id AND w.enabled
     RETURNING ev.id, ev.operator_id, ev.event_type, ev.occurred_at, ev.data, ev.attempts, ev.locked_until, w.url, w.url_private_allowed,
       $2::timestamptz AS at, ev.created_at AS event_created_at
   ),
   attempt AS (
     INSERT INTO webhook_attempts (event_id, attempt, url, started_at, event_created_at)
     SELECT id, attempts, url, at, event_created_at FROM claimed
   ),
   target AS (${walletTargetSql('claimed')})
   SELECT claimed.*, target.kid, target.encrypted_secret, target.wrapped_data_key FROM claimed LEFT JOIN target ON target.id = claimed.id`,
);

type Claimed = {
  id: string;
  operator_id: string;
  event_type: string;
  occurred_at: Date;
  data: unknown;
  attempts: number;
  locked_until: Date;
  url: string;
  url_private_allowed: boolean;
  at: Date;
  kid: string | null;
  encrypted_secret: Buffer | null;
  wrapped_data_key: Buffer | null;
};

// The attempt's result, on its row and on the event, in one statement. Only the attempt
// that holds the event records (its lease: a lapsed one may have been taken over).
const RECORD = statement(
  'webhook_record',
  `WITH attempt AS (
     UPDATE webhook_attempts SET status_code = $5, error = $6, latency_ms = $7 WHERE event_id = $1 AND attempt = $3
   )
   UPDATE webhook_events
   SET status = $4, last_status_code = $5, last_error = $6, next_attempt_at = $8, locked_until = NULL,
       delivered_at = CASE WHEN $4 = 'delivered' THEN $9::timestamptz END,
       failed_at = CASE WHEN $4 = 'failed' THEN $9::timestamptz END
   WHERE id = $1 AND locked_until = $2 AND attempts = $3
   RETURNING status`,
);

// An attempt the open circuit stopped: not sent, so not counted; due again later.
const UNSENT = statement(
  'webhook_unsent',
  `WITH attempt AS (DELETE FROM webhook_attempts WHERE event_id = $1 AND attempt = $3)
   UPDATE webhook_events SET attempts = attempts - 1, next_attempt_at = $4, locked_until = NULL
   WHERE id = $1 AND locked_until = $2 AND attempts = $3`,
);

// the events due and not held, oldest due first (index webhook_events_due); an event whose
// endpoint is disabled stays pending and is not sent (D31: `rgs webhook set` resumes it)
const DUE = statement(
  'webhook_due',
  `SELECT ev.id, ev.attempts, ev.next_attempt_at FROM webhook_events ev
   WHERE ev.status = 'pending' AND ev.next_attempt_at <= $1 AND (ev.locked_until IS NULL OR ev.locked_until < $1)
     AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.operator_id = ev.operator_id AND w.enabled)
   ORDER BY ev.next_attempt_at
   LIMIT $2`,
);

// rgs_webhook_events (D15): events not yet delivered or failed, and those of them overdue
const PENDING = statement(
  'webhook_pending_count',
  `SELECT count(*)::int AS pending, (count(*) FILTER (WHERE next_attempt_at <= $1))::int AS due
   FROM webhook_events WHERE status = 'pending'`,
);

export type DeliveryOutcome = 'delivered' | 'retried' | 'failed' | 'circuit_open' | 'not_due';

// the job id of an event's attempt: one id per (event, attempt, due time), so that the
// sweep and the attempt that scheduled it queue the same job once, and a redelivery (a new
// due time) is a new job
export const deliveryJobId = (eventId: string, attempts: number, dueAt: Date) => `${eventId}-${attempts}-${dueAt.getTime()}`;

export async function queueDelivery(svc: ServiceContext, eventId: string, attempts: number, dueAt: Date): Promise<void> {
  const jobId = deliveryJobId(eventId, attempts, dueAt);
  const delay = Math.max(0, dueAt.getTime() - svc.now().getTime());
  await svc.queues.webhooks.add('deliver', { eventId }, { jobId, delay });
}

export async function webhookPendingCounts(svc: Pick<ServiceContext, 'sql'>, now: Date): Promise<{ pending: number; due: number }> {
  const [row] = await svc.sql.query<{ pending: number; due: number }>(PENDING, [now]);
  return row ?? { pending: 0, due: 0 };
}

export class WebhookDeliverer {
  private readonly outbound: OutboundHttp;

  constructor(private readonly svc: ServiceContext) {
    // D25: in production only public addresses, unless the endpoint is flagged
    this.outbound = new OutboundHttp(svc.config.nodeEnv === 'production', 'webhook URL');
  }

  close(): void {
    this.outbound.close();
  }

  // One attempt of the event, if it is due and no other attempt holds it.
  async deliver(eventId: string): Promise<DeliveryOutcome> {
    const { svc } = this;
    const [event] = await svc.sql.query<Claimed>(CLAIM, [eventId, svc.now(), LEASE_MS]);
    if (!event) return 'not_due';
    const log = { eventId: event.id, operatorId: event.operator_id, eventType: event.event_type, attempt: event.attempts };

    let outcome: SendOutcome | { kind: 'unsigned'; error: string };
    const started = performance.now();
    const secret = this.secretOf(event);
    if (typeof secret !== 'string') outcome = { kind: 'unsigned', error: secret.error };
    else {
      const admission = await svc.wallet.circuit.admit(event.operator_id, WEBHOOK_CIRCUIT);
      if (admission === 'open') {
        await svc.sql.query(UNSENT, [event.id, event.locked_until, event.attempts, new Date(svc.now().getTime() + CIRCUIT_RETRY_MS)]);
        svc.metrics.webhookDeliveries.inc({ outcome: 'circuit_open' });
        svc.logger.debug(log, 'webhook circuit open: attempt not sent');
        return 'circuit_open';
      }
      const bytes = webhookBody({ id: event.id, eventType: event.event_type, occurredAt: event.occurred_at, operatorId: event.operator_id, data: event.data });
      outcome = await this.outbound.post(new URL(event.url), bytes, { keyId: event.kid!, secret, privateAllowed: event.url_private_allowed }, {
        timeoutMs: DELIVERY_TIMEOUT_MS,
        maxAnswerBytes: ANSWER_MAX_BYTES,
      });
    }
    const latencyMs = Math.round(performance.now() - started);
    // D31: a 2xx acknowledges; the answer's body is ignored (an oversized one too)
    const statusCode = outcome.kind === 'response' || outcome.kind === 'oversize' ? outcome.httpStatus : null;
    const acknowledged = statusCode !== null && statusCode >= 200 && statusCode <= 299;
    // an answer, good or bad, tells the circuit; a refusal before sending does not
    if (outcome.kind !== 'unsigned' && outcome.kind !== 'refused') {
      await svc.wallet.circuit.record(event.operator_id, WEBHOOK_CIRCUIT, acknowledged);
    }
    const error = acknowledged ? null : outcome.kind === 'response' ? `HTTP ${outcome.httpStatus}` : outcome.error;

    const now = svc.now();
    const next = acknowledged ? undefined : nextAttempt(event.attempts, event.occurred_at, now);
    const status = acknowledged ? 'delivered' : next === 'failed' ? 'failed' : 'pending';
    const nextAt = next instanceof Date ? next : null;
    const [recorded] = await svc.sql.query<{ status: string }>(RECORD, [
      event.id,
      event.locked_until,
      event.attempts,
      status,
      statusCode,
      error,
      latencyMs,
      nextAt,
      now,
    ]);
    const result: DeliveryOutcome = status === 'delivered' ? 'delivered' : status === 'failed' ? 'failed' : 'retried';
    svc.metrics.webhookDeliveries.inc({ outcome: result });
    if (!recorded) {
      // the lease lapsed and another attempt took the event over: its record stands
      svc.logger.warn(log, 'webhook attempt outlived its lease; its result is not recorded');
      return result;
    }
    if (result === 'failed') svc.logger.error({ ...log, statusCode, error }, 'webhook delivery failed: 72 hours after the event');
    else if (result === 'retried') svc.logger.warn({ ...log, statusCode, error, nextAttemptAt: nextAt?.toISOString() }, 'webhook attempt not acknowledged');
    if (nextAt) await queueDelivery(svc, event.id, event.attempts, nextAt);
    return result;
  }

  // the wallet credential's secret (D6), or why the attempt cannot be signed
  private secretOf(event: Claimed): string | { error: string } {
    if (!event.kid || !event.encrypted_secret || !event.wrapped_data_key) return { error: 'the operator has no valid wallet credential to sign with' };
    try {
      return revealSecret(this.svc.config.masterKey, { kid: event.kid, encryptedSecret: event.encrypted_secret, wrappedDataKey: event.wrapped_data_key });
    } catch (err) {
      if (err instanceof CredentialUnreadableError) return { error: err.message };
      throw err;
    }
  }

  // Queues a job for every event due and not held; returns how many were due. A job that
  // is already queued (BullMQ drops a second job of the same id) but still delayed (an
  // event made due earlier than its job: a redelivery, the service clock moved) is brought
  // forward.
  async sweep(): Promise<number> {
    const { svc } = this;
    const due = await svc.sql.query<{ id: string; attempts: number; next_attempt_at: Date }>(DUE, [svc.now(), SWEEP_LIMIT]);
    for (const event of due) {
      const jobId = deliveryJobId(event.id, event.attempts, event.next_attempt_at);
      const queued = await svc.queues.webhooks.getJob(jobId);
      if (!queued) await svc.queues.webhooks.add('deliver', { eventId: event.id }, { jobId });
      else if (await queued.isDelayed()) await queued.promote().catch(() => undefined);
    }
    return due.length;
  }
}
