import { expect } from 'chai';
import { send } from '../../support/signed-client.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';

// When Redis is unreachable the API answers 503 (never 500) and readiness says which
// dependency failed; it recovers by itself when the connection returns.
describe('dependencies: Redis unreachable', () => {
  let h: Harness;
  let operator: TestOperator;
  before(async () => {
    h = await startHarness();
    operator = await h.onboard();
  });
  after(() => h.close());

  it('answers 503 service_unavailable and readiness 503 naming redis, then recovers', async () => {
    h.svc.redis.disconnect();
    try {
      const launch = await operator.launch({ mode: 'demo' });
      expect(launch.status).to.equal(503);
      expect(launch.body.error).to.equal('service_unavailable');
      expect(launch.headers.get('retry-after')).to.equal('1');
      expect(await h.svc.db.session.count({ where: { operatorId: operator.operatorId } })).to.equal(0);

      const ready = await send(`${h.baseUrl}/readyz`, {});
      expect(ready.status).to.equal(503);
      expect(ready.body.checks).to.deep.equal({ postgres: 'ok', redis: 'failed' });
      const live = await send(`${h.baseUrl}/healthz`, {});
      expect(live.status).to.equal(200);
    } finally {
      await h.svc.redis.connect();
    }
    const launch = await operator.launch({ mode: 'demo' });
    expect(launch.status, launch.text).to.equal(200);
    expect((await send(`${h.baseUrl}/readyz`, {})).status).to.equal(200);
  });
});
