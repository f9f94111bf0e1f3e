import { dropDatabase, migrate } from '../../src/shared/platform/db/migrate.js';
import { loadConfig } from '../../src/shared/platform/config.js';
import { TEST_DATABASE_URL } from './env.js';
import { uniqueId } from './harness.js';

// A database and a Redis key prefix of a file's own, for a file whose counts are its whole
// process's or database's: the files of a worker run one after another on one database and
// one key prefix (env.ts), and what an earlier file left pending goes on after it ended.
// The scheduler's recovery queues every pending wallet job of its database again (contract
// 2.13) and the rollback and settle workers run what their queues still hold, so an earlier
// file's retries (its wallet gone with it) would be counted in this file's metrics.
// name: appended to the worker's database name, one per file; at most 19 characters (the
// key prefix is the name and 13 more, REDIS_KEY_PREFIX at most 32).
export async function ownStore(name: string): Promise<{ env: NodeJS.ProcessEnv; drop: () => Promise<void> }> {
  const databaseUrl = new URL(TEST_DATABASE_URL);
  databaseUrl.pathname += `_${name}`;
  const url = databaseUrl.toString();
  await dropDatabase(url);
  // as global.ts migrates the run's database: with MASTER_KEY, so the service's signing key
  // exists (D38)
  await migrate(url, undefined, { masterKey: loadConfig().masterKey });
  return {
    // the harness clears a key prefix of its own when it closes
    env: { DATABASE_URL: url, REDIS_KEY_PREFIX: uniqueId(name) },
    drop: () => dropDatabase(url),
  };
}
