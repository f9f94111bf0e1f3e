import pg from 'pg';
import { until } from './game.js';

// A row lock the test holds in a transaction of its own (SELECT ... FOR UPDATE), on a real
// Postgres connection: a service statement that writes the row waits for it, with whatever it
// committed before that statement durable and nothing of the statement itself. The fault
// suite uses it to stop a process between two of its commits (a round's result and its
// settlement), kill it there, and let go (startDeployment's clientConnectionCheckMs makes
// Postgres end the dead process's waiting statement rather than commit it later).
export type RowLock = {
  // the application names (a deployment's process names, PGAPPNAME) of the sessions waiting
  // for this lock, directly or behind another waiter
  waiters: () => Promise<string[]>;
  // resolves once a session of the named process waits for the lock
  waitedOnBy: (processName: string, timeoutMs?: number) => Promise<void>;
  release: () => Promise<void>;
};

// the bet's row (bets is partitioned by cycle_created_at: the id alone finds it)
export async function holdBetLock(databaseUrl: string, betId: string): Promise<RowLock> {
  return holdRowLock(databaseUrl, 'SELECT 1 FROM bets WHERE id = $1 FOR UPDATE', [betId]);
}

// the round's row (rounds is partitioned by cycle_created_at: the id alone finds it)
export async function holdRoundLock(databaseUrl: string, roundId: string): Promise<RowLock> {
  return holdRowLock(databaseUrl, 'SELECT 1 FROM rounds WHERE id = $1 FOR UPDATE', [roundId]);
}

async function holdRowLock(databaseUrl: string, lockSql: string, params: unknown[]): Promise<RowLock> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  const observer = new pg.Client({ connectionString: databaseUrl });
  await Promise.all([holder.connect(), observer.connect()]);
  await holder.query('BEGIN');
  const locked = await holder.query(lockSql, params);
  if (locked.rowCount !== 1) throw new Error(`the row to lock was not found (${locked.rowCount} rows)`);
  const [{ pid }] = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
  const waiters = async () =>
    (
      await observer.query<{ application_name: string }>(
        // directly, or behind a session that waits for it (a row's later waiters queue behind
        // its first)
        `WITH RECURSIVE waiting(pid) AS (
           SELECT pid FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))
           UNION
           SELECT a.pid FROM pg_stat_activity a JOIN waiting w ON w.pid = ANY (pg_blocking_pids(a.pid))
         )
         SELECT application_name FROM pg_stat_activity WHERE pid IN (SELECT pid FROM waiting)`,
        [pid],
      )
    ).rows.map((r) => r.application_name);
  let released = false;
  return {
    waiters,
    waitedOnBy: async (processName, timeoutMs = 10_000) => {
      await until(`a statement of ${processName} waiting for the row lock`, async () => (await waiters()).includes(processName), timeoutMs);
    },
    release: async () => {
      if (released) return;
      released = true;
      await holder.query('ROLLBACK').catch(() => undefined);
      await Promise.all([holder.end(), observer.end()]);
    },
  };
}
