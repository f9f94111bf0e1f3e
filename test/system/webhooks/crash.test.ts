import { expect } from 'chai';
import { recordTestEvent } from '../../../src/platform/outbox.js';
import { setWebhookEndpoint } from '../../../src/game/webhooks/endpoints.js';
import { startDeployment, type Deployment } from '../../support/deployment.js';
import { until } from '../../support/game.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

// D31: a webhooks process killed (kill -9) in the middle of a delivery. The attempt in flight
// holds its event for a lease; once the lease lapses the process that replaces it delivers
// the event (the same eventId and bytes), and the events written while no webhooks process
// ran are delivered too: nothing is lost, Postgres being the record.
describe('webhooks: kill -9 of the webhooks process mid-delivery', function () {
  this.timeout(120_000);
  let d: Deployment;
  let receiver: WebhookReceiver;

  before(async () => {
    d = await startDeployment();
    receiver = await WebhookReceiver.start();
    await d.start('webhooks', 'webhooks');
  });
  after(async () => {
    await receiver?.close();
    await d?.close();
  });

  it('its replacement delivers the event in flight and those written meanwhile, each acknowledged', async () => {
    const { operator } = await d.table();
    receiver.addCredential(operator.walletKeyId, operator.walletSignatureSecret);
    await setWebhookEndpoint(d.db, operator.operatorId, { url: receiver.url });

    receiver.mode = 'hang';
    const inFlight = (await recordTestEvent(d.db, operator.operatorId, new Date()))!;
    await until('the attempt at the receiver', async () => receiver.of(inFlight).length === 1, 15_000);
    await d.kill('webhooks');
    receiver.mode = 'ok';
    // written by another process while no webhooks process runs
    const meanwhile = (await recordTestEvent(d.db, operator.operatorId, new Date()))!;

    await d.restart('webhooks');
    await until('both acknowledged', async () => receiver.acknowledged(inFlight) && receiver.acknowledged(meanwhile), 60_000);
    expect(receiver.violations).to.deep.equal([]);
    const [first, second] = receiver.of(inFlight);
    expect(second!.body).to.equal(first!.body);

    await until('recorded as delivered', async () =>
      (await d.db.webhookEvent.count({ where: { id: { in: [inFlight, meanwhile] }, status: 'delivered' } })) === 2,
    );
    const attempts = await d.db.webhookAttempt.findMany({ where: { eventId: inFlight }, orderBy: { attempt: 'asc' } });
    // the killed attempt stays on record, with no answer
    expect(attempts.map((a) => [a.attempt, a.statusCode])).to.deep.equal([[1, null], [2, 200]]);
    expect(await d.db.webhookEvent.findUniqueOrThrow({ where: { id: inFlight } })).to.deep.include({ attempts: 2, lastStatusCode: 200, lockedUntil: null });
  });
});
