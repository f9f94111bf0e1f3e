import { expect } from 'chai';
import { startHarness, type Harness } from '../support/harness.js';

describe('smoke: session launch end to end', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it('launches a real session after a signed balance call', async () => {
    const operator = await h.onboard();
    const body = operator.sessionBody();
    h.wallet.setBalance(body.playerRef as string, 'EUR', 5_000_000n);
    const response = await operator.request('POST', '/v1/session', body);
    expect(response.status, response.text).to.equal(200);
    expect(response.body).to.have.keys(['sessionId', 'sessionToken', 'launchUrl', 'expiresAt', 'serverSeedHash']);
  });
});
