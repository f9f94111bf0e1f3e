import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client.js';

export type Db = PrismaClient;

// Prisma 7 with the pg driver adapter: no native query engine is needed at run time.
export function createDb(databaseUrl: string, poolSize = 10): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 5000 });
  return new PrismaClient({ adapter });
}

export { Prisma } from './generated/client.js';
export type * from './generated/client.js';
