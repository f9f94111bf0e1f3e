import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import {
  monthsOlderThan,
  monthsToEnsure,
  partitionMonth,
  partitionName,
  retentionCutoff,
  type Month,
} from '../../domain/months.js';
import type { Queryable, Sql } from './sql.js';

// D36: the money tables that grow with play are partitioned by month (UTC); see the
// migration 20261129000000_monthly_partitions and docs/decisions/D36-scale-out.md.

// Every partitioned table. Children first: a month is dropped in this order, so that no
// foreign key ever points into a partition already gone (rounds and pending_round_bets
// reference bets, webhook_attempts webhook_events, each within the same month).
export const PARTITIONED_TABLES = ['webhook_attempts', 'pending_round_bets', 'rounds', 'bets', 'wallet_calls', 'wallet_jobs', 'webhook_events'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

// the order an archive is written and restored in: parents before the rows that reference them
export const ARCHIVE_ORDER: readonly PartitionedTable[] = [...PARTITIONED_TABLES].reverse();

// how far ahead the scheduler leader keeps partitions (D36: daily, so a few months is ample)
export const DEFAULT_MONTHS_AHEAD = 3;

// one key for every process that creates or drops partitions: the leader's daily run and
// the CLI never race on CREATE TABLE
const PARTITION_LOCK_KEY = 7_263_036;

export type EnsureOptions = { now: Date; monthsAhead?: number; from?: Month };
export type EnsureResult = { months: Month[]; created: string[] };

// Makes every table's partition of each month from `from` (default: the current month)
// through `monthsAhead` months ahead, skipping those that exist. Idempotent; safe from any
// process at any moment. The bench seeding of past months calls it with `from`.
export async function ensurePartitions(sql: Sql, { now, monthsAhead = DEFAULT_MONTHS_AHEAD, from }: EnsureOptions): Promise<EnsureResult> {
  const months = monthsToEnsure(now, monthsAhead, from);
  const created: string[] = [];
  await sql.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK_KEY]);
    for (const month of months) {
      for (const table of ARCHIVE_ORDER) {
        const [row] = await tx.query<{ created: boolean }>('SELECT rgs_ensure_month_partition($1, $2::date) AS created', [table, `${month}-01`]);
        if (row?.created) created.push(partitionName(table, month));
      }
    }
  });
  return { months, created };
}

// The months that have a partition, per table, as attached now.
export async function partitionMonths(sql: Queryable): Promise<Map<PartitionedTable, Month[]>> {
  const rows = await sql.query<{ parent: string; child: string }>(
    `SELECT p.relname AS parent, c.relname AS child
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
     JOIN pg_namespace n ON n.oid = p.relnamespace
     WHERE n.nspname = current_schema() AND p.relname = ANY($1::text[])`,
    [[...PARTITIONED_TABLES]],
  );
  const months = new Map<PartitionedTable, Month[]>(PARTITIONED_TABLES.map((table) => [table, []]));
  for (const { parent, child } of rows) {
    const month = partitionMonth(parent, child);
    if (month) months.get(parent as PartitionedTable)!.push(month);
  }
  for (const list of months.values()) list.sort();
  return months;
}

// What keeps a month from being dropped: money work not finished in it. A bet still in play
// (PENDING or ACCEPTED), a wallet job neither completed nor abandoned, a webhook event still
// to deliver. None of these should be 120 days old; if one is, a human looks first.
const UNFINISHED = (month: Month) => `SELECT
   (SELECT count(*) FROM ${partitionName('bets', month)} WHERE status IN ('PENDING', 'ACCEPTED'))::int AS bets_in_play,
   (SELECT count(*) FROM ${partitionName('wallet_jobs', month)} WHERE completed_at IS NULL AND abandoned_at IS NULL)::int AS open_wallet_jobs,
   (SELECT count(*) FROM ${partitionName('webhook_events', month)} WHERE status = 'pending')::int AS pending_webhook_events`;

type Unfinished = { bets_in_play: number; open_wallet_jobs: number; pending_webhook_events: number };

export type RetentionResult = {
  cutoff: string;
  olderThanDays: number;
  dropped: Month[];
  kept: { month: Month; reason: string }[];
  dryRun: boolean;
};

// `rgs retention apply --older-than Nd` (D36): detaches and drops, table by table, every
// whole month that ended at least `days` days ago and holds no unfinished money work. The
// current and future months never qualify; under MIN_RETENTION_DAYS is refused (by
// monthsOlderThan). Idempotent: a month already dropped is simply absent. Dedupe keys of
// webhook events older than the cut-off go with them (their sessions are long over).
export async function applyRetention(sql: Sql, { now, days, dryRun = false }: { now: Date; days: number; dryRun?: boolean }): Promise<RetentionResult> {
  const byTable = await partitionMonths(sql);
  const every = [...new Set([...byTable.values()].flat())];
  const candidates = monthsOlderThan(every, now, days);
  const cutoff = retentionCutoff(now, days);
  const result: RetentionResult = { cutoff: cutoff.toISOString(), olderThanDays: days, dropped: [], kept: [], dryRun };
  for (const month of candidates) {
    const present = PARTITIONED_TABLES.filter((table) => byTable.get(table)!.includes(month));
    const complete = present.length === PARTITIONED_TABLES.length;
    const [work] = complete ? await sql.query<Unfinished>(UNFINISHED(month)) : [{ bets_in_play: 0, open_wallet_jobs: 0, pending_webhook_events: 0 }];
    const reasons = Object.entries(work!)
      .filter(([, count]) => count > 0)
      .map(([what, count]) => `${count} ${what.replace(/_/g, ' ')}`);
    if (reasons.length > 0) {
      result.kept.push({ month, reason: `unfinished money work: ${reasons.join(', ')}` });
      continue;
    }
    if (!dryRun) {
      await sql.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK_KEY]);
        for (const table of present) {
          const partition = partitionName(table, month);
          await tx.query(`ALTER TABLE ${table} DETACH PARTITION ${partition}`);
          await tx.query(`DROP TABLE ${partition}`);
        }
      });
    }
    result.dropped.push(month);
  }
  if (!dryRun) await sql.query('DELETE FROM webhook_dedupe_keys WHERE created_at < $1', [cutoff]);
  return result;
}

// ---- archive (`rgs archive --month YYYY-MM --out FILE`) ----
//
// A gzip file of JSON lines: a header {"rgsArchive":1,"month","tables","createdAt"}, then
// one line per row {"table","row"} (the row as Postgres's to_jsonb gives it, so bigint
// money keeps every digit), then a trailer {"end":true,"counts":{table: rows}}. A file
// without its trailer, or whose counts differ, was cut short and is refused on reading.

export const ARCHIVE_FORMAT = 1;

export type ArchiveHeader = { rgsArchive: number; month: Month; tables: PartitionedTable[]; createdAt: string };
export type ArchiveManifest = ArchiveHeader & { file: string; counts: Record<string, number> };

const FETCH_ROWS = 1000;

export async function archiveMonth(sql: Sql, month: Month, file: string, now: Date): Promise<ArchiveManifest> {
  const byTable = await partitionMonths(sql);
  const tables = ARCHIVE_ORDER.filter((table) => byTable.get(table)!.includes(month));
  if (tables.length === 0) throw new Error(`no partition holds ${month}: nothing to archive`);
  const header: ArchiveHeader = { rgsArchive: ARCHIVE_FORMAT, month, tables, createdAt: now.toISOString() };
  const counts: Record<string, number> = {};
  const client = await sql.pool.connect();
  const gzip = createGzip();
  const written = pipeline(gzip, createWriteStream(file));
  const write = async (line: string) => {
    if (!gzip.write(`${line}\n`)) await once(gzip, 'drain');
  };
  try {
    // one snapshot for every table of the month
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await write(JSON.stringify(header));
    for (const table of tables) {
      counts[table] = 0;
      await client.query(`DECLARE archive_rows NO SCROLL CURSOR FOR SELECT to_jsonb(t)::text AS row FROM ONLY ${partitionName(table, month)} t`);
      for (;;) {
        const { rows } = await client.query<{ row: string }>(`FETCH ${FETCH_ROWS} FROM archive_rows`);
        for (const { row } of rows) await write(`{"table":${JSON.stringify(table)},"row":${row}}`);
        counts[table] += rows.length;
        if (rows.length < FETCH_ROWS) break;
      }
      await client.query('CLOSE archive_rows');
    }
    await client.query('COMMIT');
    await write(JSON.stringify({ end: true, counts }));
    gzip.end();
    await written;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    gzip.destroy();
    await written.catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  return { ...header, file, counts };
}

export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

export type ArchivedRow = { table: PartitionedTable; row: string };

// Reads an archive back: its header, then each row (as JSON text, to be read exactly, for
// instance by Postgres's jsonb_populate_record), and checks the trailer's counts at the end.
export async function* readArchive(file: string): AsyncGenerator<ArchiveHeader | ArchivedRow> {
  const lines = createInterface({ input: Readable.from(createReadStream(file).pipe(createGunzip())), crlfDelay: Infinity });
  let header: ArchiveHeader | undefined;
  const counts: Record<string, number> = {};
  let trailer: { end: true; counts: Record<string, number> } | undefined;
  for await (const line of lines) {
    if (line === '') continue;
    if (trailer) throw new ArchiveError(`${file}: a line after the trailer`);
    if (!header) {
      const first = JSON.parse(line) as ArchiveHeader;
      if (first.rgsArchive !== ARCHIVE_FORMAT) throw new ArchiveError(`${file} is not an rgs archive of format ${ARCHIVE_FORMAT}`);
      header = first;
      yield header;
      continue;
    }
    if (line.startsWith('{"end":')) {
      trailer = JSON.parse(line) as typeof trailer;
      continue;
    }
    // {"table":"bets","row":{...}}: the table name is read, the row is kept as its text
    const match = /^\{"table":"([a-z_]+)","row":(.*)\}$/.exec(line);
    if (!match || !header.tables.includes(match[1] as PartitionedTable)) throw new ArchiveError(`${file}: a line that is not a row of the archive`);
    counts[match[1]!] = (counts[match[1]!] ?? 0) + 1;
    yield { table: match[1] as PartitionedTable, row: match[2]! };
  }
  if (!header) throw new ArchiveError(`${file} is empty`);
  if (!trailer) throw new ArchiveError(`${file} has no trailer: it was cut short`);
  for (const table of header.tables) {
    if ((counts[table] ?? 0) !== (trailer.counts[table] ?? 0)) {
      throw new ArchiveError(`${file}: ${table} has ${counts[table] ?? 0} rows, the trailer says ${trailer.counts[table]}`);
    }
  }
}
