import { dropDatabase, migrate } from '../../src/platform/db/migrate.js';
import { clearRedisPrefix } from '../../src/platform/redis.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './env.js';

// Mocha global fixtures: every run starts from an empty database, migrated the way an
// operator would migrate theirs (`rgs migrate`), and drops it and its Redis keys at the end.
export async function mochaGlobalSetup(): Promise<void> {
  await dropDatabase(TEST_DATABASE_URL);
  await migrate(TEST_DATABASE_URL);
}

export async function mochaGlobalTeardown(): Promise<void> {
  if (!process.env.KEEP_TEST_DATABASE) await dropDatabase(TEST_DATABASE_URL);
  // the queues, locks and markers of the run's shared key prefix (env.ts)
  await clearRedisPrefix(TEST_REDIS_URL, process.env.REDIS_KEY_PREFIX!);
}
