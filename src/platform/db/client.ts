import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client.js';
import { createPool, createSql, type PoolOptions, type Sql } from './sql.js';

export type Db = PrismaClient;

// Prisma 7 with the pg driver adapter: no native query engine is needed at run time. The
// raw-SQL helper (sql.ts) runs on the same pool, so a process holds one set of connections.
export function createDatabase(databaseUrl: string, poolSize = 10, options: PoolOptions = {}): { db: Db; sql: Sql } {
  const pool = createPool(databaseUrl, poolSize, options);
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  return { db, sql: createSql(pool) };
}

export function createDb(databaseUrl: string, poolSize = 10): Db {
  return createDatabase(databaseUrl, poolSize).db;
}

export { Prisma } from './generated/client.js';
// the enum values, for the response schemas of the reads (src/api/schemas)
export { BetStatus, RoundState } from './generated/client.js';
export type * from './generated/client.js';
