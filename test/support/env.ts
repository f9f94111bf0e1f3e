// The environment every test process shares. Tests talk to the real Postgres and Redis of
// the machine (DEVELOPERS.md). Each mocha run gets a database of its own (created and
// migrated by global.ts, dropped at the end), so that two runs on one machine never
// disturb each other.
//
// A parallel run (mocha --parallel) runs its files in worker processes, which inherit the
// run's environment. Each worker takes a database and a key prefix of its own, named after
// the run's (`…_w0`, `…-w0`): two files running at the same time never share a scheduler
// lease, a queue, a channel or a table, just as in a serial run.
const worker = process.env.MOCHA_WORKER_ID;

// the run's names, fixed by the first process that loads this file (the main mocha process)
process.env.TEST_RUN_DATABASE_URL ??=
  process.env.TEST_DATABASE_URL ?? `postgresql://postgres@127.0.0.1:5432/rgs_test_${process.pid}`;
process.env.TEST_RUN_REDIS_KEY_PREFIX ??= process.env.REDIS_KEY_PREFIX ?? `rgs-test-${process.pid}`;
export const TEST_RUN_DATABASE_URL = process.env.TEST_RUN_DATABASE_URL;
export const TEST_RUN_REDIS_KEY_PREFIX = process.env.TEST_RUN_REDIS_KEY_PREFIX;

export function workerDatabaseUrl(runDatabaseUrl: string, workerId: string): string {
  const url = new URL(runDatabaseUrl);
  url.pathname = `${url.pathname}_w${workerId}`;
  return url.toString();
}
export const workerRedisKeyPrefix = (runPrefix: string, workerId: string) => `${runPrefix}-w${workerId}`;

export const TEST_DATABASE_URL =
  worker === undefined ? TEST_RUN_DATABASE_URL : workerDatabaseUrl(TEST_RUN_DATABASE_URL, worker);
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

process.env.TEST_DATABASE_URL = TEST_DATABASE_URL;
process.env.DATABASE_URL = TEST_DATABASE_URL;
process.env.REDIS_URL = TEST_REDIS_URL;
// queues, locks and channels of this run (or worker) stay apart from any other's
process.env.REDIS_KEY_PREFIX =
  worker === undefined ? TEST_RUN_REDIS_KEY_PREFIX : workerRedisKeyPrefix(TEST_RUN_REDIS_KEY_PREFIX, worker);
process.env.LOG_LEVEL ??= 'silent';
// D37: the services of a test run share a small machine with the players, the wallet and
// other test files, whose event loops stall at times (a first import, a parallel worker's
// start) for longer than the product's bound: that would refuse bets service_busy at
// random. The overload tests set the bound they exercise.
process.env.OVERLOAD_DELAY_MS ??= '5000';
