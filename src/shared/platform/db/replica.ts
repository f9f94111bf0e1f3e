import { AppError, serviceUnavailable } from '../errors.js';
import type { Logger } from '../logger.js';
import { createDatabase, type Db } from './client.js';
import { statement, type Sql } from './sql.js';

// D36: the read replica. With DATABASE_REPLICA_URL set, the reports and reconciliation reads
// (GET /v1/rounds, GET /v1/rounds/{id}, GET /v1/reports/ggr, GET /v1/reports/wallet-calls)
// run on it; every write and every other read (placing, debiting and settling bets, wallet
// jobs, recovery, sessions, idempotency, webhooks, proofs, dispute packs, recall) stays on
// the primary. Without it, these reads run on the primary as before.
//
// A streaming replica shows the primary as it was a moment ago. So that this never makes a
// report wrong (a total short of rounds finished before the request, a round read as
// unknown or unfinished), a read first waits until the replica has replayed everything the
// primary had made durable when the read was asked for: the primary's WAL flush position,
// read with one function call that touches no table. A replica that does not get there
// within CATCH_UP_MS, does not answer, or cancels the read (a conflict with recovery) makes
// the read answer 503 service_unavailable with Retry-After. It never answers from an older
// state, and never falls back to the primary: the replica is there to keep the reports'
// scans off the primary, and a fall back would move them there at the moment the replica
// fails.

// the replica's connections per process: reports are few, rate-limited (D10) and short
const REPLICA_POOL_SIZE = 5;
// how long a read waits for the replica to replay what the primary had made durable
export const CATCH_UP_MS = 2000;
const CATCH_UP_POLL_MS = 10;

const PRIMARY_FLUSHED = statement('replica_primary_flushed', `SELECT pg_current_wal_flush_lsn()::text AS lsn`);
// NULL on a server that is not in recovery (a promoted replica, a primary named by mistake):
// it replays nothing from this primary, so it never counts as caught up
const REPLICA_REPLAYED = statement(
  'replica_replayed',
  `SELECT pg_last_wal_replay_lsn()::text AS lsn, coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) AS caught_up`,
);

export type ReadReplica = {
  // true when DATABASE_REPLICA_URL is set
  readonly configured: boolean;
  // Runs a report's reads on the replica once it has caught up with the primary (on the
  // primary without a replica). `work` must only read.
  read<T>(work: (db: Db) => Promise<T>): Promise<T>;
  // the replica's pool (nothing without a replica: the primary's is closed with the context)
  close(): Promise<void>;
};

export function createReadReplica(primary: { db: Db; sql: Sql }, replicaUrl: string | undefined, logger: Logger): ReadReplica {
  if (replicaUrl === undefined) {
    return { configured: false, read: (work) => work(primary.db), close: async () => undefined };
  }
  // every transaction read-only: a write sent here by mistake fails, even when the URL names
  // a server that is not a standby
  const replica = createDatabase(replicaUrl, REPLICA_POOL_SIZE, { readOnly: true, applicationName: 'rgs-replica' });

  const catchUp = async (): Promise<void> => {
    const [flushed] = await primary.sql.query<{ lsn: string }>(PRIMARY_FLUSHED);
    const deadline = Date.now() + CATCH_UP_MS;
    for (;;) {
      const [replayed] = await replica.sql.query<{ lsn: string | null; caught_up: boolean }>(REPLICA_REPLAYED, [flushed!.lsn]);
      if (replayed!.caught_up) return;
      if (Date.now() >= deadline) {
        logger.warn({ primaryFlushed: flushed!.lsn, replicaReplayed: replayed!.lsn }, 'read replica behind the primary: report refused');
        throw serviceUnavailable('the read replica is behind the primary; retry shortly');
      }
      await new Promise((resolve) => setTimeout(resolve, CATCH_UP_POLL_MS));
    }
  };

  return {
    configured: true,
    read: async (work) => {
      try {
        await catchUp();
        return await work(replica.db);
      } catch (err) {
        if (err instanceof AppError || !cancelledByRecovery(err)) throw err;
        logger.warn({ err: (err as Error).message }, 'read replica cancelled a report (conflict with recovery)');
        throw serviceUnavailable('the read replica cancelled the read; retry shortly');
      }
    },
    close: () => replica.close(),
  };
}

// A standby cancels a query whose rows the replay must remove (SQLSTATE 40001, "canceling
// statement due to conflict with recovery"): the read is worth retrying, not an internal
// error. Prisma's driver adapter wraps the pg error, so the chain is searched.
function cancelledByRecovery(err: unknown): boolean {
  for (let current = err, depth = 0; current && depth < 5; depth += 1) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (code === '40001' || (typeof message === 'string' && /conflict with recovery/i.test(message))) return true;
    current = cause;
  }
  return false;
}
