import { expect } from 'chai';
import { ALL_ROLES, startDeployment, type Deployment, type Seat } from '../../support/deployment.js';
import { until } from '../../support/game.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';

// Dependency faults (D15, D28): Redis restarted mid-round, losing everything (it keeps
// nothing on disk), and Postgres connections dropped mid-settlement. While a dependency is
// away /readyz answers 503 and bets are refused with `service_unavailable`; intake resumes
// by itself when it returns, and nothing is lost or booked twice across the gap.

const STAKE = 1_000_000n;
const FUNDS = 10_000_000n;
const WIN = 1_940_000n;

const readiness = async (d: Deployment) => {
  const response = await fetch(`${d.url('all')}/readyz`);
  return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
};
const nextWindow = (seat: Seat) => seat.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 20_000);
const bet = (seat: Seat) => seat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });

describe('faults: Redis restarted mid-round, losing everything', function () {
  this.timeout(120_000);
  let redis: RedisServer;
  let d: Deployment;
  before(async () => {
    redis = await startRedisServer();
    d = await startDeployment({ redisUrl: redis.url });
    await d.start('all', ALL_ROLES);
  });
  after(async () => {
    await d?.close();
    await redis?.close();
  });

  it('pauses intake while Redis is down, then re-derives the round from Postgres: accepted bets voided and refunded once, play resumes', async () => {
    const table = await d.table({ bettingWindowMs: 5000 });
    const seats = await Promise.all([table.seat(FUNDS), table.seat(FUNDS)]);
    await nextWindow(seats[0]!);
    const acks = await Promise.all(seats.map((s) => bet(s)));
    expect(acks.every((a) => a.ok)).to.equal(true);

    await redis.stop();
    await until('/readyz to report Redis down', async () => {
      const ready = await readiness(d);
      return ready.status === 503 && ready.body.checks.redis === 'failed';
    });
    // the sockets live on the node, not in Redis: the player is still connected, and told why
    const refused = await seats[0]!.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
    expect(refused).to.deep.equal({ ok: false, reason: 'service_unavailable' });
    await seats[0]!.player.waitFor('bet_rejected', (p) => p.reason === 'service_unavailable');

    // back, empty: no queue, no lease, no tick
    await redis.restart();
    await until('/readyz 200 again', async () => (await readiness(d)).status === 200, 15_000);
    await until('the rounds to be recovered', async () => (await d.db.round.count({ where: { id: { in: acks.map((a) => a.roundId) }, settled: false } })) === 0, 20_000);
    const rounds = await d.db.round.findMany({ where: { id: { in: acks.map((a) => a.roundId) } } });
    expect(rounds.map((r) => [r.state, r.voidReason])).to.deep.equal([['VOIDED', 'crash_recovery'], ['VOIDED', 'crash_recovery']]);
    expect(await d.settle()).to.deep.equal([]);
    expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS, FUNDS]);

    // intake resumed by itself: the same player bets and is settled in a new cycle
    await nextWindow(seats[1]!);
    const again = await bet(seats[1]!);
    expect(again.ok, JSON.stringify(again)).to.equal(true);
    await seats[1]!.player.waitFor('round_result', (p) => p.roundId === again.roundId, 20_000);
    expect(await d.settle()).to.deep.equal([]);
  });
});

describe('faults: Postgres connections dropped', function () {
  this.timeout(120_000);
  let proxy: TcpProxy;
  let d: Deployment;
  before(async () => {
    proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: 5432 } });
    d = await startDeployment({ databaseUrl: (direct) => proxy.via(direct) });
    await d.start('all', ALL_ROLES);
  });
  after(async () => {
    await d?.close();
    await proxy?.close();
  });

  it('mid-settlement: every connection reset while the win is at the wallet; the win is credited exactly once', async () => {
    const table = await d.table({ bettingWindowMs: 1000, lowWeight: 1n, highWeight: 0n });
    const seat = await table.seat(FUNDS);
    await nextWindow(seat);
    d.wallet.setFault('win', { kind: 'delay', ms: 1500 }, 1);
    expect((await bet(seat)).ok).to.equal(true);
    await until('the win at the wallet', async () => d.wallet.requests.some((r) => r.endpoint === 'win' && r.response === 'pending'), 15_000);
    proxy.resetAll();

    await until('the win to be booked', async () => (await d.db.bet.findFirstOrThrow({ where: { sessionId: seat.sessionId } })).status === 'SETTLED', 20_000);
    expect(await d.settle()).to.deep.equal([]);
    expect(d.wallet.transactions.filter((t) => t.playerRef === seat.playerRef && t.type === 'win').map((t) => t.amountMicro)).to.deep.equal([WIN]);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS - STAKE + WIN);
  });

  it('while Postgres is unreachable: /readyz 503, bets refused with service_unavailable; then intake resumes by itself', async () => {
    const table = await d.table({ bettingWindowMs: 1500, lowWeight: 1n, highWeight: 0n });
    const seat = await table.seat(FUNDS);
    await nextWindow(seat);

    proxy.refuse(true);
    proxy.resetAll();
    await until('/readyz to report Postgres down', async () => {
      const ready = await readiness(d);
      return ready.status === 503 && ready.body.checks.postgres === 'failed';
    });
    const refused = await bet(seat);
    expect(refused).to.deep.equal({ ok: false, reason: 'service_unavailable' });
    await seat.player.waitFor('bet_rejected', (p) => p.reason === 'service_unavailable');
    const launch = await fetch(`${d.url('all')}/v1/session`, { method: 'POST', body: '{}' });
    expect(launch.status, 'an operator call is answered, not left hanging or failed with 500').to.be.oneOf([401, 503]);

    proxy.refuse(false);
    await until('/readyz 200 again', async () => (await readiness(d)).status === 200, 15_000);
    await until('a bet to be taken again', async () => {
      await nextWindow(seat);
      const ack = await bet(seat);
      return ack.ok ? ack : null;
    }, 30_000);
    expect(await d.settle()).to.deep.equal([]);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS - STAKE + WIN);
  });
});
