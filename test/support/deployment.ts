import { dropDatabase, migrate } from '../../src/shared/platform/db/migrate.js';
import { createDb, type Db } from '../../src/shared/platform/db/client.js';
import { loadConfig } from '../../src/shared/platform/config.js';
import { setGameConfig, type GameConfigValues } from '../../src/shared/game/operators/game-config.js';
import { createOperator, type OnboardedOperator } from '../../src/shared/game/operators/operators.js';
import { clearRedisPrefix } from '../../src/shared/platform/redis.js';
import { WalletSimulator } from '../../src/simulator/wallet-simulator.js';
import { uniqueId } from './harness.js';
import { checkMoneyInvariants, waitForQuiescence } from './invariants.js';
import { checkWebhookInvariants } from './webhook-invariants.js';
import { WebhookReceiver } from './webhook-receiver.js';
import { EVENT_TYPES } from '../../src/shared/domain/events.js';
import { Player } from './player.js';
import { until } from './game.js';
import { freePort, spawnService, type ServiceProcess } from './processes.js';
import { signedRequest } from './signed-client.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './env.js';
import { ROLE_NAMES } from '../../src/shared/platform/config.js';
import { CRASH_CLIENT_SEED } from './crash.js';

// A deployment of real service processes for the fault suite: its own database
// and Redis namespace, the wallet simulator and a webhook receiver in the test process (every
// operator's endpoint takes every event, D31), and processes that a test can kill -9,
// restart or stop gracefully. Processes are named; each runs the roles given.
//
//   const d = await startDeployment();
//   await d.start('all', 'api,realtime,scheduler,bet,settle,rollback');
//   const table = await d.table({ bettingWindowMs: 3000 });
//   const seat = await table.seat(10_000_000n);
//   const free = await d.freeBets(table.operator, { players: 2, stakeMicro: 1_000_000n, rounds: 3 });   // D42
//   const spender = await table.seat(10_000_000n, undefined, free.playerRefs[0]);
//   const crash = await d.crashTable({ bettingWindowMs: 2000 });   // D40, known crash points
//   const flyer = await crash.seat(crashSeed(500n, 1000n).serverSeed, 10_000_000n);

export type DeploymentOptions = {
  // points the processes at another Postgres / Redis (a proxy, a private server)
  databaseUrl?: (direct: string) => string;
  redisUrl?: string;
  // D36: a private Redis Cluster (REDIS_CLUSTER_NODES), in place of the Redis of redisUrl
  redisClusterNodes?: string;
  walletCallTimeoutMs?: number;
  // Postgres's client_connection_check_interval for the deployment's database: a statement
  // whose process was killed is ended within this many ms, even while it waits for a lock,
  // instead of running on, and committing, once the lock is granted. A test that holds a
  // row lock to stop a process between two of its commits needs it, so that what the dead
  // process had not committed stays uncommitted.
  clientConnectionCheckMs?: number;
};

export type Seat = { playerRef: string; sessionId: string; token: string; player: Player };

export type Table = {
  operator: OnboardedOperator;
  // a funded player with a session, connected to the named process; playerRef: one of
  // FreeBets.playerRefs, whose grant the session can spend
  seat: (balanceMicro: bigint, via?: string, playerRef?: string) => Promise<Seat>;
};

// D42: a campaign made through the signed API (POST /v1/freebets) for players not yet seated:
// each has a grant of `rounds` at the campaign's stake
export type FreeBets = { campaignId: string; campaignRef: string; playerRefs: string[]; grantOf: Map<string, string> };
export type FreeBetTerms = { players: number; stakeMicro: bigint; rounds?: number; gameCode?: 'dice' | 'crash' };

// D40: a sandbox operator's crash game (D35), each seat's round at nonce 0 playing the server
// seed given, so that its crash point is known before the bet (test/support/crash.ts)
export type CrashTable = {
  operator: OnboardedOperator;
  seat: (serverSeed: string, balanceMicro: bigint, via?: string, playerRef?: string) => Promise<Seat>;
};

export type Deployment = {
  db: Db;
  wallet: WalletSimulator;
  webhooks: WebhookReceiver;
  databaseUrl: string;
  redisUrl: string;
  // the namespace of the deployment's keys (REDIS_KEY_PREFIX)
  redisKeyPrefix: string;
  processes: Map<string, ServiceProcess & { roles: string; port: number | undefined }>;
  start: (name: string, roles: string, env?: NodeJS.ProcessEnv) => Promise<ServiceProcess>;
  kill: (name: string) => Promise<void>;
  // a new process under the same name and roles; resolves once it logged 'rgs started'
  restart: (name: string) => Promise<ServiceProcess>;
  url: (name: string) => string;
  // resolves once Postgres holds no session of the named process: after a kill -9, once
  // Postgres has ended them, and with them any statement they had not committed
  disconnected: (name: string, timeoutMs?: number) => Promise<void>;
  // an operator with its own engine; walletUrl puts something (a proxy) before the simulator
  table: (config?: Partial<GameConfigValues>, options?: { walletUrl?: string }) => Promise<Table>;
  // an operator with its own crash engine, its configuration keys as written (D39)
  crashTable: (config?: Record<string, string | number>) => Promise<CrashTable>;
  // D42: a campaign of the operator's for `players` new playerRefs, through the first running
  // api process, in EUR, expiring in a week
  freeBets: (operator: OnboardedOperator, terms: FreeBetTerms) => Promise<FreeBets>;
  operatorIds: string[];
  // waits until nothing is in flight, then returns the findings of the money invariants and
  // of the webhook invariants (no event lost, D31)
  settle: (timeoutMs?: number) => Promise<string[]>;
  close: () => Promise<void>;
};

export const ALL_ROLES = ROLE_NAMES.join(',');

export async function startDeployment(options: DeploymentOptions = {}): Promise<Deployment> {
  const config = loadConfig();
  const name = `rgs_fault_${process.pid}_${uniqueId('d').replace(/[^a-z0-9]/gi, '').toLowerCase()}`;
  const direct = new URL(TEST_DATABASE_URL);
  direct.pathname = `/${name}`;
  await migrate(direct.toString());
  const db = createDb(direct.toString(), 4);
  if (options.clientConnectionCheckMs !== undefined) {
    // for the sessions that open from now on: the service's
    await db.$executeRawUnsafe(`ALTER DATABASE "${name}" SET client_connection_check_interval = ${Math.trunc(options.clientConnectionCheckMs)}`);
  }
  const databaseUrl = options.databaseUrl ? options.databaseUrl(direct.toString()) : direct.toString();
  const redisUrl = options.redisUrl ?? TEST_REDIS_URL;
  const prefix = uniqueId('rgs-fault');
  const wallet = await WalletSimulator.start();
  const webhooks = await WebhookReceiver.start();
  const processes: Deployment['processes'] = new Map();
  const operatorIds: string[] = [];

  const launch = async (processName: string, roles: string, env: NodeJS.ProcessEnv, port: number | undefined) => {
    const service = spawnService(processName, {
      ROLES: roles,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      ...(options.redisClusterNodes ? { REDIS_CLUSTER_NODES: options.redisClusterNodes } : {}),
      REDIS_KEY_PREFIX: prefix,
      WALLET_CALL_TIMEOUT_MS: String(options.walletCallTimeoutMs ?? 2000),
      ...(port === undefined ? {} : { PORT: String(port) }),
      // its Postgres sessions show under its name in pg_stat_activity (disconnected below)
      PGAPPNAME: processName,
      ...env,
    });
    processes.set(processName, Object.assign(service, { roles, port }));
    await service.waitForLog((line) => line.msg === 'rgs started', 30_000);
    return service;
  };
  const envOf = new Map<string, NodeJS.ProcessEnv>();

  // an operator whose wallet is the simulator (or walletUrl) and whose webhook endpoint takes
  // every event
  const onboard = async (settings: { walletUrl?: string; sandbox?: boolean }) => {
    const operator = await createOperator(db, config.masterKey, uniqueId('fault'), {
      walletUrl: settings.walletUrl ?? wallet.url,
      currencies: ['EUR'],
      ...(settings.sandbox ? { sandbox: true } : {}),
    });
    wallet.addCredential(operator.walletKeyId, operator.walletSignatureSecret);
    webhooks.addCredential(operator.walletKeyId, operator.walletSignatureSecret);
    await db.webhookEndpoint.create({ data: { operatorId: operator.operatorId, url: webhooks.url, events: [...EVENT_TYPES] } });
    operatorIds.push(operator.operatorId);
    return operator;
  };

  // a funded player with a session of the game, connected to the named process (the first
  // running api process by default)
  const runningApi = () => [...processes.entries()].find(([, p]) => p.roles.includes('api') && p.child.exitCode === null && p.child.signalCode === null)?.[0];
  const seatAt = async (
    operator: OnboardedOperator,
    gameCode: string,
    balanceMicro: bigint,
    via?: string,
    extra: Record<string, unknown> = {},
    playerRef = uniqueId('player'),
  ): Promise<Seat> => {
    const web = via ?? runningApi();
    if (!web) throw new Error('no running api process');
    wallet.setBalance(playerRef, 'EUR', balanceMicro);
    const body = { operatorId: operator.operatorId, playerRef, gameCode, currency: 'EUR', lang: 'en', jurisdiction: 'MT', ...extra };
    const response = await signedRequest(deployment.url(web), { kid: operator.apiKeyId, secret: operator.apiSecret }, 'POST', '/v1/session', body);
    if (response.status !== 200) throw new Error(`session launch failed: ${response.status} ${response.text}`);
    const token = response.body.sessionToken as string;
    const player = await Player.connect(deployment.url(web), token);
    await player.waitFor('connected');
    return { playerRef, sessionId: response.body.sessionId as string, token, player };
  };

  const deployment: Deployment = {
    db,
    wallet,
    webhooks,
    databaseUrl,
    redisUrl,
    redisKeyPrefix: prefix,
    processes,
    operatorIds,
    start: async (processName, roles, env = {}) => {
      envOf.set(processName, env);
      const port = roles.includes('api') || roles.includes('realtime') ? await freePort() : undefined;
      return launch(processName, roles, env, port);
    },
    kill: async (processName) => {
      await processes.get(processName)?.stop('SIGKILL');
    },
    restart: async (processName) => {
      const previous = processes.get(processName);
      if (!previous) throw new Error(`no process ${processName}`);
      await previous.stop('SIGKILL');
      return launch(processName, previous.roles, envOf.get(processName) ?? {}, previous.port);
    },
    url: (processName) => {
      const port = processes.get(processName)?.port;
      if (port === undefined) throw new Error(`${processName} serves no HTTP`);
      return `http://127.0.0.1:${port}`;
    },
    disconnected: async (processName, timeoutMs = 10_000) => {
      const sessions = async () =>
        (await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = ${processName}`)[0]!.n;
      await until(`Postgres to end the sessions of ${processName}`, async () => (await sessions()) === 0, timeoutMs);
    },
    table: async (gameConfig = {}, tableOptions = {}) => {
      const operator = await onboard({ walletUrl: tableOptions.walletUrl });
      await setGameConfig(db, operator.operatorId, 'dice', 'EUR', {
        bettingWindowMs: 2000,
        rollingWindowMs: 300,
        cooldownMs: 200,
        ...gameConfig,
      });
      return { operator, seat: (balanceMicro, via, playerRef) => seatAt(operator, 'dice', balanceMicro, via, {}, playerRef) };
    },
    crashTable: async (gameConfig = {}) => {
      const operator = await onboard({ sandbox: true });
      await setGameConfig(db, operator.operatorId, 'crash', 'EUR', {}, { bettingWindowMs: 2000, cooldownMs: 200, ...gameConfig });
      return {
        operator,
        seat: (serverSeed, balanceMicro, via, playerRef) =>
          seatAt(operator, 'crash', balanceMicro, via, { sandboxSeeds: { serverSeed, clientSeed: CRASH_CLIENT_SEED } }, playerRef),
      };
    },
    freeBets: async (operator, terms) => {
      const web = runningApi();
      if (!web) throw new Error('no running api process');
      const playerRefs = Array.from({ length: terms.players }, () => uniqueId('player'));
      const campaignRef = uniqueId('camp');
      const created = await signedRequest(deployment.url(web), { kid: operator.apiKeyId, secret: operator.apiSecret }, 'POST', '/v1/freebets', {
        campaignRef,
        gameCode: terms.gameCode ?? 'dice',
        currency: 'EUR',
        stakeMicro: terms.stakeMicro.toString(),
        rounds: terms.rounds ?? 1,
        playerRefs,
        expiresAt: new Date(Date.now() + 7 * 24 * 3600_000).toISOString(),
      });
      if (created.status !== 201) throw new Error(`campaign not created: ${created.status} ${created.text}`);
      const campaignId = created.body.campaignId as string;
      const grants = await db.freeBetGrant.findMany({ where: { campaignId } });
      return { campaignId, campaignRef, playerRefs, grantOf: new Map(grants.map((g) => [g.playerRef, g.id])) };
    },
    settle: async (timeoutMs = 30_000) => {
      await waitForQuiescence(db, { operatorIds, timeoutMs });
      return [...(await checkMoneyInvariants(db, wallet, { operatorIds })), ...(await checkWebhookInvariants(db, operatorIds, webhooks))];
    },
    close: async () => {
      await Promise.all([...processes.values()].map((p) => p.stop('SIGKILL')));
      await wallet.close();
      await webhooks.close();
      await db.$disconnect();
      await dropDatabase(direct.toString());
      // a private Redis (options.redisUrl) or cluster ends with its suite; on the shared one
      // the deployment's keys are removed
      if (!options.redisUrl && !options.redisClusterNodes) await clearRedisPrefix(redisUrl, prefix);
    },
  };
  return deployment;
}
