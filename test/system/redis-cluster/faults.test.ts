import { expect } from 'chai';
import { ALL_ROLES, startDeployment, type Deployment, type Seat } from '../../support/deployment.js';
import { until } from '../../support/game.js';
import { startRedisCluster, type RedisCluster } from '../../support/redis-cluster.js';

// D36: the service on a Redis Cluster of three masters, each with a replica, through the
// faults a cluster has: a master killed mid-round (its replica takes over), and the whole
// cluster restarted empty. Two processes run every role, so the players' messages cross
// between them on sharded pub/sub and either may lead the scheduler. Postgres is the record
// (P8): whatever Redis loses, every accepted bet ends settled or refunded, once, and the
// money invariants hold.

const STAKE = 1_000_000n;
const FUNDS = 10_000_000n;
const WIN = 1_940_000n;

const nextWindow = (seat: Seat) => seat.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 30_000);
const bet = (seat: Seat) => seat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });

describe('Redis Cluster (D36): faults', function () {
  this.timeout(180_000);
  let cluster: RedisCluster;
  let d: Deployment;
  let seats: Seat[];
  before(async () => {
    cluster = await startRedisCluster();
    d = await startDeployment({ redisClusterNodes: cluster.nodes });
    await Promise.all([d.start('a', ALL_ROLES), d.start('b', ALL_ROLES)]);
    // LOW always wins: every bet that is not voided is credited
    const table = await d.table({ bettingWindowMs: 3000, lowWeight: 1n, highWeight: 0n });
    // one player on each process
    seats = [await table.seat(FUNDS, 'a'), await table.seat(FUNDS, 'b')];
  });
  after(async () => {
    await d?.close();
    await cluster?.close();
  });

  const readiness = async (name: string) => {
    const response = await fetch(`${d.url(name)}/readyz`);
    return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
  };

  // a bet from each player in the same window, both accepted
  const betTogether = async () => {
    await nextWindow(seats[0]!);
    const acks = await Promise.all(seats.map((seat) => bet(seat)));
    expect(acks.map((ack) => ack.ok), JSON.stringify(acks)).to.deep.equal([true, true]);
    return acks as { roundId: string }[];
  };

  // each player is told the outcome of their round, wherever it was produced
  const resultsSeen = (acks: { roundId: string }[]) =>
    Promise.all(seats.map((seat, i) => seat.player.waitFor('round_result', (p) => p.roundId === acks[i]!.roundId, 30_000)));

  it('a master killed mid-round, the one serving the player channel: its replica takes over, the round is played out on both nodes', async () => {
    const acks = await betTogether();
    // the Socket.IO adapter's channels share this hash tag (emitter.ts)
    const killed = await cluster.failOver(`${d.redisKeyPrefix}:{socket.io}`);
    expect(cluster.ports).to.include(killed);

    const results = await resultsSeen(acks);
    expect(results.map((r) => [r.won, r.payoutMicro])).to.deep.equal([[true, WIN.toString()], [true, WIN.toString()]]);
    expect(await d.settle()).to.deep.equal([]);
    expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS - STAKE + WIN, FUNDS - STAKE + WIN]);
  });

  it('a master killed mid-round, the one holding the scheduler lease: every bet settled or refunded once, then play goes on', async () => {
    const before = seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'));
    const acks = await betTogether();
    await cluster.failOver(`${d.redisKeyPrefix}:{scheduler}:leader`);

    // the leader may have kept its lease (the replica has it) or lost it and an election
    // voided the round (D29): either way the round ends, and the wallet agrees with it
    await until('the rounds to end', async () => (await d.db.round.count({ where: { id: { in: acks.map((a) => a.roundId) }, settled: false } })) === 0, 30_000);
    expect(await d.settle()).to.deep.equal([]);
    const rounds = await d.db.round.findMany({ where: { id: { in: acks.map((a) => a.roundId) } } });
    for (const [i, seat] of seats.entries()) {
      const round = rounds.find((r) => r.id === acks[i]!.roundId)!;
      expect(round.state).to.be.oneOf(['SETTLED', 'VOIDED']);
      const expected = round.state === 'SETTLED' ? before[i]! - STAKE + WIN : before[i]!;
      expect(d.wallet.balanceOf(seat.playerRef, 'EUR'), `${round.state} round`).to.equal(expected);
    }

    const again = await betTogether();
    const results = await resultsSeen(again);
    expect(results.map((r) => r.won)).to.deep.equal([true, true]);
    expect(await d.settle()).to.deep.equal([]);
  });

  it('the whole cluster restarted empty mid-round: intake paused meanwhile, the round re-derived from Postgres, refunded once, play resumes', async () => {
    const before = seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'));
    const acks = await betTogether();

    await cluster.stop();
    await until('/readyz to report Redis down', async () => {
      const ready = await readiness('a');
      return ready.status === 503 && ready.body.checks.redis === 'failed';
    });
    const refused = await bet(seats[0]!);
    expect(refused).to.deep.equal({ ok: false, reason: 'service_unavailable' });

    // back, empty: no queue, no lease, no tick, no cluster configuration
    await cluster.restartEmpty();
    await until('/readyz 200 again on both', async () => (await readiness('a')).status === 200 && (await readiness('b')).status === 200, 30_000);
    await until('the rounds to be recovered', async () => (await d.db.round.count({ where: { id: { in: acks.map((a) => a.roundId) }, settled: false } })) === 0, 30_000);
    const rounds = await d.db.round.findMany({ where: { id: { in: acks.map((a) => a.roundId) } } });
    expect(rounds.map((r) => [r.state, r.voidReason])).to.deep.equal([['VOIDED', 'crash_recovery'], ['VOIDED', 'crash_recovery']]);
    expect(await d.settle()).to.deep.equal([]);
    expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal(before);

    const again = await betTogether();
    const results = await resultsSeen(again);
    expect(results.map((r) => r.won)).to.deep.equal([true, true]);
    expect(await d.settle()).to.deep.equal([]);
  });
});
