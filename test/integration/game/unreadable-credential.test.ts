import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createOperator } from '../../../src/shared/game/operators/operators.js';
import { startHarness, uniqueId, type Harness } from '../../support/harness.js';

// D24: the wallet calls of many operators share one audit statement. An operator whose
// wallet credential this process cannot decrypt (sealed under another MASTER_KEY: a
// misconfigured node, a restored backup) fails only its own calls, before anything is sent;
// the other operators' calls in the same statement go out and are answered.
describe('a wallet credential this process cannot decrypt (D24)', function () {
  this.timeout(30_000);
  let h: Harness;

  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it('fails only its own operator: the calls batched with it are made and answered', async () => {
    const honest = await h.onboard();
    // sealed under a key this process does not hold
    const foreign = await createOperator(h.svc.db, randomBytes(32), uniqueId('op'), { walletUrl: h.wallet.url, currencies: ['EUR'] });
    h.wallet.addCredential(foreign.walletKeyId, foreign.walletSignatureSecret);
    const players = Array.from({ length: 6 }, () => uniqueId('player'));
    for (const playerRef of players) h.wallet.setBalance(playerRef, 'EUR', 7_000_000n);
    const balance = (operatorId: string, playerRef: string) =>
      h.svc.wallet.call({ operatorId, endpoint: 'balance', fields: { operatorId, playerRef, currency: 'EUR', gameCode: 'dice' } });

    // issued in one turn of the event loop, so that they share the audit statement
    const [refused, ...answered] = await Promise.allSettled([
      balance(foreign.operatorId, uniqueId('player')),
      ...players.map((playerRef) => balance(honest.operatorId, playerRef)),
    ]);

    expect(answered.map((a) => (a.status === 'fulfilled' ? `${a.value.status} ${a.value.balanceMicro}` : String(a.reason)))).to.deep.equal(
      players.map(() => 'RS_OK 7000000'),
    );
    expect(refused.status).to.equal('rejected');
    expect(String((refused as PromiseRejectedResult).reason)).to.match(/cannot be decrypted/);
    // nothing was sent for the foreign operator, and its audit row says why
    expect(h.wallet.requests.filter((r) => (r.body as { operatorId?: string } | undefined)?.operatorId === foreign.operatorId)).to.deep.equal([]);
    const audit = await h.svc.db.walletCall.findMany({ where: { operatorId: foreign.operatorId } });
    expect(audit.map((row) => [row.status, row.httpStatus, row.error?.includes('cannot be decrypted')])).to.deep.equal([[null, null, true]]);
  });

  it('a request signed with an API key this process cannot decrypt is 401 invalid_signature, never 500', async () => {
    const foreign = await createOperator(h.svc.db, randomBytes(32), uniqueId('op'), { walletUrl: h.wallet.url, currencies: ['EUR'] });
    const { signedRequest } = await import('../../support/signed-client.js');
    // its API key is sealed under the same foreign key: the signature check cannot read it either
    const response = await signedRequest(h.baseUrl, { kid: foreign.apiKeyId, secret: foreign.apiSecret }, 'POST', '/v1/session', {
      operatorId: foreign.operatorId,
      playerRef: uniqueId('player'),
      gameCode: 'dice',
      currency: 'EUR',
      lang: 'en',
      jurisdiction: 'MT',
    });
    expect(response.status, response.text).to.equal(401);
    expect(response.body).to.include({ error: 'invalid_signature', message: 'the signature cannot be verified' });
  });
});
