import { expect } from 'chai';
import { startDeployment, type Deployment, type Seat } from '../../support/deployment.js';
import { until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { RecoveryTimes } from '../../support/recovery-time.js';
import { recordTestEvent } from '../../../src/shared/platform/outbox.js';

// The split deployment (D12), each role its own OS process: kill -9 of each role while it
// holds work, then its replacement (contract 3.1, D29, D31). Money is checked against the
// simulator's ledger after each, and every webhook event against what the receiver got; the
// time the replacement took to finish the work is measured. Some players spend free bets
// (D42) beside the paid ones: a free bet voided by the scheduler's replacement, or rejected by
// the bet worker's, gives its grant's round back, and its session, on a web node that lived,
// is told (free_bets); the free-bet invariants run with the money ones.
describe('faults: kill -9 of each role of the split deployment', function () {
  this.timeout(150_000);
  let d: Deployment;
  const recoveryTimes = new RecoveryTimes();
  before(async () => {
    d = await startDeployment();
    await Promise.all([
      d.start('web-1', 'api,realtime'),
      d.start('web-2', 'api,realtime'),
      d.start('scheduler', 'scheduler'),
      d.start('bet', 'bet'),
      d.start('settle', 'settle'),
      d.start('rollback', 'rollback'),
      d.start('webhooks', 'webhooks'),
    ]);
  });
  after(async () => {
    await d?.close();
    recoveryTimes.print();
  });

  const STAKE = 1_000_000n;
  const FUNDS = 10_000_000n;
  const WIN = 1_940_000n;

  const nextWindow = (seat: Seat) => seat.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
  const bet = (seat: Seat, side: 'LOW' | 'HIGH' = 'LOW') => seat.player.request('place_bet', { side, amountMicro: STAKE.toString() });
  const pendingAt = (endpoint: string) => async () => d.wallet.requests.some((r) => r.endpoint === endpoint && r.response === 'pending');
  const betOf = (sessionId: string) => d.db.bet.findFirstOrThrow({ where: { sessionId } });

  async function replace(role: string, done: () => Promise<boolean>, timeoutMs = 30_000) {
    await d.restart(role);
    const upAt = Date.now();
    await until(`${role}: recovery`, done, timeoutMs);
    recoveryTimes.record(role, Date.now() - upAt);
  }

  // D42: the session's grant with this many rounds left, as free_bets tells it
  const told = (seat: Seat, grantId: string, remaining: number) =>
    seat.player.waitFor('free_bets', (p) => p.freeBets.some((f: { grantId: string; remaining: number }) => f.grantId === grantId && f.remaining === remaining), 10_000);

  it('scheduler, during BETTING_OPEN with accepted bets, a free one among them: its replacement voids the rounds, refunds the stakes and gives the free round back', async () => {
    const table = await d.table({ bettingWindowMs: 4000 });
    const free = await d.freeBets(table.operator, { players: 1, stakeMicro: STAKE, rounds: 2 });
    const grantId = free.grantOf.get(free.playerRefs[0]!)!;
    const seats = await Promise.all([table.seat(FUNDS), table.seat(FUNDS, undefined, free.playerRefs[0])]);
    await nextWindow(seats[0]!);
    const acks = await Promise.all([bet(seats[0]!), seats[1]!.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId })]);
    expect(acks.every((a) => a.ok), JSON.stringify(acks)).to.equal(true);
    await told(seats[1]!, grantId, 1);

    await replace('scheduler', async () => (await d.db.round.count({ where: { id: { in: acks.map((a) => a.roundId) }, settled: false } })) === 0);
    expect(await d.settle()).to.deep.equal([]);
    const rounds = await d.db.round.findMany({ where: { id: { in: acks.map((a) => a.roundId) } } });
    expect(rounds.map((r) => [r.state, r.voidReason])).to.deep.equal([['VOIDED', 'crash_recovery'], ['VOIDED', 'crash_recovery']]);
    expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS, FUNDS]);
    // players on the table see the voids, and the clock goes on under the new scheduler
    await seats[0]!.player.waitFor('round_voided', (p) => p.roundId === acks[0].roundId && p.reason === 'crash_recovery', 10_000);
    // the free bet's round is back, and its session is told
    await told(seats[1]!, grantId, 2);
    await nextWindow(seats[0]!);
  });

  it('bet worker, during the debit of a free bet: the redelivered job resolves it as uncertain, rolls it back and gives the round back', async () => {
    const table = await d.table({ bettingWindowMs: 4000 });
    const free = await d.freeBets(table.operator, { players: 1, stakeMicro: STAKE });
    const grantId = free.grantOf.get(free.playerRefs[0]!)!;
    const seat = await table.seat(FUNDS, undefined, free.playerRefs[0]);
    await nextWindow(seat);
    d.wallet.setFault('bet', { kind: 'delay', ms: 10_000 });
    const ack = seat.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId }).catch((err: Error) => ({ ok: false, reason: err.message }));
    await until('the debit at the wallet', pendingAt('bet'));
    d.wallet.setFault('bet', null);

    await replace('bet', async () => (await betOf(seat.sessionId)).status !== 'PENDING');
    expect(await ack).to.deep.equal({ ok: false, reason: 'wallet_timeout' });
    expect(await d.settle()).to.deep.equal([]);
    expect(await betOf(seat.sessionId)).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
    expect(d.wallet.transactions.filter((t) => t.playerRef === seat.playerRef).map((t) => t.type)).to.deep.equal(['bet', 'rollback']);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS);
    // its acknowledgement (wallet_timeout) came before the rejection; the rejection tells
    await told(seat, grantId, 1);
  });

  it('settle worker, during the win call: its replacement credits the win exactly once', async () => {
    const table = await d.table({ bettingWindowMs: 1000, lowWeight: 1n, highWeight: 0n });
    const seat = await table.seat(FUNDS);
    await nextWindow(seat);
    d.wallet.setFault('win', { kind: 'delay', ms: 10_000 });
    expect((await bet(seat)).ok).to.equal(true);
    await until('the win at the wallet', pendingAt('win'), 15_000);
    d.wallet.setFault('win', null);

    await replace('settle', async () => (await betOf(seat.sessionId)).status === 'SETTLED');
    expect(await d.settle()).to.deep.equal([]);
    expect(d.wallet.transactions.filter((t) => t.playerRef === seat.playerRef && t.type === 'win').map((t) => t.amountMicro)).to.deep.equal([WIN]);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS - STAKE + WIN);
  });

  it('rollback worker, during the rollback call: its replacement refunds exactly once', async () => {
    const table = await d.table({ bettingWindowMs: 4000 });
    const seat = await table.seat(FUNDS);
    await nextWindow(seat);
    // the debit is booked but its answer is lost: uncertain, so it is rolled back
    d.wallet.setFault('bet', { kind: 'drop_after_apply' }, 1);
    d.wallet.setFault('rollback', { kind: 'delay', ms: 10_000 });
    expect((await bet(seat)).ok).to.equal(false);
    await until('the rollback at the wallet', pendingAt('rollback'));
    d.wallet.setFault('rollback', null);

    const job = async () => d.db.walletJob.findFirstOrThrow({ where: { sessionId: seat.sessionId, endpoint: 'rollback' } });
    await replace('rollback', async () => (await job()).completedAt !== null);
    expect(await d.settle()).to.deep.equal([]);
    expect(d.wallet.transactions.filter((t) => t.playerRef === seat.playerRef).map((t) => t.type)).to.deep.equal(['bet', 'rollback']);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS);
  });

  it('webhooks, during a delivery: its replacement delivers the event in flight and those written meanwhile, the same bytes', async () => {
    const { operator } = await d.table();
    d.webhooks.mode = 'hang';
    const inFlight = (await recordTestEvent(d.db, operator.operatorId, new Date()))!;
    await until('the attempt at the receiver', async () => d.webhooks.of(inFlight).length === 1, 15_000);
    await d.kill('webhooks');
    d.webhooks.mode = 'ok';
    // written by another process while no webhooks process runs
    const meanwhile = (await recordTestEvent(d.db, operator.operatorId, new Date()))!;

    // the attempt in flight holds its event for a lease (30 s from its claim), which lapses:
    // then it is sent again
    await replace('webhooks', async () => d.webhooks.acknowledged(inFlight) && d.webhooks.acknowledged(meanwhile), 60_000);
    expect(await d.settle()).to.deep.equal([]);
    const [first, second] = d.webhooks.of(inFlight);
    expect(second!.body).to.equal(first!.body);
    const attempts = await d.db.webhookAttempt.findMany({ where: { eventId: inFlight }, orderBy: { attempt: 'asc' } });
    // the killed attempt stays on record, with no answer
    expect(attempts.map((a) => [a.attempt, a.statusCode])).to.deep.equal([
      [1, null],
      [2, 200],
    ]);
    expect(await d.db.webhookEvent.findUniqueOrThrow({ where: { id: inFlight } })).to.deep.include({ status: 'delivered', attempts: 2, lastStatusCode: 200, lockedUntil: null });
  });

  it('web node, after the bet was acknowledged: the bet stays in force and the player, back through the other node, gets the state and the result', async () => {
    const table = await d.table({ bettingWindowMs: 2500, lowWeight: 1n, highWeight: 0n });
    const seat = await table.seat(FUNDS, 'web-1');
    await nextWindow(seat);
    const ack = await bet(seat);
    expect(ack.ok).to.equal(true);

    await d.kill('web-1');
    // contract 8.6: a disconnect after the acknowledgement does not cancel the bet
    const back = await Player.connect(d.url('web-2'), seat.token);
    const connected = await back.waitFor('connected');
    expect(connected.sessionId).to.equal(seat.sessionId);
    expect(connected.roundState.cycleId).to.be.a('string');
    const result = await back.waitFor('round_result', (p) => p.roundId === ack.roundId, 15_000);
    expect(result).to.include({ won: true, payoutMicro: WIN.toString() });
    await back.waitFor('balance_update', (p) => p.balanceMicro === (FUNDS - STAKE + WIN).toString(), 10_000);
    back.close();
    await d.restart('web-1');
    expect(await d.settle()).to.deep.equal([]);
  });
});
