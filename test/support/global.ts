import pg from 'pg';
import { migrate } from '../../src/shared/db/migrate.js';
import { TEST_DATABASE_URL } from './env.js';

// Mocha global fixtures: every run starts from an empty database, migrated the way an
// operator would migrate theirs (`rgs migrate`), and drops it at the end.
async function dropTestDatabase(): Promise<void> {
  const url = new URL(TEST_DATABASE_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export async function mochaGlobalSetup(): Promise<void> {
  await dropTestDatabase();
  await migrate(TEST_DATABASE_URL);
}

export async function mochaGlobalTeardown(): Promise<void> {
  if (!process.env.KEEP_TEST_DATABASE) await dropTestDatabase();
}
