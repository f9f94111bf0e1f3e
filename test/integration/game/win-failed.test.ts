import { expect } from 'chai';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { WALLET_RETRY_BUDGET_MS } from '../../../src/shared/platform/queues.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { seatPlayer, until } from '../../support/game.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// D23: a win that later fails. round_result goes out as soon as the outcome is persisted
// (D4); when the win is then answered RS_ERROR_TRANSACTION_DOES_NOT_EXIST, or abandoned after
// 24 hours of failed retries (contract 3.4), a connected player gets `win_failed {roundId,
// betId, reason}`, the round view (GET /v1/rounds/{id}) shows the win call's state, and the
// failure counts in rgs_wallet_jobs{state="abandoned"} and the wallet-calls report.

const START = 5_000_000n;
const STAKE = 1_000_000n;
// contract 8.4 with the defaults: 2 x stake minus 3 % commission
const NET_WIN = 1_940_000n;

describe('a win that later fails (D23)', function () {
  this.timeout(30_000);
  let h: Harness;
  let shifted = 0;
  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h?.close());
  afterEach(() => {
    // the clock is the whole service's: put it back for the next test
    h.shiftClock(-shifted);
    shifted = 0;
    for (const endpoint of ['bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
  });

  // LOW always rolls and the player bets LOW: a winning round, whose outcome the player sees
  async function winningRound() {
    const operator: TestOperator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 600, rollingWindowMs: 200, cooldownMs: 200, lowWeight: 1n, highWeight: 0n });
    const { player, playerRef, sessionId } = await seatPlayer(h, operator, START);
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId } });
    // D4: round_result as soon as the outcome is persisted, whatever the win call does next
    const result = await player.waitFor('round_result', (p) => p.betId === bet.id);
    expect(result).to.include({ roundId: bet.roundId, won: true, payoutMicro: NET_WIN.toString() });
    const win = await until('the win job', () => h.svc.db.walletJob.findFirst({ where: { betId: bet.id, endpoint: 'win' } }));
    return { operator, player, playerRef, bet, win };
  }

  // rgs_wallet_jobs{endpoint="win", state="abandoned"} as /metrics shows it
  const abandonedWinsGauge = async () => {
    const text = await (await fetch(`${h.baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('rgs_wallet_jobs{endpoint="win",state="abandoned"}'));
    return Number(line?.split(' ').pop());
  };
  // the metric is the database's count (other suites of the run leave abandoned jobs too,
  // which may be abandoned meanwhile: the gauge lies between two counts)
  async function expectCountedAsAbandoned() {
    const count = () => h.svc.db.walletJob.count({ where: { endpoint: 'win', abandonedAt: { not: null } } });
    const before = await count();
    const gauge = await abandonedWinsGauge();
    expect(gauge, 'rgs_wallet_jobs{endpoint="win",state="abandoned"}').to.be.within(Math.max(before, 1), await count());
  }

  // the report over a range that holds this test's calls (stamped by the database's clock) and
  // its abandonment (by the service's, which a test moves a day on)
  async function winRowOfReport(operator: TestOperator) {
    const from = new Date(Date.now() - 60 * 60_000).toISOString();
    const to = new Date(Date.now() + WALLET_RETRY_BUDGET_MS + 60 * 60_000).toISOString();
    const report = await operator.request('GET', `/v1/reports/wallet-calls?from=${from}&to=${to}`);
    expect(report.status, report.text).to.equal(200);
    return (report.body.endpoints as { endpoint: string }[]).find((row) => row.endpoint === 'win');
  }

  it('RS_ERROR_TRANSACTION_DOES_NOT_EXIST on the win: win_failed to the player, the win call abandoned in the round view, the metric and the report', async () => {
    h.wallet.setFault('win', { kind: 'status', status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, 1);
    const { operator, player, bet, win } = await winningRound();

    const failed = await player.waitFor('win_failed', (p) => p.betId === bet.id);
    expect(failed).to.have.all.keys('roundId', 'betId', 'reason', 'ts');
    expect(failed).to.include({ roundId: bet.roundId, betId: bet.id, reason: 'wallet_rejected:RS_ERROR_TRANSACTION_DOES_NOT_EXIST' });
    // contract 4.2: treated as settled without payout; nothing was credited
    const settled = await h.svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } });
    expect(settled).to.include({ status: 'SETTLED', payoutMicro: 0n });
    expect(player.messages.some((m) => m.event === 'balance_update' && m.payload.balanceMicro === (START - STAKE + NET_WIN).toString())).to.equal(false);

    // a ticket for a human, as an abandoned job is: not retried
    const job = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: win.id } });
    expect(job).to.include({ attempts: 1, completedAt: null, nextAttemptAt: null, lastError: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' });
    expect(job.abandonedAt).to.be.instanceOf(Date);

    const view = await operator.request('GET', `/v1/rounds/${bet.roundId}`);
    expect(view.status, view.text).to.equal(200);
    expect(view.body).to.include({ state: 'SETTLED', totalPayoutsMicro: '0' });
    expect(view.body.bets[0].winCall).to.deep.equal({
      transactionUuid: settled.winTransactionUuid,
      state: 'abandoned',
      attempts: 1,
      lastError: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST',
    });
    expect(view.body.walletCalls.map((c: { endpoint: string; status: string }) => [c.endpoint, c.status])).to.deep.equal([
      ['bet', 'RS_OK'],
      ['win', 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST'],
    ]);

    await expectCountedAsAbandoned();
    expect(await winRowOfReport(operator)).to.include({ calls: 1, ok: 0, failed: 1, abandonedJobs: 1 });
    expect(h.wallet.violations).to.deep.equal([]);
    player.close();
  });

  it('a win abandoned after 24 hours: win_failed to the player, the win call abandoned in the round view, the metric and the report', async () => {
    h.wallet.setFault('win', { kind: 'http', httpStatus: 500 });
    const { operator, player, playerRef, bet, win } = await winningRound();
    await until('the first failed win', async () => (await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: win.id } })).attempts === 1);
    // while it is retried, the round view says so
    const retrying = await operator.request('GET', `/v1/rounds/${bet.roundId}`);
    expect(retrying.body.bets[0].winCall).to.include({ state: 'pending', attempts: 1, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)' });
    expect(player.messages.some((m) => m.event === 'win_failed')).to.equal(false);

    h.shiftClock(WALLET_RETRY_BUDGET_MS + 60_000);
    shifted += WALLET_RETRY_BUDGET_MS + 60_000;
    const failed = await player.waitFor('win_failed', (p) => p.betId === bet.id);
    expect(failed).to.have.all.keys('roundId', 'betId', 'reason', 'ts');
    expect(failed).to.include({ roundId: bet.roundId, betId: bet.id, reason: 'win_exhausted' });

    // contract 4.2: the stake is refunded and the round voided
    await until('the refund', async () => h.wallet.balanceOf(playerRef, 'EUR') === START);
    // the operator's signed reads need the service's clock back where the operator's is
    h.shiftClock(-shifted);
    shifted = 0;
    const view = await operator.request('GET', `/v1/rounds/${bet.roundId}`);
    expect(view.status, view.text).to.equal(200);
    expect(view.body).to.include({ state: 'VOIDED' });
    expect(view.body.bets[0]).to.include({ status: 'VOIDED' });
    expect(view.body.bets[0].winCall).to.deep.include({ state: 'abandoned', attempts: 2, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)' });

    await expectCountedAsAbandoned();
    expect(await winRowOfReport(operator)).to.include({ calls: 2, ok: 0, failed: 2, abandonedJobs: 1 });
    player.close();
  });

  it('a win credited normally: no win_failed, the win call completed in the round view', async () => {
    const { operator, player, playerRef, bet } = await winningRound();
    await player.waitFor('balance_update', (p) => p.balanceMicro === (START - STAKE + NET_WIN).toString());
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START - STAKE + NET_WIN);
    const view = await operator.request('GET', `/v1/rounds/${bet.roundId}`);
    expect(view.body.bets[0].winCall).to.include({ state: 'completed', attempts: 1, lastError: null });
    expect(player.messages.some((m) => m.event === 'win_failed')).to.equal(false);
    expect(await winRowOfReport(operator)).to.include({ calls: 1, ok: 1, failed: 0, abandonedJobs: 0 });
    player.close();
  });
});
