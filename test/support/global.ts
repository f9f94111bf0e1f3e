import pg from 'pg';
import { migrate } from '../../src/shared/db/migrate.js';
import { TEST_DATABASE_URL } from './env.js';

// Mocha global fixture: every run starts from an empty database, migrated the way an
// operator would migrate theirs (`rgs migrate`).
export async function mochaGlobalSetup(): Promise<void> {
  const url = new URL(TEST_DATABASE_URL);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  await migrate(TEST_DATABASE_URL);
}
