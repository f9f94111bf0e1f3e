import { expect } from 'chai';
import { createRedis, type Redis } from '../../../src/shared/platform/redis.js';
import { ALL_ROLES, startDeployment, type Deployment, type Seat } from '../../support/deployment.js';
import { until } from '../../support/game.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { LEASE_KEY } from '../../../src/workers/leader.js';

// D29: crash recovery wins over a dead leader's timers. The scheduler is killed with bets
// accepted in BETTING_OPEN; the tick that would close betting is left in Redis and falls due
// before a successor is elected (the test holds the dead leader's lease until then). The
// successor's first recovery attempt fails (Postgres refuses it), and Postgres comes back
// while the dead leader's tick is still waiting. Whatever order the two meet in, the cycle
// has no outcome: its rounds are voided and the stakes rolled back, never settled.
describe('faults: a leader killed in BETTING_OPEN, its tick overdue at the election (D29)', function () {
  this.timeout(120_000);
  let proxy: TcpProxy;
  let d: Deployment;
  let redis: Redis;
  before(async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: 5432 } });
    d = await startDeployment({ databaseUrl: (direct) => proxy.via(direct) });
    redis = createRedis(d.redisUrl, { keyPrefix: `${d.redisKeyPrefix}:`, enableOfflineQueue: true });
    await d.start('all', ALL_ROLES);
  });
  after(async () => {
    redis?.disconnect();
    await d?.close();
    await proxy?.close();
  });

  const STAKE = 1_000_000n;
  const FUNDS = 10_000_000n;
  const LEASE = LEASE_KEY;

  it('voids the interrupted rounds and rolls the stakes back; the overdue tick settles nothing', async () => {
    // a rolling window of 1 ms: a tick that closed this betting window would roll and settle
    // the cycle at once
    const table = await d.table({ bettingWindowMs: 3000, rollingWindowMs: 1, lowWeight: 1n, highWeight: 0n });
    const seats: Seat[] = await Promise.all([table.seat(FUNDS), table.seat(FUNDS)]);
    await seats[0]!.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    const acks = await Promise.all(seats.map((s) => s.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() })));
    expect(acks.map((a) => a.ok), JSON.stringify(acks)).to.deep.equal([true, true]);

    await d.kill('all');
    // the dead leader's lease outlives it until the test lets it go
    await redis.set(LEASE, 'the-dead-leader', 'PX', 60_000);
    const { cycleId } = await d.db.round.findUniqueOrThrow({ where: { id: acks[0].roundId } });
    const cycle = await d.db.cycle.findUniqueOrThrow({ where: { id: cycleId } });
    expect(cycle.phase, 'killed while betting was open').to.equal('BETTING_OPEN');
    await until('the dead leader\'s tick to fall due', async () => Date.now() > cycle.phaseEndsAt!.getTime() + 500, 15_000);

    const successor = await d.start('all', ALL_ROLES);
    proxy.refuse(true);
    proxy.resetAll();
    await redis.del(LEASE);
    await successor.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('recovery on election failed'), 15_000);
    proxy.refuse(false);

    const sessionIds = seats.map((s) => s.sessionId);
    await until(
      'the rounds to be resolved',
      async () =>
        (await d.db.round.count({ where: { sessionId: { in: sessionIds }, settled: false } })) === 0 &&
        (await d.db.bet.count({ where: { sessionId: { in: sessionIds }, status: 'PENDING' } })) === 0,
      30_000,
    );
    expect(await d.settle()).to.deep.equal([]);
    const rounds = await d.db.round.findMany({ where: { id: { in: acks.map((a) => a.roundId) } }, include: { bet: true } });
    expect(rounds.map((r) => [r.state, r.voidReason, r.outcomeSide, r.bet.status])).to.deep.equal(rounds.map(() => ['VOIDED', 'crash_recovery', null, 'VOIDED']));
    expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS, FUNDS]);
    expect(d.wallet.transactions.filter((t) => t.type === 'win' && seats.some((s) => s.playerRef === t.playerRef))).to.deep.equal([]);
    for (const seat of seats) seat.player.close();
  });
});
