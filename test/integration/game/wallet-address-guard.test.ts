import { expect } from 'chai';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { operatorWith, ROLES_WITHOUT_CLOCK, seatPlayer, tick, until } from '../../support/game.js';

// D25: in production a wallet URL may not reach loopback, link-local or private addresses
// unless its operator has wallet_url_private_allowed. The URL is checked when it is saved, but
// its name can be repointed later (DNS rebinding): the wallet client checks the address it
// actually connects to, so a call to a refused address is never sent. The operators' URLs
// are written straight into the database, as a later DNS change would leave them.

const PRODUCTION = {
  NODE_ENV: 'production',
  MASTER_KEY: '5d'.repeat(32),
  JWT_SECRET: 'wallet-address-guard-jwt-secret-'.padEnd(48, 'x'),
};

const START = 5_000_000n;
const STAKE = 1_000_000n;

describe('wallet addresses at connect time in production (D25)', function () {
  this.timeout(30_000);
  let h: Harness;
  let port: string;
  before(async () => {
    // queues of its own: its operators' credentials are sealed under a key no other suite
    // holds, so their leftover jobs must not reach another suite's workers
    h = await startHarness({ ...PRODUCTION, REDIS_KEY_PREFIX: uniqueId('guard') }, ROLES_WITHOUT_CLOCK);
    port = new URL(h.wallet.url).port;
  });
  after(() => h?.close());

  const point = (operator: TestOperator, walletUrl: string, walletUrlPrivateAllowed: boolean) =>
    h.svc.db.operator.update({ where: { id: operator.operatorId }, data: { walletUrl, walletUrlPrivateAllowed } });
  const requestsOf = (operator: TestOperator) =>
    h.wallet.requests.filter((r) => (r.body as { operatorId?: string } | undefined)?.operatorId === operator.operatorId);

  for (const [what, host] of [
    ['a literal loopback address', '127.0.0.1'],
    ['a name that resolves to loopback', 'localhost'],
  ] as const) {
    it(`a launch whose wallet URL is ${what} is refused without a call, unless the operator is flagged`, async () => {
      const operator = await h.onboard();
      await point(operator, `http://${host}:${port}`, false);

      const refused = await operator.launch();
      expect(refused.status, refused.text).to.equal(502);
      expect(refused.body).to.include({ error: 'wallet_unavailable' });
      expect(requestsOf(operator), 'the wallet saw no request').to.have.length(0);
      const [call] = await h.svc.db.walletCall.findMany({ where: { operatorId: operator.operatorId } });
      expect(call).to.include({ endpoint: 'balance', status: null, httpStatus: null });
      expect(call!.error).to.match(/not a public address/);

      await point(operator, `http://${host}:${port}`, true);
      const body = operator.sessionBody();
      h.wallet.setBalance(body.playerRef as string, 'EUR', START);
      const launched = await operator.request('POST', '/v1/session', body);
      expect(launched.status, launched.text).to.equal(200);
      expect(requestsOf(operator).map((r) => r.endpoint)).to.deep.equal(['balance']);
    });
  }

  it('a bet whose wallet name now resolves to loopback is refused without a debit; with the flag it is debited', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 60_000 });
    await point(operator, h.wallet.url, true);
    const refusedSeat = await seatPlayer(h, operator, START);
    const debitedSeat = await seatPlayer(h, operator, START);
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    await refusedSeat.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');

    // the operator's wallet name is repointed at the service's own host
    await point(operator, `http://localhost:${port}`, false);
    const ack = await refusedSeat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
    expect(ack).to.deep.equal({ ok: false, reason: 'service_unavailable' });
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId: refusedSeat.sessionId } });
    expect(bet).to.include({ status: 'REJECTED', rejectReason: 'service_unavailable' });
    // never sent, so nothing to roll back
    expect(await h.svc.db.walletJob.count({ where: { betId: bet.id } })).to.equal(0);
    expect(requestsOf(operator).filter((r) => r.endpoint !== 'balance'), 'the wallet saw no debit').to.have.length(0);
    expect(h.wallet.balanceOf(refusedSeat.playerRef, 'EUR')).to.equal(START);

    await point(operator, `http://localhost:${port}`, true);
    const debited = await debitedSeat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
    expect(debited).to.include({ ok: true });
    expect(h.wallet.balanceOf(debitedSeat.playerRef, 'EUR')).to.equal(START - STAKE);
  });
});
