import type { Config } from './config.js';
import type { Db } from './db/client.js';
import type { ReadReplica } from './db/replica.js';
import type { Sql } from './db/sql.js';
import type { DependencyMonitor } from './dependencies.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { OverloadGate } from './overload.js';
import type { Queues } from './queues.js';
import type { PlayerEmitter } from '../game/players/emitter.js';
import type { Redis } from './redis.js';
import type { WalletClient } from '../wallet/client.js';

// What every role is given at start: the one config, database (Prisma, and raw SQL on the
// same pool), Redis connection, queue producers, player emitter, metrics registry, logger
// and wallet client of the process, the dependency monitor, the bet step trace, and the clock (injectable so
// that tests can move time).
export type ServiceContext = {
  config: Config;
  db: Db;
  // raw SQL on the same pool: the hot paths' set-based statements (db/sql.ts)
  sql: Sql;
  // D36: where the reports and reconciliation reads run (the primary without
  // DATABASE_REPLICA_URL); money paths never use it
  replica: ReadReplica;
  redis: Redis;
  queues: Queues;
  emitter: PlayerEmitter;
  metrics: Metrics;
  logger: Logger;
  wallet: WalletClient;
  // Postgres and Redis as last probed: intake pauses while either is away
  dependencies: DependencyMonitor;
  // D37: whether this process's own work is past its bound (new work is then refused)
  overload: OverloadGate;
  now: () => Date;
};
