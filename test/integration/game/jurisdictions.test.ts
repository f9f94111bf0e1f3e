import { expect } from 'chai';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { setJurisdiction } from '../../../src/shared/game/operators/jurisdictions.js';
import { recallRound } from '../../../src/shared/game/reports/recall.js';
import { LooserOverrideError } from '../../../src/shared/domain/jurisdictions.js';
import { curveCents, curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { centsText } from '../../../src/shared/domain/games/crash.js';
import { cashOut } from '../../../src/shared/game/rounds/flight.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tick, until } from '../../support/game.js';
import { crashOperator, crashSeed, seatCrashPlayer } from '../../support/crash.js';
import { gemsOperator, gemsSeed, lost, seatGemsPlayer } from '../../support/gems.js';
import { createCampaign } from '../../support/freebets.js';
import { Player } from '../../support/player.js';
import { unzipSync } from 'fflate';
import { verifyPack, type Jwks } from '../../../src/shared/domain/dispute-pack.js';

// Jurisdiction profiles end to end (D44): what connected tells, each refusal for a shared
// round's game and an instant one (no wallet call for any), the reality check and its
// acknowledgement, a check falling due in a crash flight, the player's net position, a play
// carried on across sessions, an operator's overrides, and every read naming the profile. The
// clock is moved by hand (no scheduler runs), so each bet's round is the test's to open.
describe('jurisdiction profiles (D44)', function () {
  this.timeout(90_000);
  let h: Harness;
  const players: Player[] = [];

  // what a test undoes once it is over, passed or failed
  const undo: (() => void)[] = [];
  afterEach(() => {
    for (const step of undo.splice(0)) step();
  });

  before(async () => {
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
  });
  after(async () => {
    for (const player of players) player.close();
    await h?.close();
  });

  const STAKE = 100_000n; // 1.00

  type Seat = { player: Player; playerRef: string; sessionId: string; connected: any };

  // a funded dice player of the operator, launched under `jurisdiction`
  async function seatDice(operator: TestOperator, jurisdiction: string, extra: Record<string, unknown> = {}): Promise<Seat> {
    const body = operator.sessionBody({ jurisdiction, ...extra });
    const playerRef = body.playerRef as string;
    h.wallet.setBalance(playerRef, 'EUR', 100_000_000n);
    const launch = await operator.request('POST', '/v1/session', body, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });
    expect(launch.status, launch.text).to.equal(200);
    const player = await Player.connect(h.baseUrl, launch.body.sessionToken as string);
    players.push(player);
    return { player, playerRef, sessionId: launch.body.sessionId as string, connected: await player.waitFor('connected') };
  }

  // dice with a long betting window, so that moving the service's clock does not close it
  const diceOperator = () => operatorWith(h, { bettingWindowMs: 120_000 });

  const engine = (operator: TestOperator, gameCode = 'dice') => ({ operatorId: operator.operatorId, gameCode, currency: 'EUR' });

  // the operator's next cycle open for bets: the first is opened by the test (PENDING ->
  // BETTING_OPEN), one after `after` opens as the previous one finishes
  async function openBetting(operator: TestOperator, gameCode = 'dice', after?: string): Promise<string> {
    const next = await until('the cycle', async () => {
      const cycle = await currentCycle(h.svc, engine(operator, gameCode));
      return cycle && cycle.id !== after && (cycle.phase === 'PENDING' || cycle.phase === 'BETTING_OPEN') ? cycle : null;
    });
    if (next.phase === 'PENDING') await tick(h, { cycleId: next.id, from: 'PENDING' });
    return next.id;
  }

  // a dice cycle played to its end, its bets settled, and the next one opened
  async function playOn(operator: TestOperator, cycleId: string): Promise<string> {
    for (const from of ['BETTING_OPEN', 'ROLLING', 'RESULT', 'COOLDOWN'] as const) await tick(h, { cycleId, from });
    return openBetting(operator, 'dice', cycleId);
  }

  const movements = (seat: Pick<Seat, 'playerRef'>) => h.wallet.transactions.filter((t) => t.playerRef === seat.playerRef).map((t) => t.type);

  const bet = (seat: Seat, amountMicro = STAKE, extra: Record<string, unknown> = {}) =>
    seat.player.request('place_bet', { side: 'LOW', amountMicro: amountMicro.toString(), ...extra });

  // the session's previous bet five seconds further back, as if that much time had passed (the
  // service's clock stays, so that signed requests stay within their window)
  const fiveSecondsOn = (sessionId: string) =>
    h.svc.sql.query(`UPDATE sessions SET last_play_at = last_play_at - interval '5 seconds' WHERE id = $1`, [sessionId]);

  async function refused(seat: Seat, ack: Promise<any>, reason: string) {
    expect(await ack).to.deep.equal({ ok: false, reason });
    await seat.player.waitFor('bet_rejected', (p) => p.reason === reason);
  }

  it('GB: connected names the profile and where the player stands; a bet less than 5 s after the previous one is refused round_too_soon, with no wallet call', async () => {
    const operator = await diceOperator();
    const seat = await seatDice(operator, 'gb');
    expect(seat.connected.jurisdiction).to.deep.include({
      code: 'gb',
      profile: 'GB',
      rules: { minRoundMs: 5000, autoplay: false, realityCheckMinutes: 60, showElapsedTime: true, showNetPosition: true, maxStakeMicro: null },
      netPositionMicro: '0',
    });
    expect(seat.connected.jurisdiction.realityCheckInMs).to.be.within(59 * 60_000, 60 * 60_000);
    expect(seat.connected.jurisdiction.elapsedMs).to.be.within(0, 60_000);

    let cycleId = await openBetting(operator);
    expect((await bet(seat)).ok).to.equal(true);
    cycleId = await playOn(operator, cycleId);
    // the next round, at once: too soon
    await refused(seat, bet(seat), 'round_too_soon');
    const debits = () => movements(seat).filter((type) => type === 'bet');
    expect(debits()).to.have.length(1);
    await fiveSecondsOn(seat.sessionId);
    const later = await bet(seat);
    expect(later.ok, JSON.stringify(later)).to.equal(true);
    expect(debits()).to.have.length(2);

    // a session of a code without a profile plays under default: no rule, no position kept from it
    const free = await seatDice(operator, 'MT');
    expect(free.connected.jurisdiction).to.deep.include({
      code: 'MT',
      profile: 'default',
      rules: { minRoundMs: 0, autoplay: true, realityCheckMinutes: null, showElapsedTime: false, showNetPosition: false, maxStakeMicro: null },
      realityCheckInMs: null,
    });
  });

  it('DE: a stake above 1.00 EUR is refused stake_above_jurisdiction_max, for a paid bet, a free bet and a bought feature, with no wallet call', async () => {
    const operator = await diceOperator();
    const seat = await seatDice(operator, 'DE');
    expect(seat.connected.jurisdiction.rules).to.include({ minRoundMs: 5000, autoplay: false, maxStakeMicro: '100000' });
    await openBetting(operator);
    await refused(seat, bet(seat, 101_000n), 'stake_above_jurisdiction_max');
    // a free bet's stake is its campaign's
    const campaign = await createCampaign(h, operator, { playerRefs: [seat.playerRef], stakeMicro: 200_000n, rounds: 1 });
    await refused(seat, seat.player.request('place_bet', { side: 'LOW', freeBetGrantId: campaign.grantOf.get(seat.playerRef) }), 'stake_above_jurisdiction_max');
    expect(movements(seat)).to.deep.equal([]);
    expect((await bet(seat, 100_000n)).ok).to.equal(true);

    // Gem Vault: a bought feature debits 67 stakes, which must fit the bound too
    const gems = await gemsOperator(h, { featureBuy: 'on', minBetMicro: 1000 });
    const seated = await seatGemsPlayer(h, gems, { serverSeed: gemsSeed([lost, lost, lost], { stakeMicro: 1000n }) }, 1_000_000_000n, { jurisdiction: 'DE' });
    players.push(seated.player);
    const play = (amountMicro: bigint, featureBuy = false) => seated.player.request('play', { amountMicro: amountMicro.toString(), featureBuy });
    expect(await play(2000n, true)).to.deep.equal({ ok: false, reason: 'stake_above_jurisdiction_max' });
    const bought = await play(1000n, true);
    expect(bought.ok, JSON.stringify(bought)).to.equal(true);
    await seated.player.waitFor('round_result', (p) => p.roundId === bought.roundId);
    await until('settled', async () => (await h.svc.db.bet.findUniqueOrThrow({ where: { id: bought.betId } })).status === 'SETTLED');
    // the profile's 5 s between plays, longer than the game's own minRoundMs
    expect(await play(2000n)).to.deep.equal({ ok: false, reason: 'round_too_soon' });
    await fiveSecondsOn(seated.sessionId);
    const plain = await play(2000n);
    expect(plain.ok, JSON.stringify(plain)).to.equal(true);
    expect(movements(seated).filter((type) => type === 'bet')).to.have.length(2);
  });

  it('a reality check due refuses every bet until reality_check_ack; the acknowledgement moves the next one an interval on, and one before it is due changes nothing', async () => {
    const operator = await diceOperator();
    const seat = await seatDice(operator, 'GB');
    await openBetting(operator);
    await h.svc.sql.query('UPDATE sessions SET reality_check_due_at = $2 WHERE id = $1', [seat.sessionId, h.svc.now()]);
    await refused(seat, bet(seat), 'reality_check_due');
    const position = await seat.player.request('session_position', {});
    expect(position).to.include({ ok: true, netPositionMicro: '0' });
    expect(position.realityCheckInMs).to.be.at.most(0);
    expect(movements(seat)).to.deep.equal([]);

    const ack = await seat.player.request('reality_check_ack', {});
    expect(ack.ok).to.equal(true);
    expect(ack.realityCheckInMs).to.be.within(60 * 60_000 - 5000, 60 * 60_000);
    expect((await bet(seat)).ok).to.equal(true);
    // acknowledged again before it is due: the next check stays where it was
    const again = await seat.player.request('reality_check_ack', {});
    expect(again.realityCheckInMs).to.be.at.most(ack.realityCheckInMs);
    const due = (await h.svc.db.session.findUniqueOrThrow({ where: { id: seat.sessionId } })).realityCheckDueAt!;
    expect(due.getTime() - h.svc.now().getTime()).to.be.within(60 * 60_000 - 10_000, 60 * 60_000);
    expect(await seat.player.request('reality_check_ack', { extra: 1 })).to.deep.equal({ ok: false, reason: 'invalid_payload' });
  });

  it('a reality check falling due in a crash flight lets the cash-out through and refuses the next bet', async () => {
    const { serverSeed, crashCents } = crashSeed(300n, 600n);
    const operator = await crashOperator(h);
    const seated = await seatCrashPlayer(h, operator, serverSeed, 100_000_000n, { jurisdiction: 'GB' });
    players.push(seated.player);
    const seat: Seat = { ...seated };
    const cycleId = await openBetting(operator, 'crash');
    const placed = await seat.player.request('place_bet', { amountMicro: STAKE.toString() });
    expect(placed.ok, JSON.stringify(placed)).to.equal(true);
    await tick(h, { cycleId, from: 'BETTING_OPEN' });
    const start = (await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).flightStartedAt!.getTime();
    // in the flight, the check falls due
    await h.svc.sql.query('UPDATE sessions SET reality_check_due_at = $2 WHERE id = $1', [seat.sessionId, h.svc.now()]);
    const at = curveTime(crashCents) - 1;
    expect(await cashOut(h.svc, seat.sessionId, new Date(start + at))).to.deep.include({ ok: true, cashOutMultiplier: centsText(curveCents(at)) });
    await until('the win', async () => movements(seat).includes('win'));
    // the flight ends and the next round opens: its bet waits for the acknowledgement. The
    // service's clock moves past the crash, and back once the test is over.
    const past = curveTime(crashCents) + 10_000;
    h.shiftClock(past);
    undo.push(() => h.shiftClock(-past));
    await tick(h, { cycleId, from: 'ROLLING' });
    await until('the cooldown', async () => (await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).phase === 'COOLDOWN');
    await tick(h, { cycleId, from: 'COOLDOWN' });
    await openBetting(operator, 'crash', cycleId);
    await refused(seat, seat.player.request('place_bet', { amountMicro: STAKE.toString() }), 'reality_check_due');
    expect(movements(seat)).to.deep.equal(['bet', 'win']);
    expect((await seat.player.request('reality_check_ack', {})).ok).to.equal(true);
    expect((await seat.player.request('place_bet', { amountMicro: STAKE.toString() })).ok).to.equal(true);
  });

  it("counts the player's net position since play began: stakes once accepted, wins once settled, a free bet's stake as nothing", async () => {
    const operator = await diceOperator();
    const seat = await seatDice(operator, 'CA-ON');
    expect(seat.connected.jurisdiction).to.deep.include({ profile: 'CA-ON', netPositionMicro: '0', realityCheckInMs: null });
    let cycleId = await openBetting(operator);
    const paid = await bet(seat);
    expect(paid.ok).to.equal(true);
    expect((await seat.player.request('session_position', {})).netPositionMicro).to.equal((-STAKE).toString());
    cycleId = await playOn(operator, cycleId);
    const first = await until('settled', async () => {
      const row = await h.svc.db.bet.findUniqueOrThrow({ where: { id: paid.betId } });
      return row.status === 'SETTLED' ? row : null;
    });
    const campaign = await createCampaign(h, operator, { playerRefs: [seat.playerRef], stakeMicro: 300_000n, rounds: 1 });
    const freeBet = await seat.player.request('place_bet', { side: 'HIGH', freeBetGrantId: campaign.grantOf.get(seat.playerRef) });
    expect(freeBet.ok, JSON.stringify(freeBet)).to.equal(true);
    await playOn(operator, cycleId);
    const second = await until('settled', async () => {
      const row = await h.svc.db.bet.findUniqueOrThrow({ where: { id: freeBet.betId } });
      return row.status === 'SETTLED' ? row : null;
    });
    const expected = first.payoutMicro! - STAKE + second.payoutMicro!;
    const position = await seat.player.request('session_position', {});
    expect(position).to.include({ ok: true, netPositionMicro: expected.toString(), realityCheckInMs: null });
  });

  it("carries a GB player's play across a relaunch: its start and a check that is due", async () => {
    const operator = await diceOperator();
    const first = await seatDice(operator, 'GB');
    const startedAt = new Date(h.svc.now().getTime() - 30 * 60_000);
    await h.svc.sql.query('UPDATE sessions SET play_started_at = $2, reality_check_due_at = $3 WHERE id = $1', [first.sessionId, startedAt, h.svc.now()]);
    const again = await seatDice(operator, 'GB', { playerRef: first.playerRef, lang: 'de' });
    expect(again.connected.jurisdiction.elapsedMs).to.be.within(30 * 60_000, 31 * 60_000);
    expect(again.connected.jurisdiction.realityCheckInMs).to.be.at.most(0);
    await openBetting(operator);
    await refused(again, bet(again), 'reality_check_due');
    // another player's play is their own
    const other = await seatDice(operator, 'GB');
    expect(other.connected.jurisdiction.elapsedMs).to.be.below(60_000);
  });

  it("takes an operator's stricter values for sessions launched after, refuses looser ones naming the bound, and every read of a round names the profile", async () => {
    const operator = await diceOperator();
    expect(await setJurisdiction(h.svc.db, operator.operatorId, 'GB', ['realityCheckMinutes=30'])).to.deep.include({ code: 'GB', profile: 'GB' });
    const looser = await setJurisdiction(h.svc.db, operator.operatorId, 'GB', ['minRoundMs=1000']).catch((err: unknown) => err);
    expect(looser).to.be.instanceOf(LooserOverrideError);
    expect((looser as Error).message).to.equal('minRoundMs may only be stricter than in force: at least 5000');
    await setJurisdiction(h.svc.db, operator.operatorId, 'MT', ['showNetPosition=true', 'maxStakeMicro.EUR=500000']);

    const gb = await seatDice(operator, 'GB');
    expect(gb.connected.jurisdiction.rules).to.include({ realityCheckMinutes: 30, minRoundMs: 5000 });
    const mt = await seatDice(operator, 'MT');
    expect(mt.connected.jurisdiction).to.deep.include({
      profile: 'default',
      rules: { minRoundMs: 0, autoplay: true, realityCheckMinutes: null, showElapsedTime: false, showNetPosition: true, maxStakeMicro: '500000' },
    });
    const cycleId = await openBetting(operator);
    await refused(mt, bet(mt, 600_000n), 'stake_above_jurisdiction_max');
    const placed = await bet(gb);
    expect(placed.ok).to.equal(true);
    await playOn(operator, cycleId);
    await until('settled', async () => (await h.svc.db.bet.findUniqueOrThrow({ where: { id: placed.betId } })).status === 'SETTLED');

    const named = { code: 'GB', profile: 'GB', rules: { minRoundMs: 5000, autoplay: false, realityCheckMinutes: 30, showElapsedTime: true, showNetPosition: true, maxStakeMicro: null } };
    const round = await operator.request('GET', `/v1/rounds/${placed.roundId}`);
    expect(round.status, round.text).to.equal(200);
    expect(round.body.jurisdiction).to.deep.equal(named);
    expect((await recallRound(h.svc, operator.operatorId, placed.roundId))!.jurisdiction).to.deep.equal(named);
    const history = await gb.player.request('recent_rounds', {});
    expect(history.rounds[0].jurisdiction).to.deep.equal(named);

    // the dispute pack's round.json names it, and its check holds the bet to it
    const pack = await operator.request('GET', `/v1/rounds/${placed.roundId}/dispute-pack`);
    expect(pack.status, pack.text).to.equal(200);
    const files = new Map(Object.entries(unzipSync(pack.bytes)));
    expect(JSON.parse(Buffer.from(files.get('round.json')!).toString('utf8')).jurisdiction).to.deep.equal(named);
    const jwks = (await (await fetch(`${h.baseUrl}/v1/keys`)).json()) as Jwks;
    const verdict = verifyPack(files, jwks);
    expect(verdict.valid, JSON.stringify(verdict.checks.filter((c) => !c.ok))).to.equal(true);
    expect(verdict.checks.find((c) => c.name === 'jurisdiction')).to.deep.equal({ name: 'jurisdiction', ok: true, detail: 'GB under GB' });
  });
});
