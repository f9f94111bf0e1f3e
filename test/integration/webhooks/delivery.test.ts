import { expect } from 'chai';
import { loadConfig } from '../../../src/shared/platform/config.js';
import { clearRedisPrefix } from '../../../src/shared/platform/redis.js';
import { recordTestEvent } from '../../../src/shared/platform/outbox.js';
import { disableWebhookEndpoint, setWebhookEndpoint } from '../../../src/shared/game/webhooks/endpoints.js';
import { WebhookDeliverer } from '../../../src/shared/game/webhooks/delivery.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { until as pollUntil } from '../../support/game.js';

// D31: webhook delivery by the webhooks role, against a receiver that verifies every
// signature with the operator's wallet secret (contract 5.2). Retries are made due by moving
// the service clock past the schedule's first delay (about 10 s): the sweep then finds them.

const FIRST_RETRY_MS = 13_000; // past 10 s + 20 % jitter
const H = 3_600_000;

// polls at a pace the read bucket allows (contract 8.1: 20 reads a second)
const until = <T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 15_000) => pollUntil(what, probe, timeoutMs, 200);

describe('webhook delivery (D31)', function () {
  this.timeout(60_000);
  let h: Harness;
  let receiver: WebhookReceiver;
  const prefix = uniqueId('wh');

  before(async () => {
    h = await startHarness({ REDIS_KEY_PREFIX: prefix }, ['api', 'webhooks']);
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await h?.close();
  });
  afterEach(() => {
    receiver.mode = 'ok';
    expect(receiver.violations, 'every request verified').to.deep.equal([]);
  });

  // an operator of its own (its own circuit), its endpoint at the receiver
  async function operatorWithEndpoint(events?: string[]): Promise<TestOperator> {
    const op = await h.onboard();
    receiver.addCredential(op.walletKeyId, op.walletSignatureSecret);
    await setWebhookEndpoint(h.svc.db, op.operatorId, { url: receiver.url, events });
    return op;
  }

  // signed at the service's clock, which the tests move (contract 5.2: the window is the service's)
  const call = (op: TestOperator, method: string, path: string, body?: unknown) =>
    op.request(method, path, body, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });

  const deliveries = async (op: TestOperator, query = '') => (await call(op, 'GET', `/v1/webhooks/deliveries${query}`)).body;
  const deliveryOf = async (op: TestOperator, eventId: string) =>
    ((await deliveries(op, '?limit=500')).deliveries as { eventId: string; status: string; attempts: number; lastStatusCode: number | null; lastError: string | null }[]).find(
      (d) => d.eventId === eventId,
    );

  async function sendTest(op: TestOperator): Promise<string> {
    const response = await call(op, 'POST', '/v1/webhooks/test');
    expect(response.status, response.text).to.equal(202);
    return response.body.eventId as string;
  }

  it('webhook.test arrives signed with the wallet credential, in the contract 6.1 envelope', async () => {
    const op = await operatorWithEndpoint(['round.settled']);
    const eventId = await sendTest(op);
    await until('the test event acknowledged', async () => receiver.acknowledged(eventId));
    const [delivery] = receiver.of(eventId);
    expect(delivery!.keyId).to.equal(op.walletKeyId);
    expect(Object.keys(delivery!.envelope)).to.deep.equal(['eventId', 'eventType', 'occurredAt', 'operatorId', 'dataVersion', 'data']);
    expect(delivery!.envelope).to.deep.include({ eventId, eventType: 'webhook.test', operatorId: op.operatorId, dataVersion: 1, data: {} });
    expect(new Date(delivery!.envelope.occurredAt).toISOString()).to.equal(delivery!.envelope.occurredAt);
    await until('the delivery listed as delivered', async () => (await deliveryOf(op, eventId))?.status === 'delivered');
    expect(await deliveryOf(op, eventId)).to.deep.include({ eventType: 'webhook.test', attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
  });

  it('a receiver answering 500 gets the same event again, byte for byte, until it acknowledges', async () => {
    const op = await operatorWithEndpoint();
    receiver.mode = 'error';
    const eventId = await sendTest(op);
    await until('the first attempt recorded', async () => (await deliveryOf(op, eventId))?.lastStatusCode === 500);
    const pending = await deliveryOf(op, eventId);
    expect(pending).to.deep.include({ status: 'pending', attempts: 1, lastError: 'http_5xx' });
    receiver.mode = 'ok';
    h.shiftClock(FIRST_RETRY_MS);
    await until('the retry acknowledged', async () => receiver.acknowledged(eventId));
    const [first, second] = receiver.of(eventId);
    expect(receiver.of(eventId)).to.have.length(2);
    expect(second!.body).to.equal(first!.body);
    await until('listed as delivered', async () => (await deliveryOf(op, eventId))?.status === 'delivered');
    expect(await deliveryOf(op, eventId)).to.deep.include({ attempts: 2, lastStatusCode: 200 });
  });

  it('a receiver that is down gets the event once it is up again', async () => {
    const op = await operatorWithEndpoint();
    await receiver.down();
    try {
      const eventId = await sendTest(op);
      await until('the first attempt recorded', async () => (await deliveryOf(op, eventId))?.attempts === 1 && (await deliveryOf(op, eventId))?.lastError);
      expect(await deliveryOf(op, eventId)).to.deep.include({ status: 'pending', lastStatusCode: null });
      // a category, never the address or the connect error (D24: no port or address oracle)
      expect((await deliveryOf(op, eventId))!.lastError).to.equal('connect_failed');
      await receiver.up();
      h.shiftClock(FIRST_RETRY_MS);
      await until('delivered after the receiver came back', async () => receiver.acknowledged(eventId));
      expect(receiver.of(eventId)).to.have.length(1);
    } finally {
      await receiver.up();
    }
  });

  it('an endpoint whose host does not resolve is told dns_failed, never the name or the resolver\'s message', async () => {
    const op = await h.onboard();
    await setWebhookEndpoint(h.svc.db, op.operatorId, { url: 'http://rgs-webhook-test.invalid/hooks/rgs' });
    const eventId = await sendTest(op);
    await until('the first attempt recorded', async () => (await deliveryOf(op, eventId))?.attempts === 1 && (await deliveryOf(op, eventId))?.lastError);
    expect(await deliveryOf(op, eventId)).to.deep.include({ status: 'pending', lastStatusCode: null, lastError: 'dns_failed' });
  });

  it('a receiver that hangs past 10 s is attempted again with the same body', async () => {
    const op = await operatorWithEndpoint();
    receiver.mode = 'hang';
    const eventId = await sendTest(op);
    await until('the attempt given up', async () => (await deliveryOf(op, eventId))?.lastError === 'timeout', 20_000);
    receiver.mode = 'ok';
    h.shiftClock(FIRST_RETRY_MS);
    await until('the retry acknowledged', async () => receiver.acknowledged(eventId));
    const [first, second] = receiver.of(eventId);
    expect(first!.answered).to.equal(undefined);
    expect(second!.body).to.equal(first!.body);
  });

  it('lists the deliveries newest first, by status, a page at a time', async () => {
    const op = await operatorWithEndpoint();
    const delivered = await sendTest(op);
    await until('delivered', async () => (await deliveryOf(op, delivered))?.status === 'delivered');
    receiver.mode = 'error';
    const now = h.svc.now().getTime();
    // an event 73 hours old: its window is spent before any attempt, so it is failed unsent
    const failed = (await recordTestEvent(h.svc.db, op.operatorId, new Date(now - 73 * H)))!;
    await until('failed', async () => (await deliveryOf(op, failed))?.status === 'failed');
    // events not due for hours: pending, never attempted
    const later = [];
    for (const hours of [1, 2, 3]) later.push((await recordTestEvent(h.svc.db, op.operatorId, new Date(now + hours * H)))!);

    const all = await deliveries(op);
    expect(all.deliveries.map((d: { eventId: string }) => d.eventId)).to.deep.equal([later[2], later[1], later[0], delivered, failed]);
    expect(all.nextCursor).to.equal(null);
    expect(all.deliveries[0]).to.deep.include({ status: 'pending', attempts: 0, lastAttemptAt: null, lastStatusCode: null });
    expect(all.deliveries[0].nextAttemptAt).to.equal(new Date(now + 3 * H).toISOString());
    expect(all.deliveries[4]).to.deep.include({ status: 'failed', attempts: 0, lastStatusCode: null, nextAttemptAt: null });
    expect(receiver.of(failed)).to.deep.equal([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { deliveries: { eventId: string }[]; nextCursor: string | null } = await deliveries(op, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.deliveries.length).to.be.at.most(2);
      seen.push(...page.deliveries.map((d) => d.eventId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).to.deep.equal([later[2], later[1], later[0], delivered, failed]);

    expect((await deliveries(op, '?status=pending')).deliveries.map((d: { eventId: string }) => d.eventId)).to.deep.equal([later[2], later[1], later[0]]);
    expect((await deliveries(op, '?status=delivered')).deliveries.map((d: { eventId: string }) => d.eventId)).to.deep.equal([delivered]);
    expect((await deliveries(op, '?status=failed')).deliveries.map((d: { eventId: string }) => d.eventId)).to.deep.equal([failed]);

    for (const query of ['?status=lost', '?limit=0', '?limit=501', '?cursor=not-a-cursor']) {
      const refused = await call(op, 'GET', `/v1/webhooks/deliveries${query}`);
      expect(refused.status, query).to.equal(400);
      expect(refused.body.error, query).to.equal('invalid_request');
    }
    // another operator sees none of them
    const other = await operatorWithEndpoint();
    expect((await deliveries(other)).deliveries).to.deep.equal([]);
  });

  it('redelivers a delivered event as a new attempt of the same eventId and body; another operator\'s event is 404', async () => {
    const op = await operatorWithEndpoint();
    const eventId = await sendTest(op);
    await until('delivered', async () => (await deliveryOf(op, eventId))?.status === 'delivered');
    const response = await call(op, 'POST', `/v1/webhooks/deliveries/${eventId.toUpperCase()}/redeliver`);
    expect(response.status, response.text).to.equal(202);
    expect(response.body).to.deep.equal({ eventId });
    await until('delivered again', async () => receiver.of(eventId).length === 2 && receiver.acknowledged(eventId));
    const [first, second] = receiver.of(eventId);
    expect(second!.body).to.equal(first!.body);
    await until('listed delivered with two attempts', async () => (await deliveryOf(op, eventId))?.attempts === 2 && (await deliveryOf(op, eventId))?.status === 'delivered');

    const other = await operatorWithEndpoint();
    for (const id of [eventId, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const refused = await call(other, 'POST', `/v1/webhooks/deliveries/${id}/redeliver`);
      expect(refused.status, id).to.equal(404);
      expect(refused.body.error, id).to.equal('not_found');
    }
  });

  it('without an enabled endpoint: 409 webhook_not_configured; a disabled endpoint is sent nothing until it is set again', async () => {
    const bare = await h.onboard();
    const refused = await call(bare, 'POST', '/v1/webhooks/test');
    expect(refused.status).to.equal(409);
    expect(refused.body).to.deep.equal({ error: 'webhook_not_configured', message: refused.body.message });

    const op = await operatorWithEndpoint();
    // an event not yet due, then the endpoint disabled
    const eventId = (await recordTestEvent(h.svc.db, op.operatorId, new Date(h.svc.now().getTime() + 1000)))!;
    await disableWebhookEndpoint(h.svc.db, op.operatorId);
    h.shiftClock(2000);
    expect((await call(op, 'POST', '/v1/webhooks/test')).body.error).to.equal('webhook_not_configured');
    expect((await call(op, 'POST', `/v1/webhooks/deliveries/${eventId}/redeliver`)).body.error).to.equal('webhook_not_configured');
    // due, but its endpoint is disabled: an attempt does not take it
    const deliverer = new WebhookDeliverer(h.svc);
    try {
      expect(await deliverer.deliver(eventId)).to.equal('not_due');
    } finally {
      deliverer.close();
    }
    expect(receiver.of(eventId)).to.deep.equal([]);
    expect(await deliveryOf(op, eventId)).to.deep.include({ status: 'pending', attempts: 0 });

    await setWebhookEndpoint(h.svc.db, op.operatorId, { url: receiver.url });
    await until('delivered once the endpoint is set again', async () => receiver.acknowledged(eventId));
  });

  it('events pending when Redis lost every job are derived again from Postgres and delivered', async () => {
    const op = await operatorWithEndpoint();
    receiver.mode = 'error';
    const eventId = await sendTest(op);
    await until('the first attempt failed', async () => (await deliveryOf(op, eventId))?.lastStatusCode === 500);
    // the retry's delayed job, and every other key of this service, gone
    await clearRedisPrefix(loadConfig().redisUrl, prefix);
    expect(await h.svc.queues.webhooks.getDelayedCount()).to.equal(0);
    receiver.mode = 'ok';
    h.shiftClock(FIRST_RETRY_MS);
    await until('delivered from the Postgres row', async () => receiver.acknowledged(eventId), 20_000);
    expect(receiver.of(eventId)).to.have.length(2);
    expect(receiver.of(eventId)[1]!.body).to.equal(receiver.of(eventId)[0]!.body);
  });
});
