import { expect } from 'chai';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { io as connectClient } from 'socket.io-client';
import { loadConfig } from '../../src/shared/platform/config.js';
import { createDb, type Db } from '../../src/shared/platform/db/client.js';
import { setGameConfig } from '../../src/shared/game/operators/game-config.js';
import { createOperator, type OnboardedOperator } from '../../src/shared/game/operators/operators.js';
import { createRedis, type RedisTarget } from '../../src/shared/platform/redis.js';
import { WalletSimulator } from '../../src/simulator/wallet-simulator.js';
import { uniqueId } from './harness.js';
import { until } from './game.js';
import { Player } from './player.js';
import { freePort, spawnService, type ServiceProcess } from './processes.js';
import { signedRequest } from './signed-client.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './env.js';
import { LEASE_KEY } from '../../src/workers/leader.js';

// The split deployment of D12: two web nodes (api + realtime), two schedulers, one bet,
// one settle and one rollback process, each a real OS process. A player on one node gets
// results that other processes produced, and scheduler leadership moves when the leader
// is killed. Run on the shared Redis (test/system/cluster/split-roles.test.ts) and on a
// Redis Cluster (D36, test/system/redis-cluster/split-roles.test.ts).

// Where the deployment's Redis is: the variables the processes get, and the target the test
// reads the lease through
export type SplitRedis = { env: NodeJS.ProcessEnv; target: string | RedisTarget; close: () => Promise<void> };

// the suite's tests, inside a describe of the caller's; redis() is called by its before hook
export function splitDeploymentTests(context: Mocha.Suite, redis: () => Promise<SplitRedis>): void {
  context.timeout(90_000);
  const config = loadConfig();
  let store: SplitRedis | undefined;
  let db: Db;
  let wallet: WalletSimulator;
  let operator: OnboardedOperator;
  let webPorts: number[];
  const processes: ServiceProcess[] = [];
  let proxy: Server;
  let proxyPort: number;

  const spawnRole = (name: string, roles: string, extra: NodeJS.ProcessEnv = {}) => {
    const service = spawnService(name, {
      ROLES: roles,
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      WALLET_CALL_TIMEOUT_MS: '2000',
      ...store!.env,
      ...extra,
    });
    processes.push(service);
    return service;
  };

  before(async () => {
    store = await redis();
    db = createDb(TEST_DATABASE_URL, 2);
    wallet = await WalletSimulator.start();
    operator = await createOperator(db, config.masterKey, uniqueId('split'), { walletUrl: wallet.url, currencies: ['EUR'] });
    wallet.addCredential(operator.walletKeyId, operator.walletSignatureSecret);
    await setGameConfig(db, operator.operatorId, 'dice', 'EUR', {
      bettingWindowMs: 1500,
      rollingWindowMs: 300,
      cooldownMs: 200,
      lowWeight: 1n,
      highWeight: 0n,
    });
    webPorts = [await freePort(), await freePort()];
    spawnRole('web-1', 'api,realtime', { PORT: String(webPorts[0]) });
    spawnRole('web-2', 'api,realtime', { PORT: String(webPorts[1]) });
    spawnRole('scheduler-a', 'scheduler');
    spawnRole('scheduler-b', 'scheduler');
    spawnRole('bet', 'bet');
    spawnRole('settle', 'settle');
    spawnRole('rollback', 'rollback');
    await Promise.all(processes.map((p) => p.waitForLog((line) => line.msg === 'rgs started', 30_000)));

    // a load balancer without sticky sessions: each TCP connection to the next node in turn
    let turn = 0;
    proxy = createServer((client: Socket) => {
      const upstream = createConnection({ host: '127.0.0.1', port: webPorts[turn++ % webPorts.length]! });
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end);
      upstream.on('error', end);
    });
    proxyPort = await new Promise<number>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve((proxy.address() as { port: number }).port)));
    await warmUp();
  });

  after(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    proxy?.close();
    await wallet?.close();
    await db?.$disconnect();
    await store?.close();
  });

  async function launch(port: number) {
    const body = { operatorId: operator.operatorId, playerRef: uniqueId('player'), gameCode: 'dice', currency: 'EUR', lang: 'en', jurisdiction: 'MT' };
    wallet.setBalance(body.playerRef, 'EUR', 10_000_000n);
    const response = await signedRequest(`http://127.0.0.1:${port}`, { kid: operator.apiKeyId, secret: operator.apiSecret }, 'POST', '/v1/session', body);
    expect(response.status, response.text).to.equal(200);
    return { token: response.body.sessionToken as string, playerRef: body.playerRef };
  }

  // Seven processes that have just started share two cores and each compiles its code
  // paths and queries on first use: the first bet can take over a second to reach the
  // wallet and miss its 1.5 s window (it is then rejected, phase_not_open, and rolled back).
  // The tests start once a bet has gone through the web, bet, scheduler and settle processes.
  async function warmUp() {
    const { token } = await launch(webPorts[0]!);
    const player = await Player.connect(`http://127.0.0.1:${webPorts[1]}`, token);
    try {
      for (let round = 1; ; round++) {
        await player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
        const ack = await player.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
        if (ack.ok) {
          await player.waitFor('balance_update', (p) => p.balanceMicro === '10940000', 15_000);
          return;
        }
        if (round === 3) throw new Error(`no bet accepted in ${round} warm-up rounds: ${JSON.stringify(ack)}`);
      }
    } finally {
      player.close();
    }
  }

  async function playWinningRound(player: Player) {
    await player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const result = await player.waitFor('round_result', (p) => p.roundId === ack.roundId, 15_000);
    expect(result).to.include({ won: true, payoutMicro: '1940000' });
    return ack;
  }

  it('a player on web-2 receives the outcome and credit produced by the scheduler and settle processes', async () => {
    // launched through web-1, playing on web-2
    const { token, playerRef } = await launch(webPorts[0]!);
    const player = await Player.connect(`http://127.0.0.1:${webPorts[1]}`, token);
    await playWinningRound(player);
    await player.waitFor('balance_update', (p) => p.balanceMicro === '10940000', 15_000);
    expect(wallet.balanceOf(playerRef, 'EUR')).to.equal(10_940_000n);
    expect(wallet.violations).to.deep.equal([]);
    player.close();
  });

  it('needs no sticky sessions: WebSocket clients through a round-robin balancer; long-polling is refused', async () => {
    const { token } = await launch(webPorts[1]!);
    const first = await Player.connect(`http://127.0.0.1:${proxyPort}`, token);
    const second = await Player.connect(`http://127.0.0.1:${proxyPort}`, token);
    await Promise.all([first.waitFor('connected'), second.waitFor('connected')]);
    await playWinningRound(first);
    // the same session's room spans both nodes
    await second.waitFor('bet_placed', () => true, 15_000);
    first.close();
    second.close();

    const polling = connectClient(`http://127.0.0.1:${webPorts[0]}`, { auth: { token }, transports: ['polling'], reconnection: false, forceNew: true });
    const refused = await new Promise<boolean>((resolve) => {
      polling.once('connect', () => resolve(false));
      polling.once('connect_error', () => resolve(true));
    });
    polling.close();
    expect(refused, 'a long-polling client is refused').to.equal(true);
  });

  it('moves scheduler leadership when the leader is killed, and rounds go on', async () => {
    const redis = createRedis(store!.target, { enableOfflineQueue: true });
    try {
      const leaseKey = `${config.redisKeyPrefix}:${LEASE_KEY}`;
      const holder = await redis.get(leaseKey);
      const schedulers = processes.filter((p) => p.name.startsWith('scheduler'));
      const leader = schedulers.find((p) => p.logs.some((l) => l.msg === 'scheduler leadership taken' && l.holder === holder));
      expect(leader, 'one scheduler process holds the lease').to.not.equal(undefined);
      const follower = schedulers.find((p) => p !== leader)!;

      const { token } = await launch(webPorts[0]!);
      const player = await Player.connect(`http://127.0.0.1:${webPorts[0]}`, token);
      await player.waitFor('connected');
      // a loaded machine may have moved the lease before: the follower's next election counts
      const taken = (l: Record<string, unknown>) => l.msg === 'scheduler leadership taken';
      const electionsBefore = follower.logs.filter(taken).length;
      const killedAt = Date.now();
      await leader!.stop('SIGKILL');
      await until('the follower to take the lease', async () => follower.logs.filter(taken).length > electionsBefore, 15_000);
      const takeoverMs = Date.now() - killedAt;
      expect(takeoverMs, 'takeover within the lease time plus a renewal').to.be.below(8000);
      expect(await redis.get(leaseKey)).to.not.equal(holder);

      // the clock keeps running under the new leader
      await playWinningRound(player);
      player.close();
    } finally {
      redis.disconnect();
    }
  });
}
