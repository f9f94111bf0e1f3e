import type { Job } from 'bullmq';
import type { ServiceContext } from '../context.js';
import type { WebhookJob } from '../../platform/queues.js';
import { statement } from '../../platform/db/sql.js';
import { webhookBody } from '../../domain/events.js';
import { webhookFailure, type WebhookFailure } from '../../domain/webhook-failure.js';
import { walletTargetSql } from '../../wallet/audit.js';
import { CredentialUnreadableError, revealSecret } from '../../wallet/credentials.js';
import { CIRCUIT_OPEN_MS } from '../../wallet/circuit.js';
import { OutboundHttp, type SendOutcome } from '../../wallet/outbound.js';
import { DELIVERY_TIMEOUT_MS, DELIVERY_WINDOW_MS, holdUntil, nextAttempt } from './schedule.js';

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
// The sweep (every SWEEP_INTERVAL_MS in each webhooks process) queues a job for events that
// are due and not held: how new events are picked up (they are written by any process, none
// of which queues), and how delivery resumes after Redis lost its jobs or a deliverer died
// mid-attempt. Delivery is at least once: a receiver dedupes on eventId.
//
// D24: one operator's endpoint must not hold up another's deliveries, whatever it does:
//   - at most MAX_IN_FLIGHT attempts per endpoint at once (the claim counts them under the
//     endpoint row's lock), so a receiver that answers slowly, or not at all, holds that many
//     of a process's delivery slots and no more; its other events stay unclaimed;
//   - the sweep takes at most that many events per operator, oldest due first, so a backlog
//     of one operator does not fill a sweep; a finished attempt queues its endpoint's next
//     due event at once, so a healthy endpoint's backlog drains at its own pace;
//   - an endpoint whose circuit is open is held (webhook_endpoints.held_until: the circuit's
//     open period, jittered): its events are not claimed, counted or touched until the hold
//     ends, and then a single attempt probes it (a success ends the hold);
//   - an event whose 72 hours end before its next attempt was made is failed without a send
//     by the sweep (the schedule's own last attempt, due at the end of the window, and a
//     redelivery, due after it, are still made).

// an attempt holds its event this long: the send's timeout and the two statements around it
const LEASE_MS = 30_000;
export const SWEEP_INTERVAL_MS = 2000;
// events queued per sweep; the next sweep takes the rest
const SWEEP_LIMIT = 500;
// D24: a receiver's answer is read up to this and ignored (only its status code counts)
const ANSWER_MAX_BYTES = 4096;
// the circuit's name for an operator's webhook endpoint (one circuit per endpoint, D31)
export const WEBHOOK_CIRCUIT = 'webhook';
// D24: attempts in flight at once per endpoint (one while a hold is being probed)
export const MAX_IN_FLIGHT = 4;
// D31: the window after the event, in seconds for make_interval
const WINDOW_SECONDS = DELIVERY_WINDOW_MS / 1000;

// An event whose window ended before its next attempt was made: given up without a send.
// An attempt due at the window's end (the schedule's last) or after it (a redelivery) is made.
// `ev` is the event, `$now` and `$window` the statement's parameters (seconds).
const expiredSql = (now: string, window: string) =>
  `(ev.next_attempt_at < ev.occurred_at + make_interval(secs => ${window}::int) AND ev.occurred_at + make_interval(secs => ${window}::int) <= ${now})`;

// the attempts in flight to an operator's endpoint: events whose lease has not lapsed
const inFlightSql = (operator: string, now: string) =>
  `(SELECT count(*) FROM webhook_events f WHERE f.operator_id = ${operator} AND f.locked_until IS NOT NULL AND f.locked_until >= ${now})`;

// An attempt's claim takes its endpoint's row lock first, so that two claims for one endpoint
// count each other's attempts (the claim's own statement sees what committed before it) and
// MAX_IN_FLIGHT holds across processes. The event's previous attempt time is kept, for an
// attempt that an open circuit stops.
const LOCK_ENDPOINT = statement(
  'webhook_claim_lock',
  `SELECT ev.last_attempt_at FROM webhook_events ev JOIN webhook_endpoints w ON w.operator_id = ev.operator_id AND w.enabled
   WHERE ev.id = $1 FOR UPDATE OF w`,
);

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
       AND w.operator_id = ev.operator_id AND w.enabled AND (w.held_until IS NULL OR w.held_until <= $2)
       AND NOT ${expiredSql('$2', '$5')}
       AND ${inFlightSql('ev.operator_id', '$2')} < CASE WHEN w.held_until IS NULL THEN $4::int ELSE 1 END
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
// that holds the event records (its lease: a lapsed one may have been taken over). When the
// attempt told the circuit ($11), the endpoint's hold follows it: set while the circuit is
// open, ended otherwise (a no-op for the endpoint that is not held).
const RECORD = statement(
  'webhook_record',
  `WITH attempt AS (
     UPDATE webhook_attempts SET status_code = $5, error = $6, latency_ms = $7 WHERE event_id = $1 AND attempt = $3
   ),
   endpoint AS (
     UPDATE webhook_endpoints SET held_until = $10 WHERE $11 AND operator_id = $12 AND held_until IS DISTINCT FROM $10
   )
   UPDATE webhook_events
   SET status = $4, last_status_code = $5, last_error = $6, next_attempt_at = $8, locked_until = NULL,
       delivered_at = CASE WHEN $4 = 'delivered' THEN $9::timestamptz END,
       failed_at = CASE WHEN $4 = 'failed' THEN $9::timestamptz END
   WHERE id = $1 AND locked_until = $2 AND attempts = $3
   RETURNING status`,
);

// An attempt the open circuit stopped (the circuit opened between the hold and the claim):
// not sent, so not counted and not dated; the event keeps its due time, and its endpoint is
// held until the circuit may let a probe through.
const UNSENT = statement(
  'webhook_unsent',
  `WITH attempt AS (DELETE FROM webhook_attempts WHERE event_id = $1 AND attempt = $3),
   endpoint AS (UPDATE webhook_endpoints SET held_until = $5 WHERE operator_id = $6)
   UPDATE webhook_events SET attempts = attempts - 1, last_attempt_at = $4, locked_until = NULL
   WHERE id = $1 AND locked_until = $2 AND attempts = $3`,
);

// D24: the events to queue, a few per operator: each enabled endpoint not held takes its
// oldest due events, as many as it has attempts free (one while a hold is being probed), so
// that one operator's backlog cannot fill the sweep (index webhook_events_due_by_operator).
// An event whose endpoint is disabled stays pending and is not sent (D31: `rgs webhook set`
// resumes it).
const DUE = statement(
  'webhook_due',
  `SELECT d.id, d.attempts, d.next_attempt_at
   FROM webhook_endpoints w
   CROSS JOIN LATERAL (SELECT ${inFlightSql('w.operator_id', '$1')}::int AS n) busy
   CROSS JOIN LATERAL (
     SELECT ev.id, ev.attempts, ev.next_attempt_at FROM webhook_events ev
     WHERE ev.operator_id = w.operator_id AND ev.status = 'pending' AND ev.next_attempt_at <= $1
       AND (ev.locked_until IS NULL OR ev.locked_until < $1) AND NOT ${expiredSql('$1', '$4')}
     ORDER BY ev.next_attempt_at
     LIMIT greatest(0, CASE WHEN w.held_until IS NULL THEN $3::int ELSE 1 END - busy.n)
   ) d
   WHERE w.enabled AND (w.held_until IS NULL OR w.held_until <= $1)
   ORDER BY d.next_attempt_at
   LIMIT $2`,
);

// the next due event of one endpoint, queued by an attempt that has just freed a slot
const NEXT_DUE = statement(
  'webhook_next_due',
  `SELECT ev.id, ev.attempts, ev.next_attempt_at FROM webhook_events ev
   WHERE ev.operator_id = $1 AND ev.status = 'pending' AND ev.next_attempt_at <= $2
     AND (ev.locked_until IS NULL OR ev.locked_until < $2) AND NOT ${expiredSql('$2', '$3')}
   ORDER BY ev.next_attempt_at
   LIMIT 1`,
);

// D31: the events whose window ended before their next attempt was made, failed without a
// send (their last attempt's status and error stay as they were). Events of a disabled
// endpoint wait for `rgs webhook set`, as every other of its events does.
const EXPIRE = statement(
  'webhook_expire',
  `UPDATE webhook_events ev SET status = 'failed', failed_at = $1, next_attempt_at = NULL, locked_until = NULL
   WHERE ev.status = 'pending' AND ev.next_attempt_at <= $1 AND (ev.locked_until IS NULL OR ev.locked_until < $1)
     AND ${expiredSql('$1', '$2')}
     AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.operator_id = ev.operator_id AND w.enabled)
   RETURNING ev.id`,
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

  // One attempt of the event, if it is due, no other attempt holds it, its endpoint is not
  // held and has an attempt free (D24).
  async deliver(eventId: string): Promise<DeliveryOutcome> {
    const { svc } = this;
    const claim = await svc.sql.transaction(async (tx) => {
      const [endpoint] = await tx.query<{ last_attempt_at: Date | null }>(LOCK_ENDPOINT, [eventId]);
      if (!endpoint) return undefined;
      const [claimed] = await tx.query<Claimed>(CLAIM, [eventId, svc.now(), LEASE_MS, MAX_IN_FLIGHT, WINDOW_SECONDS]);
      return claimed && { event: claimed, previousAttemptAt: endpoint.last_attempt_at };
    });
    if (!claim) return 'not_due';
    const { event } = claim;
    const log = { eventId: event.id, operatorId: event.operator_id, eventType: event.event_type, attempt: event.attempts };

    let outcome: SendOutcome | { kind: 'unsigned'; error: string };
    const started = performance.now();
    const secret = this.secretOf(event);
    if (typeof secret !== 'string') outcome = { kind: 'unsigned', error: secret.error };
    else {
      const admission = await svc.wallet.circuit.admit(event.operator_id, WEBHOOK_CIRCUIT);
      if (admission === 'open') {
        const heldUntil = holdUntil(CIRCUIT_OPEN_MS, svc.now());
        await svc.sql.query(UNSENT, [event.id, event.locked_until, event.attempts, claim.previousAttemptAt, heldUntil, event.operator_id]);
        svc.metrics.webhookDeliveries.inc({ outcome: 'circuit_open' });
        svc.logger.debug({ ...log, heldUntil: heldUntil.toISOString() }, 'webhook circuit open: attempt not sent, endpoint held');
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
    // an answer, good or bad, tells the circuit; a refusal before sending does not. After a
    // failure told to it, an open circuit holds the endpoint (D24: its events are not claimed
    // until it may be probed); any other answer ends a hold.
    const toldCircuit = outcome.kind !== 'unsigned' && outcome.kind !== 'refused';
    let heldUntil: Date | null = null;
    if (toldCircuit) {
      await svc.wallet.circuit.record(event.operator_id, WEBHOOK_CIRCUIT, acknowledged);
      if (!acknowledged && (await svc.wallet.circuit.state(event.operator_id, WEBHOOK_CIRCUIT)) === 'open') {
        heldUntil = holdUntil(CIRCUIT_OPEN_MS, svc.now());
      }
    }
    // D24: the operator reads a category only; the detail (an address, a resolver's or a
    // TLS library's message) stays in the service's own log
    const error: WebhookFailure | null = acknowledged ? null : webhookFailure(outcome);
    const detail = acknowledged ? undefined : outcome.kind === 'response' ? `HTTP ${outcome.httpStatus}` : outcome.error;

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
      heldUntil,
      toldCircuit,
      event.operator_id,
    ]);
    const result: DeliveryOutcome = status === 'delivered' ? 'delivered' : status === 'failed' ? 'failed' : 'retried';
    svc.metrics.webhookDeliveries.inc({ outcome: result });
    if (!recorded) {
      // the lease lapsed and another attempt took the event over: its record stands
      svc.logger.warn(log, 'webhook attempt outlived its lease; its result is not recorded');
      return result;
    }
    if (result === 'failed') svc.logger.error({ ...log, statusCode, error, detail }, 'webhook delivery failed: 72 hours after the event');
    else if (result === 'retried') svc.logger.warn({ ...log, statusCode, error, detail, nextAttemptAt: nextAt?.toISOString() }, 'webhook attempt not acknowledged');
    if (nextAt) await queueDelivery(svc, event.id, event.attempts, nextAt);
    // D24: the slot this attempt held goes to its endpoint's next due event, unless the
    // endpoint is now held
    if (!heldUntil) await this.queueNext(event.operator_id);
    return result;
  }

  private async queueNext(operatorId: string): Promise<void> {
    const { svc } = this;
    const [next] = await svc.sql.query<{ id: string; attempts: number; next_attempt_at: Date }>(NEXT_DUE, [operatorId, svc.now(), WINDOW_SECONDS]);
    if (next) await this.queueDue(next);
  }

  // a job for an event that is due, unless one is queued; a queued one still delayed (an
  // event made due earlier than its job: a redelivery, the service clock moved) is brought
  // forward
  private async queueDue(event: { id: string; attempts: number; next_attempt_at: Date }): Promise<void> {
    const { queues } = this.svc;
    const jobId = deliveryJobId(event.id, event.attempts, event.next_attempt_at);
    const queued = await queues.webhooks.getJob(jobId);
    if (!queued) await queues.webhooks.add('deliver', { eventId: event.id }, { jobId });
    else if (await queued.isDelayed()) await queued.promote().catch(() => undefined);
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

  // Fails the events whose window is over (D31), then queues a job for the due events, a few
  // per operator (D24); returns how many were queued.
  async sweep(): Promise<number> {
    const { svc } = this;
    const expired = (await svc.sql.query<{ id: string }>(EXPIRE, [svc.now(), WINDOW_SECONDS])).length;
    if (expired > 0) {
      svc.metrics.webhookDeliveries.inc({ outcome: 'failed' }, expired);
      svc.logger.error({ events: expired }, 'webhook deliveries failed unsent: 72 hours after the event');
    }
    const due = await svc.sql.query<{ id: string; attempts: number; next_attempt_at: Date }>(DUE, [svc.now(), SWEEP_LIMIT, MAX_IN_FLIGHT, WINDOW_SECONDS]);
    for (const event of due) await this.queueDue(event);
    return due.length;
  }
}

// The webhooks pool's job handler (workers/registry.ts binds it to rgs-webhooks "deliver").
export type WebhookScope = { svc: ServiceContext; deliverer: WebhookDeliverer };

// D31: one attempt of a webhook event; the attempt schedules its own retry (above), so the
// job itself is never retried
export function deliverWebhook({ deliverer }: WebhookScope, job: Job<WebhookJob>): Promise<string> {
  return deliverer.deliver(job.data.eventId);
}
