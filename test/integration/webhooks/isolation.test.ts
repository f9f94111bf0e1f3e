import { expect } from 'chai';
import { recordTestEvent } from '../../../src/shared/platform/outbox.js';
import { disableWebhookEndpoint, setWebhookEndpoint } from '../../../src/shared/game/webhooks/endpoints.js';
import { deliveryJobId, WebhookDeliverer } from '../../../src/shared/game/webhooks/delivery.js';
import { CIRCUIT_THRESHOLD } from '../../../src/shared/wallet/circuit.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { until as pollUntil } from '../../support/game.js';

// D24, D31: one operator's webhook endpoint (failing, slow, or with a backlog) must not
// delay another operator's deliveries, and a failing endpoint is not worked on while its
// circuit is open. The first part drives the deliverer by hand (no webhooks role runs, so
// nothing happens between the steps a test takes); the second runs the webhooks role.

const H = 3_600_000;
const until = <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 15_000) => pollUntil(what, probe, timeoutMs, 200);

type Listed = { eventId: string; status: string; attempts: number; lastAttemptAt: string | null; lastStatusCode: number | null; lastError: string | null };

function helpers(get: () => Harness) {
  const call = (op: TestOperator, method: string, path: string, body?: unknown) =>
    op.request(method, path, body, { timestamp: Math.floor(get().svc.now().getTime() / 1000) });
  const deliveryOf = async (op: TestOperator, eventId: string): Promise<Listed | undefined> =>
    ((await call(op, 'GET', '/v1/webhooks/deliveries?limit=500')).body.deliveries as Listed[]).find((d) => d.eventId === eventId);
  return { call, deliveryOf };
}

describe('webhook endpoints that fail or lag, one at a time (D24, D31)', function () {
  this.timeout(60_000);
  let h: Harness;
  let receiver: WebhookReceiver;
  let deliverer: WebhookDeliverer;
  const operators: TestOperator[] = [];
  const { call, deliveryOf } = helpers(() => h);

  before(async () => {
    h = await startHarness({ REDIS_KEY_PREFIX: uniqueId('whi') }, ['api']);
    receiver = await WebhookReceiver.start();
    deliverer = new WebhookDeliverer(h.svc);
  });
  after(async () => {
    // their pending events are left to no other test's webhooks role
    for (const op of operators) await disableWebhookEndpoint(h.svc.db, op.operatorId);
    deliverer?.close();
    await receiver?.close();
    await h?.close();
  });
  afterEach(() => {
    receiver.mode = 'ok';
    expect(receiver.violations, 'every request verified').to.deep.equal([]);
  });

  async function operatorWithEndpoint(): Promise<TestOperator> {
    const op = await h.onboard();
    operators.push(op);
    receiver.addCredential(op.walletKeyId, op.walletSignatureSecret);
    await setWebhookEndpoint(h.svc.db, op.operatorId, { url: receiver.url });
    return op;
  }

  const jobOf = (eventId: string, attempts: number, dueAt: Date) => h.svc.queues.webhooks.getJob(deliveryJobId(eventId, attempts, dueAt));

  it('once the circuit of a failing endpoint opens, its due events are not claimed: nothing sent, nothing counted, no job queued', async () => {
    const op = await operatorWithEndpoint();
    receiver.mode = 'error';
    for (let i = 0; i < CIRCUIT_THRESHOLD; i++) {
      const eventId = (await recordTestEvent(h.svc.db, op.operatorId, h.svc.now()))!;
      expect(await deliverer.deliver(eventId)).to.equal('retried');
    }
    expect(receiver.deliveries).to.have.length(CIRCUIT_THRESHOLD);

    const occurredAt = h.svc.now();
    const parked = (await recordTestEvent(h.svc.db, op.operatorId, occurredAt))!;
    // the job the sweep would have queued, run anyway: it does not take the event
    expect(await deliverer.deliver(parked)).to.equal('not_due');
    await deliverer.sweep();
    expect(await jobOf(parked, 0, occurredAt)).to.equal(undefined);
    expect(receiver.deliveries).to.have.length(CIRCUIT_THRESHOLD);
    expect(await deliveryOf(op, parked)).to.deep.include({ status: 'pending', attempts: 0, lastAttemptAt: null, lastError: null });
  });

  it('an event whose 72 hours are over before it was attempted is failed without a send; the schedule\'s last attempt and a redelivery are still sent', async () => {
    const op = await operatorWithEndpoint();
    const now = h.svc.now().getTime();
    const expired = (await recordTestEvent(h.svc.db, op.operatorId, new Date(now - 73 * H)))!;
    await deliverer.sweep();
    expect(await deliveryOf(op, expired)).to.deep.include({ status: 'failed', attempts: 0, lastAttemptAt: null });
    expect(await deliverer.deliver(expired)).to.equal('not_due');
    expect(receiver.of(expired)).to.deep.equal([]);

    // the last attempt the schedule makes is due at the end of the window itself (schedule.ts)
    const last = (await recordTestEvent(h.svc.db, op.operatorId, new Date(now - 72 * H - 1000)))!;
    await h.svc.sql.query(`UPDATE webhook_events SET next_attempt_at = occurred_at + interval '72 hours', attempts = 9 WHERE id = $1`, [last]);
    await deliverer.sweep();
    expect(await deliverer.deliver(last)).to.equal('delivered');
    expect(receiver.acknowledged(last)).to.equal(true);

    // a redelivery is the operator's own request: one attempt, however old the event
    const response = await call(op, 'POST', `/v1/webhooks/deliveries/${expired}/redeliver`);
    expect(response.status, response.text).to.equal(202);
    expect(await deliverer.deliver(expired)).to.equal('delivered');
    expect(await deliveryOf(op, expired)).to.deep.include({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
  });

  it("one operator's backlog of due events does not keep another operator's event out of a sweep", async () => {
    const busy = await operatorWithEndpoint();
    // more events due, and due earlier, than one sweep used to take
    await h.svc.sql.query(
      `INSERT INTO webhook_events (id, operator_id, event_type, occurred_at, data, next_attempt_at)
       SELECT gen_random_uuid(), $1, 'webhook.test', $2::timestamptz - make_interval(secs => g), '{}'::jsonb, $2::timestamptz - make_interval(secs => g)
       FROM generate_series(1, 600) g`,
      [busy.operatorId, h.svc.now()],
    );
    const quiet = await operatorWithEndpoint();
    const occurredAt = h.svc.now();
    const eventId = (await recordTestEvent(h.svc.db, quiet.operatorId, occurredAt))!;
    await deliverer.sweep();
    expect(await jobOf(eventId, 0, occurredAt), "the other operator's event queued by the first sweep").to.not.equal(undefined);
    const queued = await h.svc.queues.webhooks.getJobs(['waiting', 'prioritized', 'delayed']);
    const [{ ids }] = (await h.svc.sql.query<{ ids: string[] }>(`SELECT array_agg(id::text) AS ids FROM webhook_events WHERE operator_id = $1`, [busy.operatorId])) as [
      { ids: string[] },
    ];
    const busyIds = new Set(ids);
    const busyQueued = queued.filter((job) => busyIds.has(job.data.eventId)).length;
    expect(busyQueued, 'jobs queued for the busy operator').to.be.greaterThan(0).and.at.most(4);
  });
});

describe('a slow webhook endpoint holds few delivery slots (D24, D31)', function () {
  this.timeout(90_000);
  let h: Harness;
  let slow: WebhookReceiver;
  let fast: WebhookReceiver;
  const operators: TestOperator[] = [];
  const { call } = helpers(() => h);

  before(async () => {
    h = await startHarness({ REDIS_KEY_PREFIX: uniqueId('whs') }, ['api', 'webhooks']);
    slow = await WebhookReceiver.start();
    fast = await WebhookReceiver.start();
  });
  after(async () => {
    for (const op of operators) await disableWebhookEndpoint(h.svc.db, op.operatorId);
    await slow?.close();
    await fast?.close();
    await h?.close();
  });

  async function operatorAt(receiver: WebhookReceiver): Promise<TestOperator> {
    const op = await h.onboard();
    operators.push(op);
    receiver.addCredential(op.walletKeyId, op.walletSignatureSecret);
    await setWebhookEndpoint(h.svc.db, op.operatorId, { url: receiver.url });
    return op;
  }

  it("a receiver that holds every request gets at most 4 at once, and another operator's test event arrives while they are held", async () => {
    const a = await operatorAt(slow);
    const b = await operatorAt(fast);
    slow.mode = 'hang';
    // more events than a webhooks process has delivery slots
    for (let i = 0; i < 40; i++) await recordTestEvent(h.svc.db, a.operatorId, h.svc.now());
    await until('the slow receiver holding requests', async () => slow.open >= 4);

    let slowHeldAtArrival: number | undefined;
    fast.onDelivery = () => (slowHeldAtArrival ??= slow.open);
    const response = await call(b, 'POST', '/v1/webhooks/test');
    expect(response.status, response.text).to.equal(202);
    const eventId = response.body.eventId as string;
    await until("the other operator's test event acknowledged", async () => fast.acknowledged(eventId), 30_000);

    expect(slow.maxOpen, 'requests the slow receiver held at once').to.be.at.most(4);
    expect(slowHeldAtArrival, "the slow receiver's requests still held when the test event arrived").to.be.greaterThan(0);
    expect(slow.violations).to.deep.equal([]);
    expect(fast.violations).to.deep.equal([]);
  });
});
