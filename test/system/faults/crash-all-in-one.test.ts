import { expect } from 'chai';
import { ALL_ROLES, startDeployment, type Deployment, type Seat } from '../../support/deployment.js';
import { until } from '../../support/game.js';
import { RecoveryTimes } from '../../support/recovery-time.js';
import { crashSeed } from '../../support/crash.js';
import { holdBetLock } from '../../support/row-lock.js';
import { Player } from '../../support/player.js';

// kill -9 of the all-in-one process at each phase of a round, then a restart (contract
// 3.1 crash recovery, D29): every accepted bet ends SETTLED or VOIDED, a win is
// credited exactly once, a void refunded exactly once, and the simulator's balances agree
// with the rounds. A crash flight (D40) is killed mid-way too. How long the restarted process
// took to settle or void what was in flight is measured and printed, not asserted.
describe('faults: kill -9 of the all-in-one process at each phase', function () {
  this.timeout(120_000);
  let d: Deployment;
  const recoveryTimes = new RecoveryTimes();
  before(async () => {
    // a statement of the killed process that waits for a row lock the test holds is ended,
    // not committed later (row-lock.ts)
    d = await startDeployment({ clientConnectionCheckMs: 100 });
    await d.start('all', ALL_ROLES);
  });
  after(async () => {
    await d?.close();
    recoveryTimes.print();
  });

  const STAKE = 1_000_000n;
  const FUNDS = 10_000_000n;

  // a fresh betting window, so that the bets placed now are taken before it closes
  const betInNextWindow = async (seats: Seat[], side: 'LOW' | 'HIGH' = 'LOW') => {
    await seats[0]!.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    return Promise.all(seats.map((s) => s.player.request('place_bet', { side, amountMicro: STAKE.toString() })));
  };

  // every round of these sessions settled (win dispatched or lost) or voided, and no debit
  // left in flight
  const resolved = (sessionIds: string[]) => async () => {
    const open = await d.db.round.count({ where: { sessionId: { in: sessionIds }, settled: false } });
    const pending = await d.db.bet.count({ where: { sessionId: { in: sessionIds }, status: 'PENDING' } });
    return open === 0 && pending === 0;
  };

  async function crashAndRestart(what: string, done: () => Promise<boolean>) {
    await d.restart('all');
    const upAt = Date.now();
    await until(`${what}: recovery`, done, 30_000);
    recoveryTimes.record(what, Date.now() - upAt);
  }

  it('BETTING_OPEN with accepted bets, a free one among them: the rounds are voided, every stake refunded once and the free round given back', async () => {
    const table = await d.table({ bettingWindowMs: 4000 });
    // D42: the third player spends a grant of 2 rounds
    const free = await d.freeBets(table.operator, { players: 1, stakeMicro: STAKE, rounds: 2 });
    const grantId = free.grantOf.get(free.playerRefs[0]!)!;
    const seats = await Promise.all([table.seat(FUNDS), table.seat(FUNDS), table.seat(FUNDS, undefined, free.playerRefs[0])]);
    await seats[0]!.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    const acks = await Promise.all([
      ...seats.slice(0, 2).map((s) => s.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() })),
      seats[2]!.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId }),
    ]);
    expect(acks.map((a) => a.ok)).to.deep.equal([true, true, true]);
    expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS - STAKE, FUNDS - STAKE, FUNDS]);

    await crashAndRestart('BETTING_OPEN', resolved(seats.map((s) => s.sessionId)));
    expect(await d.settle()).to.deep.equal([]);
    const rounds = await d.db.round.findMany({ where: { id: { in: acks.map((a) => a.roundId) } }, include: { bet: true } });
    expect(rounds.map((r) => [r.state, r.voidReason, r.bet.status])).to.deep.equal(rounds.map(() => ['VOIDED', 'crash_recovery', 'VOIDED']));
    expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS, FUNDS, FUNDS]);
    // the voided free bet no longer counts: back on the restarted process, its player's grant
    // has both rounds
    const back = await Player.connect(d.url('all'), seats[2]!.token);
    try {
      const connected = await back.waitFor('connected');
      expect(connected.freeBets).to.deep.include.members([{ grantId, campaignRef: free.campaignRef, stakeMicro: STAKE.toString(), remaining: 2, expiresAt: connected.freeBets[0]?.expiresAt }]);
    } finally {
      back.close();
    }
  });

  it('ROLLING: the rounds have no outcome, so they are voided and refunded', async () => {
    const table = await d.table({ bettingWindowMs: 1000, rollingWindowMs: 4000 });
    const seats = await Promise.all([table.seat(FUNDS), table.seat(FUNDS)]);
    const acks = await betInNextWindow(seats);
    expect(acks.every((a) => a.ok)).to.equal(true);
    await seats[0]!.player.next('round_state', (p) => p.phase === 'ROLLING', 10_000);

    await crashAndRestart('ROLLING', resolved(seats.map((s) => s.sessionId)));
    expect(await d.settle()).to.deep.equal([]);
    const rounds = await d.db.round.findMany({ where: { id: { in: acks.map((a) => a.roundId) } } });
    expect(rounds.map((r) => [r.state, r.outcomeSide])).to.deep.equal([['VOIDED', null], ['VOIDED', null]]);
    expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS, FUNDS]);
  });

  it('during settlement (the win call in flight): the win is credited exactly once after the restart', async () => {
    // LOW always wins on this table (D19 weights)
    const table = await d.table({ bettingWindowMs: 1000, lowWeight: 1n, highWeight: 0n });
    const seat = await table.seat(FUNDS);
    d.wallet.setFault('win', { kind: 'delay', ms: 10_000 });
    const [ack] = await betInNextWindow([seat]);
    expect(ack.ok).to.equal(true);
    // the wallet booked the credit; its answer is still on the way when the process dies
    await until('the win request at the wallet', async () => d.wallet.requests.some((r) => r.endpoint === 'win' && r.response === 'pending'), 15_000);
    d.wallet.setFault('win', null);

    const bet = () => d.db.bet.findUniqueOrThrow({ where: { id: ack.betId } });
    await crashAndRestart('win in flight', async () => (await bet()).status === 'SETTLED');
    expect(await d.settle()).to.deep.equal([]);
    const settled = await bet();
    expect(settled.payoutMicro).to.equal(1_940_000n);
    const credits = d.wallet.transactions.filter((t) => t.type === 'win' && t.playerRef === seat.playerRef);
    expect(credits.map((t) => t.amountMicro)).to.deep.equal([1_940_000n]);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS - STAKE + 1_940_000n);
  });

  it('during the bet wallet call: the debit is resolved as uncertain and rolled back with its transactionUuid', async () => {
    const table = await d.table({ bettingWindowMs: 4000 });
    const seat = await table.seat(FUNDS);
    d.wallet.setFault('bet', { kind: 'delay', ms: 10_000 });
    await seat.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    seat.player.socket.emit('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
    await until('the debit at the wallet', async () => d.wallet.requests.some((r) => r.endpoint === 'bet' && r.response === 'pending'), 10_000);
    d.wallet.setFault('bet', null);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR'), 'the wallet booked the debit').to.equal(FUNDS - STAKE);

    await crashAndRestart('bet call in flight', resolved([seat.sessionId]));
    expect(await d.settle()).to.deep.equal([]);
    const bet = await d.db.bet.findFirstOrThrow({ where: { sessionId: seat.sessionId } });
    expect(bet).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
    const moves = d.wallet.transactions.filter((t) => t.playerRef === seat.playerRef);
    expect(moves.map((t) => [t.type, t.transactionUuid === bet.betTransactionUuid || t.referenceTransactionUuid === bet.betTransactionUuid])).to.deep.equal([
      ['bet', true],
      ['rollback', true],
    ]);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS);
  });

  it('mid-flight (crash, D40): the cash-outs and the result durable before the kill are paid or settled, the rounds still flying voided and refunded', async () => {
    const table = await d.crashTable({ bettingWindowMs: 3000 });
    const high = crashSeed(1000n, 100000n).serverSeed;
    const durable = crashSeed(110n, 114n);
    const [auto, hand, lost, flying] = await Promise.all([table.seat(high, FUNDS), table.seat(high, FUNDS), table.seat(durable.serverSeed, FUNDS), table.seat(high, FUNDS)]);
    const open = await auto.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    const bets = await Promise.all(
      [auto, hand, lost, flying].map((s) => s.player.request('place_bet', { amountMicro: STAKE.toString(), ...(s === auto ? { autoCashOut: '1.05' } : {}) })),
    );
    expect(bets.every((a) => a.ok), JSON.stringify(bets)).to.equal(true);
    // the loss will be committed and told, its settlement held back by the test until the kill
    const lock = await holdBetLock(d.databaseUrl, bets[2].betId);
    try {
      await auto.player.waitFor('round_state', (p) => p.cycleId === open.cycleId && p.phase === 'ROLLING' && p.flightStartedAt, 15_000);
      await auto.player.waitFor('round_result', (p) => p.roundId === bets[0].roundId && p.won, 10_000);
      const cashed = await hand.player.request('cash_out', {});
      expect(cashed.ok, JSON.stringify(cashed)).to.equal(true);
      await lost.player.waitFor('round_result', (p) => p.roundId === bets[2].roundId && !p.won, 10_000);
      await lock.waitedOnBy('all');
      await d.kill('all');
      await d.disconnected('all');
      await lock.release();

      await crashAndRestart('mid-flight', resolved([auto, hand, lost, flying].map((s) => s.sessionId)));
      expect(await d.settle()).to.deep.equal([]);
      const rounds = await d.db.round.findMany({ where: { id: { in: bets.map((b) => b.roundId) } }, include: { bet: true } });
      const byId = new Map(rounds.map((r) => [r.id, r]));
      expect(bets.map((b) => [byId.get(b.roundId)!.state, byId.get(b.roundId)!.voidReason, byId.get(b.roundId)!.bet.payoutMicro])).to.deep.equal([
        ['SETTLED', null, 1_050_000n],
        ['SETTLED', null, BigInt(cashed.payoutMicro)],
        ['SETTLED', null, 0n],
        ['VOIDED', 'crash_recovery', null],
      ]);
      // D40: a cash-out at `cents` pays floor(stake * cents / 100)
      expect(BigInt(cashed.payoutMicro)).to.equal((STAKE * BigInt(cashed.cashOutMultiplier.replace('.', ''))) / 100n);
      expect([auto, hand, lost, flying].map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([
        FUNDS - STAKE + 1_050_000n,
        FUNDS - STAKE + BigInt(cashed.payoutMicro),
        FUNDS - STAKE,
        FUNDS,
      ]);
    } finally {
      await lock.release();
    }
  });
});
