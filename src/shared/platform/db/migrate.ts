import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PACK_KEY, TOKEN_KEY, ensureSigningKey, rotateSigningKey, type SigningAlgorithm } from '../signing-keys.js';

// `rgs migrate` (D11): creates the database named in DATABASE_URL when it is missing, then
// applies prisma/migrations/*/migration.sql in order, recording each in Prisma's own
// `_prisma_migrations` table so that `prisma migrate deploy` agrees wherever its schema
// engine can be fetched. Safe to run repeatedly and concurrently: a Postgres advisory lock
// serialises runners, and each migration runs in one transaction with its record.
// Given MASTER_KEY, it then makes the service's own signing keys when none is current (D32,
// D34, D38: the pack and token keys exist from `rgs migrate` on), once however many runners
// race. The token key is of SESSION_TOKEN_ALG (EdDSA while that is HS256); one of another
// algorithm is rotated to it, so that changing SESSION_TOKEN_ALG takes effect here.

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../../prisma/migrations', import.meta.url));

const MIGRATION_LOCK_KEY = 7_263_001; // arbitrary, fixed: the same key in every process

export type MigrationResult = {
  database: string;
  created: boolean;
  applied: string[];
  alreadyApplied: string[];
  // with a master key: the current signing key of each purpose, and whether this run made it
  signingKeys?: { purpose: string; kid: string; created: boolean }[];
};

export type MigrateOptions = { masterKey?: Buffer; tokenKeyAlg?: SigningAlgorithm };

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export async function migrate(databaseUrl: string, migrationsDir = MIGRATIONS_DIR, { masterKey, tokenKeyAlg }: MigrateOptions = {}): Promise<MigrationResult> {
  const created = await ensureDatabase(databaseUrl);
  const migrations = await readMigrations(migrationsDir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);
    const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const recorded = new Map(rows.map((row) => [row.migration_name, row]));
    const applied: string[] = [];
    const alreadyApplied: string[] = [];
    for (const migration of migrations) {
      const row = recorded.get(migration.name);
      if (row) {
        if (!row.finished_at) throw new MigrationError(`migration ${migration.name} failed earlier; resolve it by hand`);
        if (row.checksum !== migration.checksum) {
          throw new MigrationError(`migration ${migration.name} was modified after it was applied`);
        }
        alreadyApplied.push(migration.name);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new MigrationError(`migration ${migration.name} failed: ${(err as Error).message}`);
      }
      applied.push(migration.name);
    }
    const result: MigrationResult = { database: databaseName(databaseUrl), created, applied, alreadyApplied };
    if (masterKey) {
      const queryable = { query: async <R extends object>(text: unknown, values?: unknown[]) => (await client.query<R>(text as string, values)).rows };
      const pack = await ensureSigningKey(queryable, masterKey, PACK_KEY);
      let token = await ensureSigningKey(queryable, masterKey, TOKEN_KEY, tokenKeyAlg ?? 'EdDSA');
      if (tokenKeyAlg && token.algorithm !== tokenKeyAlg) {
        const transaction = async <T>(work: (tx: typeof queryable) => Promise<T>): Promise<T> => {
          await client.query('BEGIN');
          try {
            const done = await work(queryable);
            await client.query('COMMIT');
            return done;
          } catch (err) {
            await client.query('ROLLBACK');
            throw err;
          }
        };
        const rotated = await rotateSigningKey(transaction, masterKey, TOKEN_KEY, tokenKeyAlg);
        token = { kid: rotated.kid, algorithm: rotated.algorithm, created: true };
      }
      result.signingKeys = [
        { purpose: PACK_KEY, kid: pack.kid, created: pack.created },
        { purpose: TOKEN_KEY, kid: token.kid, created: token.created },
      ];
    }
    return result;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}

type Migration = { name: string; sql: string; checksum: string };

async function readMigrations(dir: string): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

const databaseName = (databaseUrl: string) => decodeURIComponent(new URL(databaseUrl).pathname.slice(1));

// Drops the database DATABASE_URL names (tests and load runs make throwaway ones),
// closing whatever connections it still has.
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const maintenanceUrl = new URL(databaseUrl);
  maintenanceUrl.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenanceUrl.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(databaseName(databaseUrl))} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

// Connects to the server's maintenance database to create ours; two runners racing on
// CREATE DATABASE both succeed (the loser sees duplicate_database or a unique violation).
async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const name = databaseName(databaseUrl);
  if (!name) throw new MigrationError('DATABASE_URL names no database');
  const maintenanceUrl = new URL(databaseUrl);
  maintenanceUrl.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenanceUrl.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      return true;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === '42P04' || code === '23505') return false;
      throw err;
    }
  } finally {
    await client.end();
  }
}
