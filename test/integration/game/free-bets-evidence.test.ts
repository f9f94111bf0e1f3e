import { expect } from 'chai';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { recallRound } from '../../../src/shared/game/reports/recall.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tick, until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { waitForQuiescence } from '../../support/invariants.js';

// D42: a free bet in the evidence and the reports (contract 8.4: no stake was debited). The
// round view, the rounds listing and the round's detail mark it free with its campaign
// (bonusRef) and count its stake 0; the recall says so; GGR counts its stake 0 and its net
// payout. Exact amounts:
// dice at x2.5 without commission, LOW always wins, stakes of 1.00.
describe('free bets in the round view, recall and GGR (D42, contract 8.4)', function () {
  this.timeout(90_000);
  let h: Harness;
  let operator: TestOperator;
  let campaignRef: string;
  let grantId: string;
  const FUNDS = 10_000_000n;
  const STAKE = 1_000_000n;
  const MINUTE = 60_000;
  // x2.5, no commission: a won paid bet is paid 2.50, a won free bet its net 1.50
  const GROSS = 2_500_000n;
  const NET = GROSS - STAKE;
  const seats: Record<'freeWon' | 'freeLost' | 'paid', { player: Player; playerRef: string; sessionId: string; roundId?: string }> = {} as never;

  const seat = async (as: TestOperator, playerRef: string) => {
    h.wallet.setBalance(playerRef, 'EUR', FUNDS);
    const launch = await as.request('POST', '/v1/session', as.sessionBody({ playerRef }));
    expect(launch.status, launch.text).to.equal(200);
    const player = await Player.connect(h.baseUrl, launch.body.sessionToken as string);
    await player.waitFor('connected');
    return { player, playerRef, sessionId: launch.body.sessionId as string };
  };

  const campaign = async (as: TestOperator, playerRefs: string[], gameCode = 'dice') => {
    const ref = uniqueId('camp').replace(/[^A-Za-z0-9._:-]/g, '-');
    const created = await as.request('POST', '/v1/freebets', {
      campaignRef: ref,
      gameCode,
      currency: 'EUR',
      stakeMicro: STAKE.toString(),
      rounds: 1,
      playerRefs,
      expiresAt: new Date(h.svc.now().getTime() + 7 * 24 * 60 * MINUTE).toISOString(),
    });
    expect(created.status, created.text).to.equal(201);
    const grants = await h.svc.db.freeBetGrant.findMany({ where: { campaignId: created.body.campaignId as string } });
    return { campaignRef: ref, grantOf: new Map(grants.map((g) => [g.playerRef, g.id])) };
  };

  before(async () => {
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
    operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n, payoutMultiplierScaled: 250000n, commissionMicro: 0n });
    const freeWon = uniqueId('player');
    const freeLost = uniqueId('player');
    const made = await campaign(operator, [freeWon, freeLost]);
    campaignRef = made.campaignRef;
    grantId = made.grantOf.get(freeWon)!;
    seats.freeWon = await seat(operator, freeWon);
    seats.freeLost = await seat(operator, freeLost);
    seats.paid = await seat(operator, uniqueId('player'));
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    const acks = await Promise.all([
      seats.freeWon.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId }),
      seats.freeLost.player.request('place_bet', { side: 'HIGH', freeBetGrantId: made.grantOf.get(freeLost) }),
      seats.paid.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() }),
    ]);
    expect(acks.every((a) => a.ok), JSON.stringify(acks)).to.equal(true);
    seats.freeWon.roundId = acks[0].roundId;
    seats.freeLost.roundId = acks[1].roundId;
    seats.paid.roundId = acks[2].roundId;
    await tick(h, { cycleId: pending.id, from: 'BETTING_OPEN' });
    await tick(h, { cycleId: pending.id, from: 'ROLLING' });
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    // the settled amounts the reads below must tell: the free bet's payout is booked net
    const freeBet = await h.svc.db.bet.findFirstOrThrow({ where: { roundId: seats.freeWon.roundId } });
    expect(freeBet).to.include({ isFree: true, amountMicro: STAKE, payoutMicro: NET, status: 'SETTLED' });
    expect(h.wallet.balanceOf(freeWon, 'EUR')).to.equal(FUNDS + NET);
    // the sessions end: their seeds are revealed, so the packs carry proofs to recompute
    for (const s of Object.values(seats)) {
      expect((await operator.request('POST', `/v1/session/${s.sessionId}/terminate`)).status).to.equal(200);
      s.player.close();
    }
  });
  after(() => h?.close());

  it('GET /v1/rounds/{roundId}: a free bet is marked free with its campaign, its round counts stake 0 and the net paid', async () => {
    const free = await operator.request('GET', `/v1/rounds/${seats.freeWon.roundId}`);
    expect(free.status, free.text).to.equal(200);
    expect(free.body).to.include({ isFree: true, bonusRef: campaignRef, totalBetsMicro: '0', totalPayoutsMicro: NET.toString() });
    expect(free.body.bets).to.have.length(1);
    expect(free.body.bets[0]).to.include({ isFree: true, bonusRef: campaignRef, freeBetGrantId: grantId, amountMicro: STAKE.toString(), payoutMicro: NET.toString() });
    const lost = await operator.request('GET', `/v1/rounds/${seats.freeLost.roundId}`);
    expect(lost.body).to.include({ isFree: true, bonusRef: campaignRef, totalBetsMicro: '0', totalPayoutsMicro: '0' });
    const paid = await operator.request('GET', `/v1/rounds/${seats.paid.roundId}`);
    expect(paid.body).to.include({ isFree: false, bonusRef: null, totalBetsMicro: STAKE.toString(), totalPayoutsMicro: GROSS.toString() });
    expect(paid.body.bets[0]).to.include({ isFree: false, bonusRef: null, freeBetGrantId: null });
  });

  it('GET /v1/rounds lists the free rounds as free, with their campaign', async () => {
    const listed = await operator.request('GET', '/v1/rounds?limit=500');
    expect(listed.status, listed.text).to.equal(200);
    const byId = new Map((listed.body.rounds as Record<string, unknown>[]).map((r) => [r.roundId, r]));
    expect(byId.get(seats.freeWon.roundId)).to.include({ isFree: true, bonusRef: campaignRef, totalBetsMicro: '0', totalPayoutsMicro: NET.toString() });
    expect(byId.get(seats.freeLost.roundId)).to.include({ isFree: true, bonusRef: campaignRef, totalBetsMicro: '0', totalPayoutsMicro: '0' });
    expect(byId.get(seats.paid.roundId)).to.include({ isFree: false, bonusRef: null, totalBetsMicro: STAKE.toString() });
  });

  it('GET /v1/reports/ggr: a free bet\'s stake counts 0 and its payout the net paid', async () => {
    const from = new Date(h.svc.now().getTime() - 60 * MINUTE).toISOString();
    const to = new Date(h.svc.now().getTime() + 60 * MINUTE).toISOString();
    const report = await operator.request('GET', `/v1/reports/ggr?from=${from}&to=${to}`);
    expect(report.status, report.text).to.equal(200);
    // stakes: the paid 1.00 only; payouts: the paid 2.50 and the free net 1.50
    expect(report.body.games).to.deep.equal([
      {
        gameCode: 'dice',
        currency: 'EUR',
        rounds: 3,
        bets: 3,
        stakesMicro: STAKE.toString(),
        payoutsMicro: (GROSS + NET).toString(),
        ggrMicro: (STAKE - GROSS - NET).toString(),
        voidedRounds: 0,
        sandbox: false,
      },
    ]);
  });

  it('the recall: a free bet is marked free with its campaign; the balance before is the debit\'s, which took nothing', async () => {
    const recalled = (await recallRound(h.svc, operator.operatorId, seats.freeWon.roundId!))!;
    expect(recalled).to.include({ isFree: true, bonusRef: campaignRef, amountMicro: STAKE.toString(), won: true, payoutMicro: NET.toString() });
    expect(recalled.balanceBefore).to.deep.equal({ micro: FUNDS.toString(), gap: null });
    expect(recalled.balanceAfter).to.deep.equal({ micro: (FUNDS + NET).toString(), gap: null });
    const paid = (await recallRound(h.svc, operator.operatorId, seats.paid.roundId!))!;
    expect(paid).to.include({ isFree: false, bonusRef: null });
  });
});
