import { expect } from 'chai';
import { curveCents, curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { centsText } from '../../../src/shared/domain/games/crash.js';
import { randomUUID } from 'node:crypto';
import { currentCycle, currentTerm, resumeClocks } from '../../../src/shared/game/rounds/clock.js';
import { recoverOnElection } from '../../../src/shared/game/rounds/recovery.js';
import { voidRound } from '../../../src/shared/game/rounds/voids.js';
import { FLIGHT_GRACE_MS, cashOut } from '../../../src/shared/game/rounds/flight.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, tick, until } from '../../support/game.js';
import { crashOperator, crashSeed, seatCrashPlayer, type CrashSeat } from '../../support/crash.js';
import { Player } from '../../support/player.js';

// The crash game end to end (D40), on a clock the test moves by hand: bets with and without
// auto cash-out, the flight, cash-outs judged at their arrival stamp, the rounds' own ends,
// and what the wallet is asked to pay. Sandbox seeds (D35) fix each round's crash point.
describe('the crash game (D40)', function () {
  this.timeout(60_000);
  let h: Harness;
  const players: Player[] = [];

  before(async () => {
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
  });
  after(async () => {
    for (const player of players) player.close();
    await h?.close();
  });

  const STAKE = 1_000_000n; // 10.00

  async function seat(operator: TestOperator, serverSeed: string): Promise<CrashSeat> {
    const seated = await seatCrashPlayer(h, operator, serverSeed);
    players.push(seated.player);
    return seated;
  }

  // the operator's crash cycle, opened by hand (PENDING -> BETTING_OPEN)
  async function openBetting(operator: TestOperator): Promise<string> {
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'crash', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    return pending.id;
  }

  // BETTING_OPEN -> ROLLING: the crash points stored, then the flight's start
  async function startFlight(cycleId: string): Promise<number> {
    await tick(h, { cycleId, from: 'BETTING_OPEN' });
    const cycle = await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } });
    // ROLLING, or already over when every round ended as it started (a crash at 1.00x)
    expect(cycle.phase).to.be.oneOf(['ROLLING', 'COOLDOWN']);
    return cycle.flightStartedAt!.getTime();
  }

  async function bet(seated: CrashSeat, autoCashOut?: string) {
    const ack = await seated.player.request('place_bet', { amountMicro: STAKE.toString(), ...(autoCashOut ? { autoCashOut } : {}) });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await seated.player.waitFor('bet_placed', (p) => p.betId === ack.betId);
    return ack as { betId: string; roundId: string };
  }

  const movements = (seated: CrashSeat) =>
    h.wallet.transactions.filter((t) => t.playerRef === seated.playerRef).map((t) => [t.type, t.amountMicro] as const);

  async function winPaid(seated: CrashSeat, amount: bigint) {
    await until('the win', async () => h.wallet.transactions.some((t) => t.playerRef === seated.playerRef && t.type === 'win'));
    expect(movements(seated)).to.deep.equal([
      ['bet', STAKE],
      ['win', amount],
    ]);
  }

  it('an auto cash-out at 2.00 below the crash point wins at 2.00 when the curve reaches it: round_result, then the win, once', async () => {
    const { serverSeed, crashCents } = crashSeed(300n, 500n);
    const operator = await crashOperator(h);
    const seated = await seat(operator, serverSeed);
    expect(seated.connected.config).to.include({ maxMultiplier: '1000.00', stakeStepMicro: '1000' });
    const cycleId = await openBetting(operator);
    const placed = await bet(seated, '2.00');
    const start = await startFlight(cycleId);
    const flying = await seated.player.waitFor('round_state', (p) => p.phase === 'ROLLING' && p.flightStartedAt);
    expect(Date.parse(flying.flightStartedAt)).to.equal(start);
    expect(flying.serverTime).to.be.a('string');

    // before t(2.00) nothing has ended; at it, the auto cash-out wins
    await tick(h, { cycleId, from: 'ROLLING' });
    expect((await h.svc.db.round.findUniqueOrThrow({ where: { id: placed.roundId } })).state).to.equal('ROLLING');
    h.shiftClock(curveTime(200n) + FLIGHT_GRACE_MS - (h.svc.now().getTime() - start) + 5);
    await tick(h, { cycleId, from: 'ROLLING' });
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === placed.roundId);
    expect(result).to.include({ won: true, cashOutMultiplier: '2.00', crashMultiplier: centsText(crashCents), payoutMicro: '2000000', nonce: 0 });
    await winPaid(seated, 2_000_000n);
    // the round has ended: a cash-out now is refused and moves nothing
    expect(await seated.player.request('cash_out', {})).to.deep.equal({ ok: false, reason: 'already_cashed_out' });
    expect(movements(seated)).to.have.length(2);
  });

  it('a cash-out one ms before the crash time wins and one at the crash time loses, by arrival stamp whatever the processing order', async () => {
    const { serverSeed, crashCents } = crashSeed(300n, 600n);
    const operator = await crashOperator(h);
    const early = await seat(operator, serverSeed);
    const late = await seat(operator, serverSeed);
    const cycleId = await openBetting(operator);
    const [earlyBet, lateBet] = [await bet(early), await bet(late)];
    const start = await startFlight(cycleId);
    const crashMs = curveTime(crashCents);

    // the later stamp is processed first
    expect(await cashOut(h.svc, late.sessionId, new Date(start + crashMs))).to.deep.equal({ ok: false, reason: 'too_late' });
    const cents = curveCents(crashMs - 1);
    expect(cents < crashCents).to.equal(true);
    const payout = (STAKE * cents) / 100n;
    expect(await cashOut(h.svc, early.sessionId, new Date(start + crashMs - 1))).to.deep.equal({
      ok: true,
      cashOutMultiplier: centsText(cents),
      payoutMicro: payout.toString(),
    });
    const told = await early.player.waitFor('round_result', (p) => p.roundId === earlyBet.roundId);
    expect(told).to.include({ won: true, cashOutMultiplier: centsText(cents), crashMultiplier: centsText(crashCents), payoutMicro: payout.toString() });
    await winPaid(early, payout);

    // the late round ends at its crash: lost, no win call
    h.shiftClock(crashMs + FLIGHT_GRACE_MS - (h.svc.now().getTime() - start) + 5);
    await tick(h, { cycleId, from: 'ROLLING' });
    const lost = await late.player.waitFor('round_result', (p) => p.roundId === lateBet.roundId);
    expect(lost).to.include({ won: false, cashOutMultiplier: null, crashMultiplier: centsText(crashCents), payoutMicro: '0' });
    await until('the flight to end', async () => (await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).phase === 'COOLDOWN');
    expect(movements(late)).to.deep.equal([['bet', STAKE]]);
    const rounds = await h.svc.db.round.findMany({ where: { cycleId }, orderBy: { createdAt: 'asc' } });
    expect(rounds.map((r) => [r.state, r.settled])).to.deep.equal([
      ['SETTLED', true],
      ['SETTLED', true],
    ]);
    expect(h.wallet.violations).to.deep.equal([]);
  });

  it('a cash-out stamped before the crash that reaches the record after it, within the grace, still wins', async () => {
    const { serverSeed, crashCents } = crashSeed(200n, 400n);
    const operator = await crashOperator(h);
    const seated = await seat(operator, serverSeed);
    const cycleId = await openBetting(operator);
    const placed = await bet(seated);
    const start = await startFlight(cycleId);
    const crashMs = curveTime(crashCents);
    // the crash has come, the tick has run, but the round's end is not recorded yet
    h.shiftClock(crashMs + FLIGHT_GRACE_MS / 2 - (h.svc.now().getTime() - start));
    await tick(h, { cycleId, from: 'ROLLING' });
    const stamped = new Date(start + crashMs - 10);
    expect(await cashOut(h.svc, seated.sessionId, stamped)).to.deep.include({ ok: true, cashOutMultiplier: centsText(curveCents(crashMs - 10)) });
    expect((await h.svc.db.round.findUniqueOrThrow({ where: { id: placed.roundId } })).cashOutMs).to.equal(crashMs - 10);
  });

  it("a scheduler that adopts a flight (D30) ticks it at once, not at the flight's latest end", async () => {
    const { serverSeed } = crashSeed(5000n, 100000n);
    const operator = await crashOperator(h);
    const seated = await seat(operator, serverSeed);
    const cycleId = await openBetting(operator);
    await bet(seated);
    await startFlight(cycleId);
    await h.svc.queues.engine.remove(`${cycleId}-ROLLING`);
    await resumeClocks(h.svc);
    const job = await h.svc.queues.engine.getJob(`${cycleId}-ROLLING`);
    expect(job?.data).to.deep.equal({ cycleId, from: 'ROLLING', flight: true });
    expect(job!.opts.delay ?? 0).to.equal(0);
  });

  it('two cash-outs of the same bet from two sockets: one wins, the other is already_cashed_out', async () => {
    const { serverSeed } = crashSeed(2000n, 100000n);
    const operator = await crashOperator(h);
    const seated = await seat(operator, serverSeed);
    const launch = await h.svc.db.session.findUniqueOrThrow({ where: { id: seated.sessionId } });
    expect(launch.gameCode).to.equal('crash');
    const cycleId = await openBetting(operator);
    await bet(seated);
    await startFlight(cycleId);
    const second = await Player.connect(h.baseUrl, seated.token);
    players.push(second);
    await second.waitFor('connected');
    const answers = await Promise.all([seated.player.request('cash_out', {}), second.request('cash_out', {})]);
    const won = answers.filter((a) => a.ok);
    expect(won, JSON.stringify(answers)).to.have.length(1);
    expect(answers.filter((a) => !a.ok)).to.deep.equal([{ ok: false, reason: 'already_cashed_out' }]);
    await winPaid(seated, BigInt(won[0].payoutMicro));
  });

  it('an auto cash-out and a cash-out by hand at the same ms: the auto cash-out has won; one ms earlier, the hand wins', async () => {
    const { serverSeed } = crashSeed(400n, 1000n);
    const operator = await crashOperator(h);
    const auto = await seat(operator, serverSeed);
    const hand = await seat(operator, serverSeed);
    const cycleId = await openBetting(operator);
    await bet(auto, '3.00');
    await bet(hand, '3.00');
    const start = await startFlight(cycleId);
    const at = curveTime(300n);
    expect(await cashOut(h.svc, auto.sessionId, new Date(start + at))).to.deep.equal({ ok: false, reason: 'already_cashed_out' });
    const cents = curveCents(at - 1);
    expect(await cashOut(h.svc, hand.sessionId, new Date(start + at - 1))).to.deep.include({ ok: true, cashOutMultiplier: centsText(cents) });
    h.shiftClock(at + FLIGHT_GRACE_MS - (h.svc.now().getTime() - start) + 5);
    await tick(h, { cycleId, from: 'ROLLING' });
    await winPaid(auto, 3_000_000n);
    await winPaid(hand, (STAKE * cents) / 100n);
  });

  it('a cash-out after the round\'s own end, before a tick recorded it, is answered at once and marks that end told: no void takes the round, recovery records the end (D40)', async () => {
    const { serverSeed } = crashSeed(300n, 1000n);
    const lowSeed = crashSeed(120n, 150n);
    const operator = await crashOperator(h);
    const auto = await seat(operator, serverSeed);
    const crashed = await seat(operator, lowSeed.serverSeed);
    const cycleId = await openBetting(operator);
    const autoBet = await bet(auto, '2.00');
    const crashedBet = await bet(crashed);
    const start = await startFlight(cycleId);
    // no tick runs past the flight's start: what the rows hold when the answers come is what
    // the cash-outs wrote; the answers do not wait for the grace, so the ends are not
    // recorded yet, only told
    expect(await cashOut(h.svc, auto.sessionId, new Date(start + curveTime(200n) + 1))).to.deep.equal({ ok: false, reason: 'already_cashed_out' });
    expect(await cashOut(h.svc, crashed.sessionId, new Date(start + curveTime(lowSeed.crashCents)))).to.deep.equal({ ok: false, reason: 'too_late' });
    const ids = [autoBet.roundId, crashedBet.roundId];
    const told = await h.svc.db.round.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } });
    expect(told.map((r) => [r.state, r.endTold])).to.deep.equal([['ROLLING', true], ['ROLLING', true]]);
    // the scheduler dies here: no void takes a told round, and the next leader's recovery
    // records each end as the tick would have, then settles it
    expect(await voidRound(h.svc, crashedBet.roundId, 'crash_recovery')).to.equal(false);
    await recoverOnElection(h.svc, { epoch: (await currentTerm(h.svc)) + 1n, id: randomUUID(), handedOverBy: null });
    const rounds = new Map((await h.svc.db.round.findMany({ where: { id: { in: ids } } })).map((r) => [r.id, r]));
    expect(rounds.get(autoBet.roundId)).to.include({ cashOutCents: 200n, cashOutMs: curveTime(200n) });
    expect(rounds.get(crashedBet.roundId)).to.include({ cashOutCents: null });
    for (const round of rounds.values()) expect(round.state).to.be.oneOf(['RESULT', 'SETTLED']);
    expect(await auto.player.waitFor('round_result', (p) => p.roundId === autoBet.roundId)).to.include({ won: true, cashOutMultiplier: '2.00', payoutMicro: '2000000' });
    expect(await crashed.player.waitFor('round_result', (p) => p.roundId === crashedBet.roundId)).to.include({ won: false, payoutMicro: '0' });
    await winPaid(auto, 2_000_000n);
    await until('both settled', async () => (await h.svc.db.round.count({ where: { id: { in: ids }, settled: true } })) === 2);
    expect(movements(crashed)).to.deep.equal([['bet', STAKE]]);
  });

  it('a refusal does not end the round: a cash-out of the same round stamped before the end, decided after the refusal, wins', async () => {
    const { serverSeed, crashCents } = crashSeed(120n, 150n);
    const operator = await crashOperator(h);
    const seated = await seat(operator, serverSeed);
    const cycleId = await openBetting(operator);
    const placed = await bet(seated);
    const start = await startFlight(cycleId);
    const crashMs = curveTime(crashCents);
    // two sockets of the session: the later stamp reaches the record first
    expect(await cashOut(h.svc, seated.sessionId, new Date(start + crashMs + 5))).to.deep.equal({ ok: false, reason: 'too_late' });
    expect(await cashOut(h.svc, seated.sessionId, new Date(start + crashMs - 10))).to.deep.include({ ok: true, cashOutMultiplier: centsText(curveCents(crashMs - 10)) });
    expect(await cashOut(h.svc, seated.sessionId, new Date(start + crashMs + 6))).to.deep.equal({ ok: false, reason: 'already_cashed_out' });
    expect(await h.svc.db.round.findUniqueOrThrow({ where: { id: placed.roundId } })).to.include({ cashOutMs: crashMs - 10 });
    await winPaid(seated, (STAKE * curveCents(crashMs - 10)) / 100n);
  });

  it('a cash-out of a session past its expiry is refused session_expired, moves no money and ends the socket (D4)', async () => {
    const { serverSeed } = crashSeed(300n, 1000n);
    const operator = await crashOperator(h);
    const seated = await seat(operator, serverSeed);
    const cycleId = await openBetting(operator);
    const placed = await bet(seated);
    await startFlight(cycleId);
    // the session expired in the record while its socket stayed (the token's own expiry is later)
    await h.svc.db.session.update({ where: { id: seated.sessionId }, data: { expiresAt: new Date(h.svc.now().getTime() - 1000) } });
    expect(await seated.player.request('cash_out', {})).to.deep.equal({ ok: false, reason: 'session_expired' });
    expect(await seated.player.waitFor('session_ended')).to.include({ reason: 'expired' });
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: placed.roundId } });
    expect([round.cashOutCents, round.endTold]).to.deep.equal([null, false]);
    expect(movements(seated).filter(([type]) => type === 'win')).to.deep.equal([]);
  });

  it('cash-outs through one node in a flight it knows are decided in one statement each; a session that may no longer play, or has no bet, is answered as before', async () => {
    const { serverSeed } = crashSeed(5000n, 100000n);
    const operator = await crashOperator(h);
    const [first, second, ended, idle] = [await seat(operator, serverSeed), await seat(operator, serverSeed), await seat(operator, serverSeed), await seat(operator, serverSeed)];
    const cycleId = await openBetting(operator);
    const bets = [await bet(first), await bet(second), await bet(ended)];
    await startFlight(cycleId);
    const statements: string[] = [];
    const query = h.svc.sql.query;
    h.svc.sql.query = ((sql, values) => {
      statements.push(typeof sql === 'string' ? sql : sql.name);
      return query(sql, values);
    }) as typeof query;
    try {
      const ack = async (seated: CrashSeat) => {
        statements.length = 0;
        const answer = await seated.player.request('cash_out', {});
        return { answer, statements: statements.filter((name) => name.startsWith('cash_out')) };
      };
      // the node learns the flight from the first cash-out's facts
      const one = await ack(first);
      expect(one.answer.ok, JSON.stringify(one.answer)).to.equal(true);
      expect(one.statements).to.deep.equal(['cash_out_facts', 'cash_out_decide']);
      const two = await ack(second);
      expect(two.answer.ok, JSON.stringify(two.answer)).to.equal(true);
      expect(two.statements).to.deep.equal(['cash_out_decide_known']);
      await h.svc.db.session.update({ where: { id: ended.sessionId }, data: { expiresAt: new Date(h.svc.now().getTime() - 1000) } });
      expect((await ack(ended)).answer).to.deep.equal({ ok: false, reason: 'session_expired' });
      expect((await ack(idle)).answer).to.deep.equal({ ok: false, reason: 'no_active_bet' });
      // each win is the stake at the multiplier its ack granted (D40), paid once
      for (const [seated, answer] of [[first, one.answer], [second, two.answer]] as const) {
        const cents = BigInt(answer.cashOutMultiplier.replace('.', ''));
        expect(answer.payoutMicro).to.equal(((STAKE * cents) / 100n).toString());
        await winPaid(seated, (STAKE * cents) / 100n);
      }
      const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: bets[2]!.roundId } });
      expect(round.cashOutCents).to.equal(null);
    } finally {
      h.svc.sql.query = query;
    }
  });

  it('a crash at 1.00x ends the round as the flight starts: lost, a cash-out is too_late and moves no money', async () => {
    const { serverSeed } = crashSeed(100n, 100n);
    const operator = await crashOperator(h);
    const seated = await seat(operator, serverSeed);
    const cycleId = await openBetting(operator);
    const placed = await bet(seated, '1.01');
    const start = await startFlight(cycleId);
    expect(await cashOut(h.svc, seated.sessionId, new Date(start))).to.deep.equal({ ok: false, reason: 'too_late' });
    h.shiftClock(FLIGHT_GRACE_MS - (h.svc.now().getTime() - start) + 5);
    await tick(h, { cycleId, from: 'ROLLING' });
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === placed.roundId);
    expect(result).to.include({ won: false, crashMultiplier: '1.00', cashOutMultiplier: null, payoutMicro: '0' });
    expect(await seated.player.request('cash_out', {})).to.deep.equal({ ok: false, reason: 'too_late' });
    expect(movements(seated)).to.deep.equal([['bet', STAKE]]);
  });

  it('a bet placed by the rules that read the player first (responsible-gambling limits) keeps its auto cash-out', async () => {
    const { serverSeed } = crashSeed(300n, 100000n);
    const operator = await crashOperator(h);
    const seated = await seatCrashPlayer(h, operator, serverSeed, 100_000_000n, { rgLimits: { dailyWagerMicro: '50000000' } });
    players.push(seated.player);
    const cycleId = await openBetting(operator);
    const placed = await bet(seated, '2.50');
    expect((await h.svc.db.bet.findUniqueOrThrow({ where: { id_cycleCreatedAt: { id: placed.betId, cycleCreatedAt: (await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).createdAt } } })).autoCashOutCents).to.equal(250n);
    const start = await startFlight(cycleId);
    h.shiftClock(curveTime(250n) + FLIGHT_GRACE_MS - (h.svc.now().getTime() - start) + 5);
    await tick(h, { cycleId, from: 'ROLLING' });
    await winPaid(seated, 2_500_000n);
  });

  it('refuses a bet that is not a crash bet, and an auto cash-out outside 1.01 to maxMultiplier, invalid_payload; a cash-out with no bet is no_active_bet', async () => {
    const operator = await crashOperator(h, { maxMultiplier: '50.00' });
    const seated = await seat(operator, crashSeed(100n, 100000n).serverSeed);
    await openBetting(operator);
    for (const payload of [
      { side: 'LOW', amountMicro: '1000000' },
      { amountMicro: '1000000', autoCashOut: '1.00' },
      { amountMicro: '1000000', autoCashOut: '2' },
      { amountMicro: '1000000', autoCashOut: '50.01' },
      { amountMicro: '1000000', autoCashOut: 2 },
    ]) {
      expect(await seated.player.request('place_bet', payload), JSON.stringify(payload)).to.deep.equal({ ok: false, reason: 'invalid_payload' });
    }
    expect(await seated.player.request('cash_out', {})).to.deep.equal({ ok: false, reason: 'no_active_bet' });
    expect(movements(seated)).to.deep.equal([]);
  });
});
