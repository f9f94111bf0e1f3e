import { expect } from 'chai';
import { curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { startDeployment, type CrashTable, type Deployment, type Seat } from '../../support/deployment.js';
import { crashSeed } from '../../support/crash.js';
import { until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { RecoveryTimes } from '../../support/recovery-time.js';
import { holdBetLock, holdRoundLock } from '../../support/row-lock.js';

// The split deployment (D12) playing crash (D40): kill -9 of each role in the middle of a
// flight, once the crash points are stored and some rounds have ended (cash-outs decided,
// automatic cash-outs and crashes recorded) while others still fly, then its replacement.
// D40's crash recovery: a round whose cash-out was durable is paid, a round whose result was
// durable is settled, every other round still in flight is voided and refunded. Sandbox seeds
// (D35) fix every crash point, so no test waits for luck; the wallet must see exactly
// floor(stake * cents / 100) for a cash-out at `cents`, once, and the fault suite's
// invariants hold after each test.
describe('faults: kill -9 of each role of the split deployment mid-flight (crash, D40)', function () {
  this.timeout(150_000);
  let d: Deployment;
  const recoveryTimes = new RecoveryTimes();
  before(async () => {
    // a killed process's statement waiting for a row lock the test holds is ended, not
    // committed later (row-lock.ts)
    d = await startDeployment({ clientConnectionCheckMs: 100 });
    await Promise.all([
      d.start('web-1', 'api,realtime'),
      d.start('web-2', 'api,realtime'),
      d.start('scheduler', 'scheduler'),
      // a debit in flight stays so for the bet worker's test (the wallet holds its answer back
      // for longer than the default timeout)
      d.start('bet', 'bet', { WALLET_CALL_TIMEOUT_MS: '15000' }),
      d.start('settle', 'settle'),
      d.start('rollback', 'rollback'),
      d.start('webhooks', 'webhooks'),
    ]);
  });
  after(async () => {
    await d?.close();
    recoveryTimes.print();
  });

  // not a multiple of 100 (the tables take stakes to the micro-unit, D46): the floor shows
  const STAKE = 1_000_003n;
  const FUNDS = 10_000_000n;
  // D40: a win at `cents` pays floor(stake * cents / 100)
  const paid = (cents: bigint) => (STAKE * cents) / 100n;
  const centsOf = (multiplier: string) => BigInt(multiplier.replace('.', ''));
  // a crash point no flight of these tests reaches: such a round ends by a cash-out, or not at all
  const HIGH = crashSeed(1000n, 100000n);

  const crashTable = () => d.crashTable({ bettingWindowMs: 3000, stakeStepMicro: '1' });
  const pendingAt = (endpoint: string) => async () => d.wallet.requests.some((r) => r.endpoint === endpoint && r.response === 'pending');

  async function replace(role: string, done: () => Promise<boolean>, timeoutMs = 30_000) {
    await d.restart(role);
    const upAt = Date.now();
    await until(`${role}: recovery`, done, timeoutMs);
    recoveryTimes.record(role, Date.now() - upAt);
  }

  // seats of one crash table, each playing the seed given, connected to `via`
  async function seatAll<K extends string>(table: CrashTable, seeds: Record<K, string>, via?: string): Promise<Record<K, Seat>> {
    const entries = await Promise.all(Object.entries<string>(seeds).map(async ([name, seed]) => [name, await table.seat(seed, FUNDS, via)] as const));
    return Object.fromEntries(entries) as Record<K, Seat>;
  }

  // every seat bets STAKE in one betting window (with the auto cash-out given), and the flight
  // starts: answers the bets' acks and the flight's start (ms)
  async function fly<K extends string>(seats: Record<K, Seat>, autoCashOut: Partial<Record<K, string>> = {}) {
    const names = Object.keys(seats) as K[];
    const first = seats[names[0]!];
    const open = await first.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    const acks = await Promise.all(
      names.map((name) => seats[name].player.request('place_bet', { amountMicro: STAKE.toString(), ...(autoCashOut[name] ? { autoCashOut: autoCashOut[name] } : {}) })),
    );
    expect(acks.every((a) => a.ok), JSON.stringify(acks)).to.equal(true);
    const placed = Object.fromEntries(names.map((name, i) => [name, acks[i] as { betId: string; roundId: string }])) as Record<K, { betId: string; roundId: string }>;
    return { cycleId: open.cycleId as string, placed };
  }

  const flightStart = async (seat: Seat, cycleId: string) =>
    Date.parse((await seat.player.waitFor('round_state', (p) => p.cycleId === cycleId && p.phase === 'ROLLING' && p.flightStartedAt, 15_000)).flightStartedAt);

  // the flight has been on for at least `ms` (the service's clock is this machine's)
  const flownPast = (start: number, ms: number) => until(`the flight past ${ms} ms`, async () => Date.now() - start > ms, 15_000);

  const movements = (seat: Seat) => d.wallet.transactions.filter((t) => t.playerRef === seat.playerRef).map((t) => [t.type, t.amountMicro] as const);

  const unsettled = (roundIds: string[]) => async () => (await d.db.round.count({ where: { id: { in: roundIds }, settled: false } })) === 0;

  const roundOf = (roundId: string) => d.db.round.findUniqueOrThrow({ where: { id: roundId } });

  it('scheduler: cash-outs and results durable before it died are paid or settled, ends due while it was dead and told to a cash-out are kept, the rest is voided and refunded', async () => {
    const table = await crashTable();
    const durable = crashSeed(110n, 114n);
    const crashLate = crashSeed(125n, 129n);
    const seats = await seatAll(table, {
      // auto cash-out at 1.05, recorded by the flight's tick before the kill
      auto: HIGH.serverSeed,
      // cashed out by hand before the kill
      hand: HIGH.serverSeed,
      // crashes before the kill: its loss is durable, its settlement is not (the test holds
      // its bet row, so the scheduler dies between the two)
      durable: durable.serverSeed,
      // cashed out by hand while no scheduler runs
      afterKill: HIGH.serverSeed,
      // auto cash-out at 1.25, due while no scheduler runs; its player asks to cash out after it
      autoLate: HIGH.serverSeed,
      // crashes while no scheduler runs; its player asks to cash out after it
      crashLate: crashLate.serverSeed,
      // still flying when the scheduler is replaced
      flying: HIGH.serverSeed,
    });
    const { cycleId, placed } = await fly(seats, { auto: '1.05', autoLate: '1.25' });
    const lock = await holdBetLock(d.databaseUrl, placed.durable.betId);
    try {
      const start = await flightStart(seats.auto, cycleId);

      const auto = await seats.auto.player.waitFor('round_result', (p) => p.roundId === placed.auto.roundId, 10_000);
      expect(auto).to.include({ won: true, cashOutMultiplier: '1.05', payoutMicro: paid(105n).toString() });
      const hand = await seats.hand.player.request('cash_out', {});
      expect(hand.ok, JSON.stringify(hand)).to.equal(true);
      expect(hand.payoutMicro).to.equal(paid(centsOf(hand.cashOutMultiplier)).toString());

      // the round's loss is committed and told; its settlement waits for the row
      const lost = await seats.durable.player.waitFor('round_result', (p) => p.roundId === placed.durable.roundId, 10_000);
      expect(lost).to.include({ won: false, cashOutMultiplier: null, payoutMicro: '0' });
      await lock.waitedOnBy('scheduler');
      await d.kill('scheduler');
      await d.disconnected('scheduler');
      await lock.release();
      expect(await roundOf(placed.durable.roundId)).to.include({ state: 'RESULT', settled: false, crashCents: durable.crashCents });

      // no scheduler: the realtime nodes still decide cash-outs where the crash points are
      const afterKill = await seats.afterKill.player.request('cash_out', {});
      expect(afterKill.ok, JSON.stringify(afterKill)).to.equal(true);
      await flownPast(start, curveTime(crashLate.crashCents) + 50);
      expect(await seats.autoLate.player.request('cash_out', {})).to.deep.equal({ ok: false, reason: 'already_cashed_out' });
      expect(await seats.crashLate.player.request('cash_out', {})).to.deep.equal({ ok: false, reason: 'too_late' });

      const roundIds = Object.values(placed).map((p) => p.roundId);
      await replace('scheduler', unsettled(roundIds));
      expect(await d.settle()).to.deep.equal([]);

      expect(movements(seats.auto)).to.deep.equal([['bet', STAKE], ['win', paid(105n)]]);
      expect(movements(seats.hand)).to.deep.equal([['bet', STAKE], ['win', paid(centsOf(hand.cashOutMultiplier))]]);
      expect(movements(seats.durable)).to.deep.equal([['bet', STAKE]]);
      expect(movements(seats.afterKill)).to.deep.equal([['bet', STAKE], ['win', paid(centsOf(afterKill.cashOutMultiplier))]]);
      // what the cash-outs were told is what the rounds are settled at
      expect(movements(seats.autoLate)).to.deep.equal([['bet', STAKE], ['win', paid(125n)]]);
      expect(movements(seats.crashLate)).to.deep.equal([['bet', STAKE]]);
      expect(movements(seats.flying)).to.deep.equal([['bet', STAKE], ['rollback', STAKE]]);
      const states = await Promise.all(Object.values(placed).map((p) => roundOf(p.roundId)));
      expect(states.map((r) => [r.state, r.voidReason])).to.deep.equal([
        ...Array.from({ length: 6 }, () => ['SETTLED', null]),
        ['VOIDED', 'crash_recovery'],
      ]);
      await seats.flying.player.waitFor('round_voided', (p) => p.roundId === placed.flying.roundId && p.reason === 'crash_recovery', 10_000);
    } finally {
      await lock.release();
      for (const seat of Object.values<Seat>(seats)) seat.player.close();
    }
  });

  it('scheduler, its replacement\'s recovery racing a cash-out: the cash-out that commits first is settled by recovery, though the node that took it died before settling it', async () => {
    const table = await crashTable();
    const seats = await seatAll(table, { racing: HIGH.serverSeed }, 'web-1');
    const { cycleId, placed } = await fly(seats);
    await flightStart(seats.racing, cycleId);
    await d.kill('scheduler');
    await d.disconnected('scheduler');
    // the cash-out reads the flight (still ROLLING) and waits for the round's row; the new
    // scheduler's recovery interrupts the cycle, lists the round as flying, and waits for
    // the row to void it. The cash-out waited first and commits first.
    const roundLock = await holdRoundLock(d.databaseUrl, placed.racing.roundId);
    const betLock = await holdBetLock(d.databaseUrl, placed.racing.betId);
    try {
      const answer = seats.racing.player.request('cash_out', {});
      await roundLock.waitedOnBy('web-1');
      await d.restart('scheduler');
      const upAt = Date.now();
      await roundLock.waitedOnBy('scheduler');
      await roundLock.release();
      const cashed = await answer;
      expect(cashed.ok, JSON.stringify(cashed)).to.equal(true);
      // the node's settlement of its cash-out waits for the bet's row, and the node dies there
      await betLock.waitedOnBy('web-1');
      await d.kill('web-1');
      await d.disconnected('web-1');
      await betLock.release();

      await until('recovery to settle the round', unsettled([placed.racing.roundId]), 15_000);
      recoveryTimes.record('scheduler (racing a cash-out)', Date.now() - upAt);
      expect(await d.settle()).to.deep.equal([]);
      expect(await roundOf(placed.racing.roundId)).to.include({ state: 'SETTLED', cashOutCents: centsOf(cashed.cashOutMultiplier) });
      expect(movements(seats.racing)).to.deep.equal([['bet', STAKE], ['win', paid(centsOf(cashed.cashOutMultiplier))]]);
      expect((await d.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).phase).to.equal('FINISHED');
    } finally {
      await roundLock.release();
      await betLock.release();
      seats.racing.player.close();
      await d.restart('web-1');
    }
  });

  it('web node: a cash-out it acknowledged is paid once though it died before settling it; its players, back through the other node, cash out there; the flight goes on', async () => {
    const table = await crashTable();
    const lost = crashSeed(115n, 125n);
    const seats = await seatAll(table, { acked: HIGH.serverSeed, auto: HIGH.serverSeed, back: HIGH.serverSeed, lost: lost.serverSeed }, 'web-1');
    const { cycleId, placed } = await fly(seats, { auto: '1.15' });
    const lock = await holdBetLock(d.databaseUrl, placed.acked.betId);
    let back: Player | undefined;
    try {
      await flightStart(seats.acked, cycleId);
      // the decision is committed and acknowledged; the node's settlement of it waits for the row
      const acked = await seats.acked.player.request('cash_out', {});
      expect(acked.ok, JSON.stringify(acked)).to.equal(true);
      expect(acked.payoutMicro).to.equal(paid(centsOf(acked.cashOutMultiplier)).toString());
      await lock.waitedOnBy('web-1');
      await d.kill('web-1');
      await d.disconnected('web-1');
      await lock.release();

      // contract 8.6: a bet outlives its player's connection; back through web-2, mid-flight
      back = await Player.connect(d.url('web-2'), seats.back.token);
      const connected = await back.waitFor('connected');
      expect(connected.roundState).to.include({ cycleId, phase: 'ROLLING' });
      expect(connected.roundState.flightStartedAt).to.be.a('string');
      const cashed = await back.request('cash_out', {});
      expect(cashed.ok, JSON.stringify(cashed)).to.equal(true);

      // the automatic cash-out and the crash are recorded by the flight's ticks with no node
      // of their players, and the flight ends
      const roundIds = Object.values(placed).map((p) => p.roundId);
      await until('the flight to end', unsettled(roundIds), 15_000);
      expect(await d.settle()).to.deep.equal([]);
      expect(movements(seats.acked)).to.deep.equal([['bet', STAKE], ['win', paid(centsOf(acked.cashOutMultiplier))]]);
      expect(movements(seats.auto)).to.deep.equal([['bet', STAKE], ['win', paid(115n)]]);
      expect(movements(seats.back)).to.deep.equal([['bet', STAKE], ['win', paid(centsOf(cashed.cashOutMultiplier))]]);
      expect(movements(seats.lost)).to.deep.equal([['bet', STAKE]]);
      const rounds = await Promise.all(roundIds.map(roundOf));
      expect(rounds.map((r) => r.state)).to.deep.equal(['SETTLED', 'SETTLED', 'SETTLED', 'SETTLED']);
      expect((await d.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).phase).to.not.equal('ROLLING');
    } finally {
      await lock.release();
      back?.close();
      for (const seat of Object.values<Seat>(seats)) seat.player.close();
      await d.restart('web-1');
    }
  });

  it('settle worker: the win of a cash-out whose call was in flight is credited once, and the wins decided while it was dead are paid by its replacement', async () => {
    const table = await crashTable();
    const lost = crashSeed(110n, 120n);
    const seats = await seatAll(table, { first: HIGH.serverSeed, auto: HIGH.serverSeed, hand: HIGH.serverSeed, lost: lost.serverSeed });
    const { cycleId, placed } = await fly(seats, { auto: '1.15' });
    try {
      await flightStart(seats.first, cycleId);
      // the wallet books the credit and holds its answer back
      d.wallet.setFault('win', { kind: 'delay', ms: 10_000 });
      const first = await seats.first.player.request('cash_out', {});
      expect(first.ok, JSON.stringify(first)).to.equal(true);
      await until('the win at the wallet', pendingAt('win'), 10_000);
      d.wallet.setFault('win', null);
      await d.kill('settle');

      // the flight goes on: wins are decided and wait for a settle worker
      const hand = await seats.hand.player.request('cash_out', {});
      expect(hand.ok, JSON.stringify(hand)).to.equal(true);
      await seats.auto.player.waitFor('round_result', (p) => p.roundId === placed.auto.roundId && p.won, 10_000);
      await seats.lost.player.waitFor('round_result', (p) => p.roundId === placed.lost.roundId && !p.won, 10_000);

      const betIds = Object.values(placed).map((p) => p.betId);
      await replace('settle', async () => (await d.db.bet.count({ where: { id: { in: betIds }, status: 'SETTLED' } })) === betIds.length);
      expect(await d.settle()).to.deep.equal([]);
      expect(movements(seats.first)).to.deep.equal([['bet', STAKE], ['win', paid(centsOf(first.cashOutMultiplier))]]);
      expect(movements(seats.hand)).to.deep.equal([['bet', STAKE], ['win', paid(centsOf(hand.cashOutMultiplier))]]);
      expect(movements(seats.auto)).to.deep.equal([['bet', STAKE], ['win', paid(115n)]]);
      expect(movements(seats.lost)).to.deep.equal([['bet', STAKE]]);
    } finally {
      d.wallet.setFault('win', null);
      for (const seat of Object.values<Seat>(seats)) seat.player.close();
    }
  });

  it('bet worker, with a debit in flight across the flight\'s start: the redelivered job rolls it back; the flight\'s rounds are paid as decided', async () => {
    const table = await crashTable();
    const seats = await seatAll(table, { auto: HIGH.serverSeed, hand: HIGH.serverSeed, late: HIGH.serverSeed });
    const open = await seats.auto.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    const acks = await Promise.all([seats.auto, seats.hand].map((s, i) => s.player.request('place_bet', { amountMicro: STAKE.toString(), ...(i === 0 ? { autoCashOut: '1.05' } : {}) })));
    expect(acks.every((a) => a.ok), JSON.stringify(acks)).to.equal(true);
    // the wallet books this debit and holds its answer back past the window's end
    d.wallet.setFault('bet', { kind: 'delay', ms: 10_000 }, 1);
    const late = seats.late.player.request('place_bet', { amountMicro: STAKE.toString() }, 30_000).catch((err: Error) => ({ ok: false, reason: err.message }));
    try {
      await until('the debit at the wallet', pendingAt('bet'), 10_000);
      await flightStart(seats.auto, open.cycleId);
      await seats.auto.player.waitFor('round_result', (p) => p.roundId === acks[0].roundId && p.won, 10_000);
      const hand = await seats.hand.player.request('cash_out', {});
      expect(hand.ok, JSON.stringify(hand)).to.equal(true);
      expect(await d.db.bet.count({ where: { sessionId: seats.late.sessionId, status: 'PENDING' } }), 'the debit still in flight').to.equal(1);

      await replace('bet', async () => (await d.db.bet.count({ where: { sessionId: seats.late.sessionId, status: 'PENDING' } })) === 0);
      expect(await late).to.deep.equal({ ok: false, reason: 'wallet_timeout' });
      expect(await d.settle()).to.deep.equal([]);
      expect(await d.db.bet.findFirstOrThrow({ where: { sessionId: seats.late.sessionId } })).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
      expect(movements(seats.late)).to.deep.equal([['bet', STAKE], ['rollback', STAKE]]);
      expect(movements(seats.auto)).to.deep.equal([['bet', STAKE], ['win', paid(105n)]]);
      expect(movements(seats.hand)).to.deep.equal([['bet', STAKE], ['win', paid(centsOf(hand.cashOutMultiplier))]]);
    } finally {
      d.wallet.setFault('bet', null);
      for (const seat of Object.values<Seat>(seats)) seat.player.close();
    }
  });
});
