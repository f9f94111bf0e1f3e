import { expect } from 'chai';
import { GEMS_MATH } from '../../../src/shared/domain/games/gems-math.js';
import { placePlay } from '../../../src/shared/game/plays/place.js';
import { finishInstantPlays } from '../../../src/shared/game/plays/sweep.js';
import { BetDesk } from '../../../src/shared/game/bets/debit.js';
import { resolvePlay } from '../../../src/shared/game/plays/resolve.js';
import { closeServiceContext, createServiceContext } from '../../../src/bootstrap.js';
import { loadConfig } from '../../../src/shared/platform/config.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { until } from '../../support/game.js';
import { checkMoneyInvariants, waitForQuiescence } from '../../support/invariants.js';
import { JACKPOT_SEEDS, gemsOperator, gemsSeed, lost, seatGemsPlayer, triggered, won, type GemsSeat } from '../../support/gems.js';
import type { Player } from '../../support/player.js';
import { unzipSync } from 'fflate';
import { verifyRoundProof } from '../../../src/shared/domain/games/proofs.js';
import { verifyPack, type Jwks } from '../../../src/shared/domain/dispute-pack.js';
import { recallRound } from '../../../src/shared/game/reports/recall.js';
import { uniqueId } from '../../support/harness.js';

// Gem Vault end to end (D41): a play is placed, debited, derived at once from the session's seed
// and nonce, settled, and told; the jackpot's pool is fed by every real-money play and paid
// whole on a hit; one round at a time and minRoundMs between plays; a play left accepted by a
// process that stopped is played and paid by the recovery sweep. Sandbox seeds (D35) fix each
// play's outcome.
describe('the multi-event game, Gem Vault (D41)', function () {
  this.timeout(60_000);
  let h: Harness;
  const players: Player[] = [];

  before(async () => {
    h = await startHarness({}, ['api', 'realtime', 'bet', 'settle', 'rollback']);
  });
  after(async () => {
    for (const player of players) player.close();
    await h?.close();
  });

  const STAKE = 1_000_000n; // 10.00
  const SEED_POOL = 100_000_000n; // the default jackpotSeedMicro
  // the default jackpotRateMicro: 5000 per 1,000,000 debited
  const contribution = (debit: bigint) => (debit * 5000n) / 1_000_000n;

  async function seat(operator: TestOperator, seeds: { serverSeed: string; clientSeed?: string }, overrides: Record<string, unknown> = {}): Promise<GemsSeat> {
    const seated = await seatGemsPlayer(h, operator, seeds, 1_000_000_000n, overrides);
    players.push(seated.player);
    return seated;
  }

  const movements = (seated: GemsSeat) => h.wallet.transactions.filter((t) => t.playerRef === seated.playerRef).map((t) => [t.type, t.amountMicro] as const);
  const bodies = (seated: GemsSeat, endpoint: string) =>
    h.wallet.requests.filter((r) => r.endpoint === endpoint && r.rawBody.includes(seated.playerRef)).map((r) => JSON.parse(r.rawBody));
  const pool = (operator: TestOperator) => h.svc.db.jackpotPool.findUnique({ where: { operatorId_currency: { operatorId: operator.operatorId, currency: 'EUR' } } });

  it('a winning play: the stake debited with its contribution, round_result with every event, the win paid once with the same contribution', async () => {
    const operator = await gemsOperator(h);
    const seated = await seat(operator, { serverSeed: gemsSeed([won], { stakeMicro: STAKE }) });
    expect(seated.connected.roundState).to.equal(null);
    expect(seated.connected.config).to.include({ minBetMicro: '10000', stakeStepMicro: '1000', maxMultiplier: '5000', minRoundMs: 0, featureBuyCost: '67' });
    expect(seated.connected.jackpot).to.deep.equal({ currency: 'EUR', poolMicro: SEED_POOL.toString() });

    const ack = await seated.player.request('play', { amountMicro: STAKE.toString(), clientBetId: 'first' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    expect(result).to.include({ betId: ack.betId, nonce: 0, won: true, featurePurchased: false, costMicro: STAKE.toString() });
    expect(result.jackpotContributionMicro).to.equal(contribution(STAKE).toString());
    expect(result.baseGame.grid).to.have.length(3);
    const sum = result.events.reduce((s: bigint, e: { payoutMicro: string }) => s + BigInt(e.payoutMicro), 0n);
    expect(sum > 0n).to.equal(true);
    expect(result.payoutMicro).to.equal(sum.toString());

    await until('the win', async () => movements(seated).length === 2);
    expect(movements(seated)).to.deep.equal([
      ['bet', STAKE],
      ['win', sum],
    ]);
    expect(bodies(seated, 'bet')[0]).to.include({ amountMicro: STAKE.toString(), jackpotContributionMicro: contribution(STAKE).toString(), roundId: ack.roundId });
    expect(bodies(seated, 'win')[0]).to.include({ amountMicro: sum.toString(), jackpotContributionMicro: contribution(STAKE).toString(), roundId: ack.roundId });

    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: ack.roundId }, include: { cycle: true } });
    expect(round.state).to.equal('SETTLED');
    expect(round.cycle).to.include({ instant: true, phase: 'FINISHED', number: null });
    expect(await pool(operator)).to.include({ poolMicro: SEED_POOL + contribution(STAKE), contributedMicro: contribution(STAKE), paidMicro: 0n, hits: 0 });
    expect(h.wallet.violations).to.deep.equal([]);
  });

  it('a bought feature debits featureBuyCost times the stake and plays the feature with no base spin', async () => {
    const operator = await gemsOperator(h);
    const seated = await seat(operator, { serverSeed: gemsSeed([() => true], { stakeMicro: STAKE, featureBuy: true }) });
    const ack = await seated.player.request('play', { amountMicro: STAKE.toString(), featureBuy: true });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const placed = await seated.player.waitFor('bet_placed', (p) => p.betId === ack.betId);
    const cost = STAKE * GEMS_MATH.featureBuyCost;
    expect(placed).to.include({ amountMicro: cost.toString(), featureBuy: true });
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    expect(result).to.include({ featurePurchased: true, costMicro: cost.toString(), baseGame: null, jackpotContributionMicro: contribution(cost).toString() });
    expect(result.events[0]).to.deep.include({ type: 'FEATURE_TRIGGER' });
    expect(result.events[0].subOutcome).to.include({ purchased: true, freeSpins: 8 });
    expect(result.events.filter((e: { type: string }) => e.type === 'FREE_SPIN').length).to.be.at.least(1);
    await until('settled', async () => (await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } })).status === 'SETTLED');
    expect(movements(seated)[0]).to.deep.equal(['bet', cost]);
    const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } });
    expect(bet).to.include({ amountMicro: cost, featureBuy: true, payoutMicro: BigInt(result.payoutMicro) });
  });

  it('a feature triggered by the base spin: its scatters, the multiplier, and each free spin as an event', async () => {
    const operator = await gemsOperator(h);
    const seated = await seat(operator, { serverSeed: gemsSeed([triggered], { stakeMicro: STAKE }) });
    const ack = await seated.player.request('play', { amountMicro: STAKE.toString() });
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    const trigger = result.events.find((e: { type: string }) => e.type === 'FEATURE_TRIGGER');
    expect(trigger.subOutcome).to.include({ purchased: false, freeSpins: 8 });
    expect(trigger.subOutcome.scatters).to.be.at.least(3);
    const spins = result.events.filter((e: { type: string }) => e.type === 'FREE_SPIN');
    expect(spins.map((s: { subOutcome: { spin: number } }) => s.subOutcome.spin)).to.deep.equal([...Array(spins.length).keys()]);
    const sum = result.events.reduce((s: bigint, e: { payoutMicro: string }) => s + BigInt(e.payoutMicro), 0n);
    expect(result.payoutMicro).to.equal(sum.toString());
  });

  it('refuses a play within minRoundMs of the previous one (round_too_soon) and one while the previous is in play, with no wallet call', async () => {
    const operator = await gemsOperator(h, { minRoundMs: 60_000 });
    const seated = await seat(operator, { serverSeed: gemsSeed([lost, lost], { stakeMicro: STAKE }) });
    const first = await seated.player.request('play', { amountMicro: STAKE.toString() });
    expect(first.ok).to.equal(true);
    await seated.player.waitFor('round_result', (p) => p.roundId === first.roundId);
    // round_result may come before the settlement commits (the play is then still in play)
    await until('settled', async () => (await h.svc.db.bet.findUniqueOrThrow({ where: { id: first.betId } })).status === 'SETTLED');
    expect(await seated.player.request('play', { amountMicro: STAKE.toString(), clientBetId: 'soon' })).to.deep.equal({ ok: false, reason: 'round_too_soon' });
    await seated.player.waitFor('bet_rejected', (p) => p.reason === 'round_too_soon' && p.clientBetId === 'soon');
    h.shiftClock(60_000);
    const later = await seated.player.request('play', { amountMicro: STAKE.toString() });
    expect(later.ok, JSON.stringify(later)).to.equal(true);
    expect(movements(seated)).to.deep.equal([
      ['bet', STAKE],
      ['bet', STAKE],
    ]);

    // two plays of one session at the same moment: one is played, the other refused
    const operator2 = await gemsOperator(h);
    const twice = await seat(operator2, { serverSeed: gemsSeed([lost, lost], { stakeMicro: STAKE }) });
    const acks = await Promise.all([twice.player.request('play', { amountMicro: STAKE.toString() }), twice.player.request('play', { amountMicro: STAKE.toString() })]);
    expect(acks.filter((a) => a.ok)).to.have.length(1);
    expect(acks.filter((a) => !a.ok).map((a) => a.reason)).to.deep.equal(['already_bet_this_round']);
  });

  it('refuses a stake out of range, a bought feature where it is off, a malformed play, and place_bet in a Gem Vault session', async () => {
    const operator = await gemsOperator(h, { featureBuy: 'off' });
    const seated = await seat(operator, { serverSeed: gemsSeed([lost], { stakeMicro: STAKE }) });
    expect(seated.connected.config.featureBuyCost).to.equal(undefined);
    expect(await seated.player.request('play', { amountMicro: '1' })).to.deep.equal({ ok: false, reason: 'bet_out_of_range' });
    expect(await seated.player.request('play', { amountMicro: STAKE.toString(), featureBuy: true })).to.deep.equal({ ok: false, reason: 'invalid_payload' });
    expect(await seated.player.request('play', { amountMicro: 1.5 })).to.deep.equal({ ok: false, reason: 'invalid_payload' });
    expect(await seated.player.request('play', { amountMicro: STAKE.toString(), side: 'LOW' })).to.deep.equal({ ok: false, reason: 'invalid_payload' });
    expect(await seated.player.request('place_bet', { amountMicro: STAKE.toString() })).to.deep.equal({ ok: false, reason: 'invalid_payload' });
    expect(movements(seated)).to.deep.equal([]);
  });

  it('two jackpot hits at the same moment: each is paid the pool it was given, one after the other, and the pool is conserved', async () => {
    const operator = await gemsOperator(h);
    const a = await seat(operator, JACKPOT_SEEDS);
    const b = await seat(operator, JACKPOT_SEEDS);
    const jackpotTold = a.player.waitFor('jackpot', (p) => p.hit !== undefined);
    const acks = await Promise.all([a.player.request('play', { amountMicro: STAKE.toString() }), b.player.request('play', { amountMicro: STAKE.toString() })]);
    expect(acks.every((ack) => ack.ok), JSON.stringify(acks)).to.equal(true);
    const results = await Promise.all([
      a.player.waitFor('round_result', (p) => p.roundId === acks[0].roundId),
      b.player.waitFor('round_result', (p) => p.roundId === acks[1].roundId),
    ]);
    const jackpots = results.map((r) => BigInt(r.events.find((e: { type: string }) => e.type === 'JACKPOT').payoutMicro)).sort();
    const c = contribution(STAKE);
    // the first hit takes the seed and its own contribution; the second, the new seed and its own
    expect(jackpots).to.deep.equal([SEED_POOL + c, SEED_POOL + c]);
    const row = (await pool(operator))!;
    expect(row).to.include({ hits: 2, poolMicro: SEED_POOL, contributedMicro: 2n * c, paidMicro: 2n * (SEED_POOL + c), seededMicro: 3n * SEED_POOL });
    expect(row.seededMicro + row.contributedMicro - row.paidMicro).to.equal(row.poolMicro);
    // the report shows the pool as it stands, with what went in and out
    const range = `from=${new Date(h.svc.now().getTime() - 3_600_000).toISOString()}&to=${new Date(h.svc.now().getTime() + 3_600_000).toISOString()}`;
    const report = await operator.request('GET', `/v1/reports/ggr?${range}`, undefined, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });
    expect(report.status, report.text).to.equal(200);
    expect(report.body.jackpots).to.have.length(1);
    expect(report.body.jackpots[0]).to.include({
      currency: 'EUR',
      poolMicro: SEED_POOL.toString(),
      seededMicro: (3n * SEED_POOL).toString(),
      contributedMicro: (2n * c).toString(),
      paidMicro: (2n * (SEED_POOL + c)).toString(),
      hits: 2,
    });
    const told = await jackpotTold;
    expect(told).to.include({ currency: 'EUR', poolMicro: SEED_POOL.toString() });
    await until('both wins', async () => movements(a).length === 2 && movements(b).length === 2);
    for (const [seated, result] of [
      [a, results[0]],
      [b, results[1]],
    ] as const) {
      expect(movements(seated)).to.deep.equal([
        ['bet', STAKE],
        ['win', BigInt(result.payoutMicro)],
      ]);
    }
  });

  it('two jackpot hits derived at the same instant by two processes: one takes the pool, the other what it holds after, conserved', async () => {
    const operator = await gemsOperator(h);
    const a = await seat(operator, JACKPOT_SEEDS);
    const b = await seat(operator, JACKPOT_SEEDS);
    // each play placed and debited, then left for its process to derive (as resolvePlay does
    // after the ack), here two processes' own database pools and Redis connections
    const accepted = [];
    for (const seated of [a, b]) {
      const placed = await placePlay(h.svc, { sessionId: seated.sessionId, amountMicro: STAKE, featureBuy: false }, null);
      const ticket = placed.ok ? placed.ticket : undefined;
      expect(await new BetDesk(h.svc).process(ticket!)).to.deep.include({ ok: true });
      accepted.push(ticket!);
    }
    const other = await createServiceContext(loadConfig({ ...process.env, WALLET_CALL_TIMEOUT_MS: '1000', ROLES: 'realtime' }));
    try {
      const decided = await Promise.all([resolvePlay(h.svc, accepted[0]!), resolvePlay(other, accepted[1]!)]);
      expect(decided).to.deep.equal([true, true]);
    } finally {
      await closeServiceContext(other);
    }
    const c = contribution(STAKE);
    const rounds = await h.svc.db.round.findMany({ where: { id: { in: accepted.map((t) => t.roundId) } } });
    const paid = rounds.map((r) => BigInt((r.outcome as { events: { type: string; payoutMicro: string }[] }).events.find((e) => e.type === 'JACKPOT')!.payoutMicro));
    // whichever came first took the seed and its contribution; the second, the new seed and its own
    expect(paid.sort()).to.deep.equal([SEED_POOL + c, SEED_POOL + c]);
    expect(await pool(operator)).to.include({ hits: 2, poolMicro: SEED_POOL, seededMicro: 3n * SEED_POOL, contributedMicro: 2n * c, paidMicro: 2n * (SEED_POOL + c) });
    await until('both wins', async () => movements(a).length === 2 && movements(b).length === 2);
  });

  it('a play whose debit was accepted when its process stopped is played and paid once by the recovery sweep', async () => {
    const operator = await gemsOperator(h);
    const seated = await seat(operator, { serverSeed: gemsSeed([won], { stakeMicro: STAKE }) });
    // the placement and the debit, as the stopped process made them, and nothing after
    const placed = await placePlay(h.svc, { sessionId: seated.sessionId, amountMicro: STAKE, featureBuy: false }, null);
    expect(placed.ok).to.equal(true);
    const ticket = placed.ok ? placed.ticket : undefined;
    expect(await new BetDesk(h.svc).process(ticket!)).to.deep.include({ ok: true });
    expect((await h.svc.db.round.findUniqueOrThrow({ where: { id: ticket!.roundId } })).state).to.equal('ROLLING');
    // left to its process for a moment, then the sweep's
    expect(await finishInstantPlays(h.svc)).to.deep.equal({ instantPlaysResolved: 0, instantPlaysSettled: 0 });
    h.shiftClock(10_000);
    const [first, second] = await Promise.all([finishInstantPlays(h.svc), finishInstantPlays(h.svc)]);
    expect(first.instantPlaysResolved + second.instantPlaysResolved).to.equal(1);
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === ticket!.roundId);
    await until('the win', async () => movements(seated).length === 2);
    expect(movements(seated)).to.deep.equal([
      ['bet', STAKE],
      ['win', BigInt(result.payoutMicro)],
    ]);
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: ticket!.roundId }, include: { cycle: true } });
    expect(round.state).to.equal('SETTLED');
    expect(round.cycle.phase).to.equal('FINISHED');
    expect(await finishInstantPlays(h.svc)).to.deep.equal({ instantPlaysResolved: 0, instantPlaysSettled: 0 });
  });

  it('a demo play feeds no pool and moves no real money', async () => {
    const operator = await gemsOperator(h);
    const seated = await seat(operator, { serverSeed: gemsSeed([lost], { stakeMicro: STAKE }) }, { mode: 'demo' });
    const ack = await seated.player.request('play', { amountMicro: STAKE.toString() });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await seated.player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    expect(await pool(operator)).to.equal(null);
    expect(h.wallet.requests.filter((r) => r.rawBody.includes(seated.playerRef) && r.endpoint === 'bet')).to.deep.equal([]);
  });

  it('GET /v1/games lists Gem Vault for an operator with its configuration, with its pool', async () => {
    const operator = await gemsOperator(h);
    const response = await operator.request('GET', '/v1/games', undefined, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });
    expect(response.status, response.text).to.equal(200);
    const gems = response.body.games.find((g: { gameCode: string }) => g.gameCode === 'gems');
    expect(gems).to.include({ kind: 'instant', name: 'Gem Vault', rtp: '0.954588', maxMultiplier: '5000' });
    expect(gems.features).to.deep.equal(['free_spins', 'feature_buy', 'jackpot']);
    expect(gems.currencies[0]).to.include({ currency: 'EUR', minBetMicro: '10000', jackpotPoolMicro: SEED_POOL.toString() });
  });

  it('a settled play\'s evidence: its proof re-derives every event (rgs verify), its dispute pack verifies, its reads show the play', async () => {
    const operator = await gemsOperator(h);
    const seated = await seat(operator, { serverSeed: gemsSeed([triggered], { stakeMicro: STAKE }) });
    const ack = await seated.player.request('play', { amountMicro: STAKE.toString() });
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    await until('settled', async () => (await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } })).status === 'SETTLED');
    const now = { timestamp: Math.floor(h.svc.now().getTime() / 1000) };
    expect((await operator.request('POST', `/v1/session/${seated.sessionId}/terminate`, undefined, now)).status).to.equal(200);

    const proof = await operator.request('GET', `/v1/rounds/${ack.roundId}/proof`, undefined, now);
    expect(proof.status, proof.text).to.equal(200);
    expect(proof.body).to.include({ gameCode: 'gems', rngVersion: 'gems-hmac-sha256-v1', stakeMicro: STAKE.toString(), payoutMicro: result.payoutMicro, jackpotRateMicro: '5000' });
    expect(proof.body.outcome).to.deep.equal({
      type: 'MULTI',
      baseGame: result.baseGame,
      events: result.events,
      featurePurchased: false,
      jackpotContributionMicro: result.jackpotContributionMicro,
    });
    const verdict = verifyRoundProof(proof.body);
    expect(verdict.checks.filter((c) => !c.ok)).to.deep.equal([]);
    expect(verdict.valid).to.equal(true);

    const round = await operator.request('GET', `/v1/rounds/${ack.roundId}`, undefined, now);
    expect(round.status, round.text).to.equal(200);
    expect(round.body).to.include({ gameCode: 'gems', state: 'SETTLED', totalBetsMicro: STAKE.toString(), totalPayoutsMicro: result.payoutMicro });
    expect(round.body.bets[0]).to.include({ featureBuy: false });
    expect(round.body).to.deep.include({ won: true, featurePurchased: false, baseGame: result.baseGame, events: result.events });

    const pack = await operator.request('GET', `/v1/rounds/${ack.roundId}/dispute-pack`, undefined, now);
    expect(pack.status, pack.text).to.equal(200);
    const files = new Map(Object.entries(unzipSync(pack.bytes)));
    const jwks = (await (await fetch(`${h.baseUrl}/v1/keys`)).json()) as Jwks;
    const packed = verifyPack(files, jwks);
    expect(packed.checks.filter((c) => !c.ok)).to.deep.equal([]);
    const sheet = JSON.parse(Buffer.from(files.get('par-sheet.json')!).toString('utf8'));
    expect(sheet).to.include({ gameCode: 'gems', currency: 'EUR', payoutRounding: 'exact' });

    const recalled = (await recallRound(h.svc, operator.operatorId, ack.roundId))!;
    expect(recalled).to.include({ gameCode: 'gems', won: true, payoutMicro: result.payoutMicro, amountMicro: STAKE.toString() });
    expect(recalled.events).to.deep.equal(result.events);
  });

  it('a free play of a campaign of bought features (D42): the grant spent, its stake sent isFree, the payout booked net of it', async () => {
    const operator = await gemsOperator(h);
    const playerRef = uniqueId('player');
    const now = { timestamp: Math.floor(h.svc.now().getTime() / 1000) };
    // made under the service's clock, which earlier tests moved
    const body = {
      campaignRef: uniqueId('camp'),
      gameCode: 'gems',
      currency: 'EUR',
      stakeMicro: STAKE.toString(),
      rounds: 1,
      playerRefs: [playerRef],
      featureBuy: true,
      expiresAt: new Date(h.svc.now().getTime() + 86_400_000).toISOString(),
    };
    const created = await operator.request('POST', '/v1/freebets', body, now);
    expect(created.status, created.text).to.equal(201);
    const grants = await h.svc.db.freeBetGrant.findMany({ where: { campaignId: created.body.campaignId } });
    const made = { campaignRef: body.campaignRef, grantOf: new Map(grants.map((g) => [g.playerRef, g.id])) };
    const grantId = made.grantOf.get(playerRef)!;
    const seated = await seat(operator, { serverSeed: gemsSeed([() => true], { stakeMicro: STAKE, featureBuy: true }) }, { playerRef });
    expect(seated.connected.freeBets).to.have.length(1);
    expect(seated.connected.freeBets[0]).to.include({ grantId, stakeMicro: STAKE.toString(), remaining: 1, featureBuy: true });
    // a free play names its grant and nothing else: its feature buy is the campaign's
    expect(await seated.player.request('play', { freeBetGrantId: grantId, featureBuy: false })).to.deep.equal({ ok: false, reason: 'invalid_payload' });
    const ack = await seated.player.request('play', { freeBetGrantId: grantId });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    const cost = STAKE * GEMS_MATH.featureBuyCost;
    expect(result).to.include({ featurePurchased: true, costMicro: cost.toString() });
    await seated.player.waitFor('free_bets', (p) => p.freeBets.length === 0);
    // D42: the debit carries the grant's stake, marked free; the payout is booked net of it
    const debit = bodies(seated, 'bet')[0];
    expect(debit).to.include({ amountMicro: STAKE.toString(), isFree: true, bonusRef: made.campaignRef, jackpotContributionMicro: contribution(cost).toString() });
    const gross = result.events.reduce((sum: bigint, e: { payoutMicro: string }) => sum + BigInt(e.payoutMicro), 0n);
    const net = gross > STAKE ? gross - STAKE : 0n;
    expect(result.payoutMicro).to.equal(gross.toString());
    await until('settled', async () => (await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } })).status === 'SETTLED');
    const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } });
    expect(bet).to.include({ isFree: true, freeBetGrantId: grantId, amountMicro: STAKE, featureBuy: true, payoutMicro: net });
    // the grant is spent: another free play is refused
    expect(await seated.player.request('play', { freeBetGrantId: grantId })).to.deep.equal({ ok: false, reason: 'free_bet_unavailable' });
  });

  // D41 with every rule of the fault suite: each bet's wallet movements, the balances, the free
  // bets, and each pool against its plays, over every play above
  it('every play above keeps the money invariants and the jackpot pools their plays\' sums', async () => {
    const operatorIds = (await h.svc.db.operator.findMany({ where: { walletUrl: h.wallet.url }, select: { id: true } })).map((o) => o.id);
    await waitForQuiescence(h.svc.db, { operatorIds, timeoutMs: 20_000 });
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds })).to.deep.equal([]);
  });
});
