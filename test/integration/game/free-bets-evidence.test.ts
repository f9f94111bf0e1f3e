import { expect } from 'chai';
import { unzipSync } from 'fflate';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { recallRound } from '../../../src/shared/game/reports/recall.js';
import { verifyPack, type Jwks } from '../../../src/shared/domain/dispute-pack.js';
import { verifyCrashProof } from '../../../src/shared/domain/games/crash.js';
import { curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tick, until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { crashOperator, crashSeed, seatCrashPlayer } from '../../support/crash.js';
import { createCampaign } from '../../support/freebets.js';

// D42: a free bet in the evidence and the reports (contract 8.4: no stake was debited). The
// round view, the rounds listing and the round's detail mark it free with its campaign
// (bonusRef) and count its stake 0; the recall says so; its dispute pack and its crash proof
// verify with its payout booked net; GGR counts its stake 0 and its net payout. Exact amounts:
// dice at x2.5 without commission, LOW always wins, stakes of 1000000 micro-units (10.00).
describe('free bets in the round view, recall, dispute pack and GGR (D42, contract 8.4)', function () {
  this.timeout(90_000);
  let h: Harness;
  let operator: TestOperator;
  let campaignRef: string;
  let grantId: string;
  const FUNDS = 10_000_000n;
  const STAKE = 1_000_000n;
  const MINUTE = 60_000;
  // x2.5, no commission: a won paid bet is paid 2500000, a won free bet its net 1500000
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

  const campaign = (as: TestOperator, playerRefs: string[], gameCode = 'dice') =>
    createCampaign(h, as, { playerRefs, stakeMicro: STAKE, rounds: 1, gameCode });

  const keys = async (): Promise<Jwks> => (await (await fetch(`${h.baseUrl}/v1/keys`)).json()) as Jwks;
  const packOf = async (as: TestOperator, roundId: string) => {
    const response = await as.request('GET', `/v1/rounds/${roundId}/dispute-pack`);
    expect(response.status, response.text).to.equal(200);
    const files = unzipSync(response.bytes);
    return { files: new Map(Object.entries(files)), json: (name: string) => JSON.parse(Buffer.from(files[name]!).toString('utf8')) };
  };
  const failed = (verdict: { checks: { name: string; ok: boolean; detail?: unknown }[] }) => verdict.checks.filter((c) => !c.ok);

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
    // stakes: the paid bet's only; payouts: the paid bet's gross and the free bet's net
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

  it('the dispute pack of a won and of a lost free dice bet verifies: the payout booked net, the debit isFree with the campaign', async () => {
    const jwks = await keys();
    for (const roundId of [seats.freeWon.roundId!, seats.freeLost.roundId!, seats.paid.roundId!]) {
      const { files } = await packOf(operator, roundId);
      const verdict = verifyPack(files, jwks);
      expect(failed(verdict), roundId).to.deep.equal([]);
      expect(verdict.valid).to.equal(true);
    }
    const { files, json } = await packOf(operator, seats.freeWon.roundId!);
    expect(json('round.json')).to.include({ isFree: true, bonusRef: campaignRef, totalBetsMicro: '0', totalPayoutsMicro: NET.toString() });
    expect(json('bets.json')[0]).to.include({ isFree: true, bonusRef: campaignRef, payoutMicro: NET.toString() });
    const verdict = verifyPack(files, jwks);
    expect(verdict.checks.find((c) => c.name === 'payout')).to.deep.include({ ok: true });
    expect(verdict.checks.find((c) => c.name === 'free_bet')).to.deep.include({ ok: true });

    // a pack whose bet claims to be free when its debit was not, or the reverse, fails
    const paid = await packOf(operator, seats.paid.roundId!);
    const forged = new Map(paid.files);
    const bets = paid.json('bets.json');
    bets[0].isFree = true;
    forged.set('bets.json', Buffer.from(`${JSON.stringify(bets, null, 2)}\n`));
    expect(failed(verifyPack(forged, jwks)).map((c) => c.name)).to.include('free_bet');
  });

  it('crash: a free bet cashed out by hand has a proof and a dispute pack that verify, the payout booked net', async () => {
    const { serverSeed } = crashSeed(300n, 500n);
    const crash = await crashOperator(h);
    const playerRef = uniqueId('player');
    const made = await campaign(crash, [playerRef], 'crash');
    const seated = await seatCrashPlayer(h, crash, serverSeed, 100_000_000n, { playerRef });
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: crash.operatorId, gameCode: 'crash', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    const ack = await seated.player.request('place_bet', { freeBetGrantId: made.grantOf.get(playerRef) });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await tick(h, { cycleId: pending.id, from: 'BETTING_OPEN' });
    const cycle = await h.svc.db.cycle.findUniqueOrThrow({ where: { id: pending.id } });
    h.shiftClock(curveTime(200n) - (h.svc.now().getTime() - cycle.flightStartedAt!.getTime()) + 5);
    const out = await seated.player.request('cash_out', {});
    expect(out.ok, JSON.stringify(out)).to.equal(true);
    const cents = BigInt(out.cashOutMultiplier.replace('.', ''));
    const net = (STAKE * cents) / 100n - STAKE;
    await until('the round settled', async () => (await h.svc.db.round.findUnique({ where: { id: ack.roundId } }))?.state === 'SETTLED', 20_000);
    await waitForQuiescence(h.svc.db, { operatorIds: [crash.operatorId], timeoutMs: 20_000 });
    expect((await crash.request('POST', `/v1/session/${seated.sessionId}/terminate`)).status).to.equal(200);
    seated.player.close();

    const proof = await crash.request('GET', `/v1/rounds/${ack.roundId}/proof`);
    expect(proof.status, proof.text).to.equal(200);
    expect(proof.body.bet).to.include({ amountMicro: STAKE.toString(), payoutMicro: net.toString(), isFree: true });
    const verdict = verifyCrashProof(proof.body);
    expect(failed(verdict)).to.deep.equal([]);

    const { files, json } = await packOf(crash, ack.roundId);
    expect(json('round.json')).to.include({ isFree: true, bonusRef: made.campaignRef, totalBetsMicro: '0', totalPayoutsMicro: net.toString() });
    const pack = verifyPack(files, await keys());
    expect(failed(pack)).to.deep.equal([]);
  });
});
