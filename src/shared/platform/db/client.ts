import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client.js';
import { createPool, createSql, type PoolOptions, type Sql } from './sql.js';

export type Db = PrismaClient;

// Prisma 7 with the pg driver adapter: no native query engine is needed at run time. The
// raw-SQL helper (sql.ts, the hot paths) and Prisma (administration, reports, rare paths)
// share the process's poolSize connections between two pools, because the raw statements
// run with generic plans and Prisma's must not (sql.ts, GENERIC_PLANS): Prisma gets a
// quarter of them (at least one), the statements the rest (at least one). Connections open
// on demand, so an idle pool holds none.
export function poolShares(poolSize: number): { statements: number; prisma: number } {
  const prisma = Math.max(1, Math.ceil(poolSize / 4));
  return { statements: Math.max(1, poolSize - prisma), prisma };
}

export type Database = { db: Db; sql: Sql; close(): Promise<void> };

export function createDatabase(databaseUrl: string, poolSize = 10, options: PoolOptions = {}): Database {
  const shares = poolShares(poolSize);
  const prismaPool = createPool(databaseUrl, shares.prisma, options);
  const db = new PrismaClient({ adapter: new PrismaPg(prismaPool, { disposeExternalPool: true }) });
  const sql = createSql(createPool(databaseUrl, shares.statements, { ...options, genericPlans: true }));
  return { db, sql, close: () => closeDatabase({ db, sql }) };
}

// ends both pools (Prisma's through Prisma, which owns it)
export async function closeDatabase({ db, sql }: { db: Db; sql: Sql }): Promise<void> {
  await db.$disconnect();
  if (!sql.pool.ending) await sql.pool.end();
}

export function createDb(databaseUrl: string, poolSize = 10): Db {
  return createDatabase(databaseUrl, poolSize).db;
}

export { Prisma } from './generated/client.js';
// the enum values, for the response schemas of the reads (src/api/schemas)
export { BetStatus, RoundState } from './generated/client.js';
export type * from './generated/client.js';
