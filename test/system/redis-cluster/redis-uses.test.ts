import { expect } from 'chai';
import { Redis as Server } from 'ioredis';
import { parseRedisNodes } from '../../../src/shared/platform/config.js';
import { createLogger } from '../../../src/shared/platform/logger.js';
import { clearRedisPrefix, createRedis, scanKeys, type Redis, type RedisTarget } from '../../../src/shared/platform/redis.js';
import { createQueues, QUEUE_KEYS } from '../../../src/shared/platform/queues.js';
import { BUCKETS, chargeTokens, peekTokens, takeToken } from '../../../src/shared/platform/rate-limit.js';
import { LeaderLease, type Term } from '../../../src/workers/leader.js';
import { CircuitBreaker, CIRCUIT_THRESHOLD, circuitKey } from '../../../src/shared/wallet/circuit.js';
import { PlayerEmitter } from '../../../src/shared/game/players/emitter.js';
import { admitSocket, connectBalance, connectBalanceKey, refreshSockets, SOCKETS_PER_SESSION } from '../../../src/shared/game/players/session-sockets.js';
import { countPresent, markPresent } from '../../../src/shared/game/players/presence.js';
import { liveDebitNodes } from '../../../src/shared/game/bets/debit.js';
import { until } from '../../support/game.js';
import { uniqueId } from '../../support/harness.js';
import { TEST_REDIS_URL } from '../../support/env.js';
import { startRedisCluster, type RedisCluster } from '../../support/redis-cluster.js';
import type { BetVerdict } from '../../../src/shared/domain/player-channel.js';

// D36: each Redis use of the service, on a Redis Cluster of three masters. A command or
// script whose keys fall in more than one slot is refused by the cluster (CROSSSLOT), so
// each use here is one whose keys must share a hash tag: the lease's three keys, a
// circuit's two, a queue's, the pipelines over many sessions, the heartbeats read in one
// MGET. The scans (circuits tracked, a deployment's keys removed) walk every master.
describe('Redis Cluster (D36): every Redis use', function () {
  this.timeout(60_000);
  const logger = createLogger({ level: 'silent' });
  const prefix = uniqueId('cluster-uses');
  let cluster: RedisCluster;
  let target: RedisTarget;
  let redis: Redis;
  const closing: (() => unknown)[] = [];

  before(async () => {
    cluster = await startRedisCluster();
    target = { redisUrl: TEST_REDIS_URL, redisClusterNodes: parseRedisNodes(cluster.nodes)! };
    redis = createRedis(target, { keyPrefix: `${prefix}:`, enableOfflineQueue: true });
    closing.push(() => redis.disconnect());
  });
  after(async () => {
    for (const close of closing.reverse()) await close();
    await cluster?.close();
  });

  it('the scheduler lease: claimed with its epoch, raised, handed over to the next leader', async () => {
    const first = new LeaderLease(redis, logger);
    const elected = new Promise<Term>((resolve) => first.once('elected', resolve));
    first.start();
    // a lease check that fails is only logged: the lease is never claimed
    await until('the lease to be claimed', async () => first.isLeader);
    const term = await elected;
    expect(await first.raiseEpoch(term.epoch + 10n)).to.equal(term.epoch + 11n);
    expect(await first.handOver(term.epoch + 11n)).to.equal(true);

    const next = new LeaderLease(redis, logger);
    closing.push(() => next.stop());
    const successor = new Promise<Term>((resolve) => next.once('elected', resolve));
    next.start();
    await until('the next lease to be claimed', async () => next.isLeader);
    expect((await successor).handedOverBy).to.equal(term.epoch + 11n);
  });

  it('the circuit breaker: opened in one process, seen open in another, tracked, closed by a probe', async () => {
    const follower = () => createRedis(target, { keyPrefix: `${prefix}:`, enableOfflineQueue: true, maxRetriesPerRequest: null });
    const [a, b] = [new CircuitBreaker(redis, logger, 1000, follower), new CircuitBreaker(redis, logger, 1000, follower)];
    closing.push(() => a.close(), () => b.close());
    for (let i = 0; i < CIRCUIT_THRESHOLD; i++) await a.record('op-1', 'bet', false);
    expect(await b.admit('op-1', 'bet')).to.equal('open');
    expect(await b.tracked()).to.deep.equal([{ operatorId: 'op-1', endpoint: 'bet', state: 'open' }]);
    // the open period over: exactly one probe, whose success closes the circuit for both
    await redis.hset(circuitKey('op-1', 'bet'), 'openUntil', '1');
    expect([await a.admit('op-1', 'bet'), await b.admit('op-1', 'bet')]).to.deep.equal(['probe', 'open']);
    await a.record('op-1', 'bet', true);
    expect(await b.state('op-1', 'bet')).to.equal('closed');
    expect(await b.tracked()).to.deep.equal([]);
  });

  it('the rate limits: a burst, then refusals with Retry-After', async () => {
    const verdicts = [];
    for (let i = 0; i <= BUCKETS.session.burst; i++) verdicts.push(await takeToken(redis, 'op-1', BUCKETS.session));
    expect(verdicts.slice(0, -1).every((v) => v.allowed)).to.equal(true);
    expect(verdicts.at(-1)).to.deep.equal({ allowed: false, retryAfterSeconds: 1 });
  });

  it('the failed-signature limits: one script over the buckets of a kid and of a client (D24)', async () => {
    const failures = [
      { bucket: BUCKETS.signatureFailuresPerKey, holder: 'ak_cluster' },
      { bucket: BUCKETS.signatureFailuresPerClient, holder: 'ip:192.0.2.1' },
    ];
    expect(await peekTokens(redis, failures)).to.deep.equal({ allowed: true });
    for (let i = 0; i < BUCKETS.signatureFailuresPerKey.burst + 2; i++) await chargeTokens(redis, failures);
    expect(await peekTokens(redis, failures)).to.deep.equal({ allowed: false, retryAfterSeconds: 1 });
  });

  it('the sockets of sessions, presence, the connect-balance window and the debit heartbeats', async () => {
    const admitted = [];
    for (let i = 0; i <= SOCKETS_PER_SESSION; i++) admitted.push(await admitSocket(redis, 'session-1', `socket-${i}`, 1000 + i));
    expect(admitted.at(-1)!.replaced).to.deep.equal(['socket-0']);
    const other = await admitSocket(redis, 'session-2', 'socket-x');
    // one pipeline over both sessions' keys
    await refreshSockets(redis, [{ sessionId: 'session-1', entry: admitted.at(-1)!.entry }, { sessionId: 'session-2', entry: other.entry }]);

    const engine = { operatorId: 'op-1', gameCode: 'dice', currency: 'EUR' };
    await markPresent(redis, engine, 'socket-1', 'socket-2');
    expect(await countPresent(redis, engine)).to.equal(2);

    expect(await connectBalance(redis, 'session-1', async () => '5000000')).to.equal('5000000');
    expect(await connectBalance(redis, 'session-1', async () => expect.fail('one wallet call per window'))).to.equal('5000000');

    // no heartbeat lives: one MGET over several nodes' keys
    expect([...(await liveDebitNodes(redis, ['node-1', 'node-2', 'node-3']))]).to.deep.equal([]);
  });

  it('the queues: every queue takes a job and counts it', async () => {
    const queues = createQueues(target, prefix);
    closing.push(() => queues.close());
    await queues.engine.add('tick', { cycleId: 'c-1', from: 'BETTING_OPEN' }, { delay: 60_000 });
    await queues.bet.add('bets', { node: 'n-1', tickets: [] });
    await queues.settle.add('batch', { walletJobIds: ['w-1'] });
    await queues.rollback.add('rollback', { walletJobIds: ['w-2'] });
    await queues.webhooks.add('deliver', { eventId: 'e-1' });
    const counts = await Promise.all(QUEUE_KEYS.map(async (key) => Object.values(await queues[key].getJobCounts('waiting', 'delayed')).reduce((a, b) => a + b, 0)));
    expect(counts).to.deep.equal([1, 1, 1, 1, 1]);
  });

  it('the player channel: messages between nodes on sharded pub/sub', async () => {
    const [a, b] = [new PlayerEmitter(target, prefix, logger), new PlayerEmitter(target, prefix, logger)];
    closing.push(() => a.close(), () => b.close());
    const received: unknown[] = [];
    b.onVerdict((betId, verdict) => received.push({ betId, verdict }));
    // the subscriptions are made as the nodes connect: sent until the first one arrives
    await until('a verdict from the other node', async () => {
      a.verdict(b.nodeId, 'bet-1', { ok: true } as BetVerdict);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return received.length > 0;
    });
    expect(received[0]).to.deep.equal({ betId: 'bet-1', verdict: { ok: true } });

    // a turn's balances go to the sessions' open connect-balance windows in one pipeline
    expect(await connectBalance(redis, 'session-3', async () => '1000000')).to.equal('1000000');
    expect(await connectBalance(redis, 'session-4', async () => '2000000')).to.equal('2000000');
    a.toSession('session-3', 'balance_update', { balanceMicro: '3000000' });
    a.toSession('session-4', 'balance_update', { balanceMicro: '4000000' });
    await until('the balances kept', async () => (await redis.get(connectBalanceKey('session-4'))) === '4000000');
    expect(await connectBalance(redis, 'session-3', async () => expect.fail('the window is open'))).to.equal('3000000');
  });

  // two nodes of the player channel whose warnings are kept, b hearing a's verdicts, and a's
  // first verdict heard: `crossed` sends one and tells whether b heard it
  async function watchedPair(prefix: string) {
    const lines: string[] = [];
    const watched = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
    const own = uniqueId(prefix);
    const [a, b] = [new PlayerEmitter(target, own, watched), new PlayerEmitter(target, own, watched)];
    closing.push(() => a.close(), () => b.close());
    const received: unknown[] = [];
    b.onVerdict((betId) => received.push(betId));
    const crossed = async (betId: string) => {
      a.verdict(b.nodeId, betId, { ok: true } as BetVerdict);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return received.includes(betId);
    };
    await until('a verdict from the other node', () => crossed('bet-before'));
    return { own, b, lines, received, crossed };
  }

  it('the player channel: a resubscription the cluster refused is made again, and messages flow', async () => {
    const { own, b, lines, received, crossed } = await watchedPair('cluster-watch');

    // the channels' master, and each node of the cluster, as an administrator reaches them
    const master = await cluster.masterOf(`${own}:{socket.io}`);
    const admins = cluster.ports.map((port) => new Server({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null }));
    closing.push(() => admins.forEach((admin) => admin.disconnect()));
    const channelMaster = admins[cluster.ports.indexOf(master)]!;
    const shardSubscribers = async () =>
      ((await channelMaster.client('LIST')) as string)
        .split('\n')
        .filter((line) => line.includes(' name=ioredis-cluster(ssubscriber) '))
        .map((line) => ({ cmd: / cmd=(\S+)/.exec(line)![1], ssub: Number(/ ssub=(\d+)/.exec(line)![1]) }));
    const subscribed = (await shardSubscribers()).filter((client) => client.ssub > 0).length;
    expect(subscribed).to.be.greaterThanOrEqual(2);

    try {
      // Pub/sub denied on every node: Redis drops the subscribed connections, ioredis makes
      // new ones and resubscribes, and the cluster refuses (NOPERM), as it refuses with
      // CLUSTERDOWN while a restarted cluster is still forming
      await Promise.all(admins.map((admin) => admin.acl('SETUSER', 'default', 'resetchannels')));
      await until('every subscriber to have been refused', async () => {
        const clients = await shardSubscribers();
        return clients.filter((client) => client.cmd === 'ssubscribe' && client.ssub === 0).length >= subscribed && clients.every((client) => client.ssub === 0);
      });
    } finally {
      await Promise.all(admins.map((admin) => admin.acl('SETUSER', 'default', 'allchannels')));
    }

    // allowed again: nothing changed in the cluster's slots, so only the watch resubscribes
    await until('a verdict from the other node again', () => crossed(`bet-after-${received.length}`), 20_000);
    expect(lines.map((line) => JSON.parse(line).msg)).to.include('pub/sub subscription lost: renewing the subscriber');
  });

  it('the player channel: a subscriber whose client stopped resubscribing for good is replaced, and messages flow', async () => {
    const { b, lines, received, crossed } = await watchedPair('cluster-wedge');

    // b's client left as ioredis leaves it when a cluster connection is reset while one of
    // its shard subscribers is still connecting (sharded-subscriber.ts): the shard
    // subscribers gone, and the group's reset never finishing, so none of its later resets
    // (a slot refresh, a reconnect) makes them again
    const client = Reflect.get(Reflect.get(b, 'sub') as object, 'connection') as object;
    const group = Reflect.get(client, 'shardedSubscribers') as { isResetting: boolean; stop(): void };
    group.isResetting = true;
    group.stop();
    expect(await crossed('bet-while-wedged')).to.equal(false);

    await until('a verdict from the other node again', () => crossed(`bet-after-${received.length}`), 20_000);
    expect(lines.map((line) => JSON.parse(line).msg)).to.include('pub/sub subscription lost: renewing the subscriber');
  });

  it('removing a deployment\'s keys walks every master', async () => {
    const found = async () => {
      const keys: string[] = [];
      for await (const batch of scanKeys(redis, `${prefix}:*`)) keys.push(...batch);
      return keys;
    };
    const before = await found();
    // the keys above fell on more than one master
    const masters = new Set(await Promise.all(before.map((key) => cluster.masterOf(key))));
    expect(masters.size).to.be.greaterThan(1);
    await clearRedisPrefix(target, prefix);
    expect(await found()).to.deep.equal([]);
  });
});
