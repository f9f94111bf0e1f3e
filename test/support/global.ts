import pg from 'pg';
import type { Context } from 'mocha';
import { dropDatabase, migrate } from '../../src/shared/platform/db/migrate.js';
import { loadConfig } from '../../src/shared/platform/config.js';
import { clearRedisPrefix } from '../../src/shared/platform/redis.js';
import {
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  TEST_RUN_DATABASE_URL,
  TEST_RUN_REDIS_KEY_PREFIX,
  workerDatabaseUrl,
  workerRedisKeyPrefix,
} from './env.js';

// Every run starts from an empty database, migrated the way an operator would migrate
// theirs (`rgs migrate`), and drops it and its Redis keys at the end.
//
// The database is made by a root hook rather than a global setup fixture: global fixtures
// run in the main mocha process only, while in a parallel run the tests run in workers,
// each with a database of its own (env.ts). The root `beforeAll` runs once in a serial run
// and before every file of a worker in a parallel one; each process prepares its database
// once, before its first file.
let prepared: Promise<void> | undefined;

export const mochaHooks = {
  async beforeAll(this: Context) {
    this.timeout(120_000);
    prepared ??= dropDatabase(TEST_DATABASE_URL).then(async () => {
      // as `rgs migrate` does it: with MASTER_KEY, so the service's signing key exists (D38)
      await migrate(TEST_DATABASE_URL, undefined, { masterKey: loadConfig().masterKey });
    });
    await prepared;
  },
};

// In the main process, after every worker has ended: the run's database and its workers'
// (found by name), and their key prefixes.
export async function mochaGlobalTeardown(): Promise<void> {
  const workers = await workerIds();
  if (!process.env.KEEP_TEST_DATABASE) {
    await dropDatabase(TEST_RUN_DATABASE_URL);
    for (const id of workers) await dropDatabase(workerDatabaseUrl(TEST_RUN_DATABASE_URL, id));
  }
  // the queues, locks and markers of the run's shared key prefixes (env.ts)
  await clearRedisPrefix(TEST_REDIS_URL, TEST_RUN_REDIS_KEY_PREFIX);
  for (const id of workers) await clearRedisPrefix(TEST_REDIS_URL, workerRedisKeyPrefix(TEST_RUN_REDIS_KEY_PREFIX, id));
}

async function workerIds(): Promise<string[]> {
  const maintenance = new URL(TEST_RUN_DATABASE_URL);
  const runName = decodeURIComponent(maintenance.pathname.slice(1));
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [`${runName}_w`]);
    return rows.map((row) => row.datname.slice(runName.length + 2)).filter((id) => /^\d+$/.test(id));
  } finally {
    await client.end();
  }
}
