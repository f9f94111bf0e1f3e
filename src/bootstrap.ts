import { loadConfig, type Config } from './shared/platform/config.js';
import type { ServiceContext } from './shared/game/context.js';
import { closeDatabase, createDatabase } from './shared/platform/db/client.js';
import { createReadReplica } from './shared/platform/db/replica.js';
import { DependencyMonitor } from './shared/platform/dependencies.js';
import { OverloadGate } from './shared/platform/overload.js';
import { createLogger } from './shared/platform/logger.js';
import { createMetrics, registerStateGauges } from './shared/platform/metrics.js';
import { createQueues } from './shared/platform/queues.js';
import { walletJobCounts } from './shared/game/wallet-jobs/wallet-jobs.js';
import { webhookPendingCounts } from './shared/game/webhooks/delivery.js';
import { PlayerEmitter } from './shared/game/players/emitter.js';
import { createRedis, redisAddress, redisReady } from './shared/platform/redis.js';
import { statement } from './shared/platform/db/sql.js';
import { CircuitBreaker } from './shared/wallet/circuit.js';
import { WalletClient } from './shared/wallet/client.js';

// Builds the per-process service context from a validated config, and tears it down.

// rgs_rounds (D15): the rounds not yet settled or voided, by state. `NOT settled` is what lets
// the partial index rounds_unsettled serve it: the read stays as small as the rounds in play.
const ROUNDS_IN_PLAY = statement(
  'metrics_rounds_in_play',
  `SELECT state::text AS state, count(*)::int AS count FROM rounds WHERE NOT settled GROUP BY state`,
);

export async function createServiceContext(config: Config = loadConfig()): Promise<ServiceContext> {
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  for (const warning of config.warnings) logger.warn(warning);
  const { db, sql } = createDatabase(config.databaseUrl, config.databasePoolSize);
  const replica = createReadReplica({ db, sql }, config.databaseReplicaUrl, logger);
  // keys of this connection are namespaced by ioredis; BullMQ and the Socket.IO adapter
  // take the prefix through their own options
  const redis = createRedis(config, { keyPrefix: `${config.redisKeyPrefix}:` });
  await redisReady(redis).catch((err: Error) => {
    throw new Error(`Redis at ${redisAddress(config)} did not answer: ${err.message}`);
  });
  redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
  const metrics = createMetrics();
  const circuit = new CircuitBreaker(redis, logger, config.walletCallTimeoutMs + 5000, () =>
    createRedis(config, { enableOfflineQueue: true, maxRetriesPerRequest: null }),
  );
  // the service clock as the context holds it (tests move it)
  const wallet = new WalletClient(sql, config.masterKey, metrics, logger, config.walletCallTimeoutMs, circuit, () => svc.now(), config.nodeEnv === 'production');
  const queues = createQueues(config, config.redisKeyPrefix);
  const emitter = new PlayerEmitter(config, config.redisKeyPrefix, logger);
  const dependencies = new DependencyMonitor(db, redis, logger);
  const overload = new OverloadGate(config.overloadDelayMs);
  const svc: ServiceContext = { config, db, sql, replica, redis, queues, emitter, metrics, logger, wallet, dependencies, overload, now: () => new Date() };
  registerStateGauges(metrics, {
    queueCounts: async () => {
      const all = await Promise.all(
        [queues.engine, queues.bet, queues.settle, queues.rollback, queues.webhooks].map(async (queue) =>
          Object.entries(await queue.getJobCounts('waiting', 'active', 'delayed', 'failed')).map(([state, count]) => ({
            queue: queue.name,
            state,
            count,
          })),
        ),
      );
      return all.flat();
    },
    roundsInPlay: () => sql.query<{ state: string; count: number }>(ROUNDS_IN_PLAY),
    // the service clock, as the jobs' retry budget reads it (tests move it)
    walletJobCounts: () => walletJobCounts(sql, svc.now()),
    circuits: () => circuit.tracked(),
    webhookEvents: () => webhookPendingCounts(svc, svc.now()),
  });
  dependencies.start();
  overload.start();
  return svc;
}

export async function closeServiceContext(svc: ServiceContext): Promise<void> {
  svc.dependencies.stop();
  svc.overload.stop();
  await svc.queues.close();
  await svc.emitter.close();
  svc.wallet.close();
  svc.wallet.circuit.close();
  svc.redis.disconnect();
  await svc.replica.close();
  await closeDatabase(svc);
}
