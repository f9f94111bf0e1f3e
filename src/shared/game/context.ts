import type { Config } from '../platform/config.js';
import type { Db } from '../platform/db/client.js';
import type { ReadReplica } from '../platform/db/replica.js';
import type { Sql } from '../platform/db/sql.js';
import type { DependencyMonitor } from '../platform/dependencies.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { OverloadGate } from '../platform/overload.js';
import type { Queues } from '../platform/queues.js';
import type { PlayerEmitter } from './players/emitter.js';
import type { Redis } from '../platform/redis.js';
import type { WalletClient } from '../wallet/client.js';

// What every role, and every desk of the game layer, is given at start: the one config,
// database (Prisma, and raw SQL on the same pool), Redis connection, queue producers, player
// emitter, metrics registry, logger and wallet client of the process, the dependency monitor,
// and the clock (injectable so that tests can move time). src/bootstrap.ts, the process
// wiring above every layer, builds it; its type lives here, in the top layer, so that the
// desks can name it (P14).
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
