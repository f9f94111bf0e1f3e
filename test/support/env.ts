// The environment every test process shares. Tests talk to the real Postgres and Redis of
// the machine (DEVELOPERS.md). Each mocha run gets a database of its own (created and
// migrated by global.ts, dropped at the end), so that two runs on one machine never
// disturb each other.
export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? `postgresql://postgres@127.0.0.1:5432/rgs_test_${process.pid}`;
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

process.env.TEST_DATABASE_URL = TEST_DATABASE_URL;
process.env.DATABASE_URL = TEST_DATABASE_URL;
process.env.REDIS_URL = TEST_REDIS_URL;
// queues, locks and channels of this run stay apart from any other run's
process.env.REDIS_KEY_PREFIX ??= `rgs-test-${process.pid}`;
process.env.LOG_LEVEL ??= 'silent';
