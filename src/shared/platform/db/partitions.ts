import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import type { Logger } from 'pino';
import {
  monthsOlderThan,
  retentionVerdict,
  type OpenWork,
  type VerifiedArchive,
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

// What keeps a month from being dropped: money work not finished in it, in every table that
// has the month's partition (D36). Each table is checked on its own, so a partition missing
// from one table (dropped by hand, never made) never hides the work in the others. A bet
// still in play, a round not settled or voided, a stake still held, a wallet job neither
// completed nor abandoned, a webhook event still to deliver; and a wallet job abandoned after
// 24 hours (contract 3.4, D23) until a human has reconciled it with the wallet (`rgs jobs
// reconcile`): its row is the only record of money the wallet may not have moved. None of
// these should be 120 days old; if one is, a human looks first.
const OPEN_WORK: Record<PartitionedTable, { table: PartitionedTable; what: string; where: string }[]> = {
  bets: [{ table: 'bets', what: 'bets in play', where: "status IN ('PENDING', 'ACCEPTED')" }],
  rounds: [{ table: 'rounds', what: 'rounds not settled', where: "state NOT IN ('SETTLED', 'VOIDED')" }],
  pending_round_bets: [{ table: 'pending_round_bets', what: 'stakes held', where: "state = 'HELD'" }],
  wallet_jobs: [
    { table: 'wallet_jobs', what: 'open wallet jobs', where: 'completed_at IS NULL AND abandoned_at IS NULL' },
    { table: 'wallet_jobs', what: 'abandoned wallet jobs not reconciled', where: 'abandoned_at IS NOT NULL AND reconciled_at IS NULL' },
  ],
  webhook_events: [{ table: 'webhook_events', what: 'pending webhook events', where: "status = 'pending'" }],
  wallet_calls: [],
  webhook_attempts: [],
};

// the unfinished work of a month in the tables given (those that have its partition), by
// what it is; nothing unfinished: {}
export async function openWork(q: Queryable, month: Month, tables: readonly PartitionedTable[]): Promise<OpenWork> {
  // in OPEN_WORK's order, the order a reason names them in
  const checks = Object.values(OPEN_WORK).flat().filter(({ table }) => tables.includes(table));
  if (checks.length === 0) return {};
  const rows = await q.query<{ what: string; n: number }>(
    checks
      .map(({ table, what, where }) => `SELECT ${quoteLiteral(what)} AS what, count(*)::int AS n FROM ONLY ${partitionName(table, month)} WHERE ${where}`)
      .join(' UNION ALL '),
  );
  const found = new Map(rows.map(({ what, n }) => [what, n]));
  return Object.fromEntries(checks.map(({ what }) => [what, found.get(what) ?? 0]).filter(([, n]) => (n as number) > 0));
}

const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;

// the rows of a month, per table that has its partition
async function monthCounts(q: Queryable, month: Month, tables: readonly PartitionedTable[]): Promise<Record<string, number>> {
  if (tables.length === 0) return {};
  const rows = await q.query<{ t: string; n: number }>(
    tables.map((table) => `SELECT ${quoteLiteral(table)} AS t, count(*)::int AS n FROM ONLY ${partitionName(table, month)}`).join(' UNION ALL '),
  );
  return Object.fromEntries(rows.map(({ t, n }) => [t, n]));
}

// the latest archive of a month `rgs archive` wrote and verified (D36)
async function latestArchive(q: Queryable, month: Month): Promise<VerifiedArchive | undefined> {
  const [row] = await q.query<{ file: string; created_at: Date; counts: Record<string, number>; open_work: OpenWork }>(
    'SELECT file, created_at, counts, open_work FROM month_archives WHERE month = $1 ORDER BY created_at DESC LIMIT 1',
    [month],
  );
  return row && { file: row.file, createdAt: row.created_at.toISOString(), counts: row.counts, openWork: row.open_work };
}

// How long retention waits for the tables' locks before it keeps the month for another run:
// while it waits, every statement of play on these tables queues behind it.
export const RETENTION_LOCK_TIMEOUT_MS = 5000;
const LOCK_NOT_AVAILABLE = '55P03';

export type RetentionResult = {
  cutoff: string;
  olderThanDays: number;
  dropped: Month[];
  // months dropped with --without-archive (also in `dropped`)
  droppedWithoutArchive: Month[];
  kept: { month: Month; reason: string }[];
  dryRun: boolean;
};

export type RetentionOptions = {
  now: Date;
  days: number;
  dryRun?: boolean;
  // drop months that have no verified archive (the operator's explicit choice, logged)
  withoutArchive?: boolean;
  log?: Pick<Logger, 'warn'>;
  lockTimeoutMs?: number;
};

// `rgs retention apply --older-than Nd` (D36): detaches and drops every whole month that
// ended at least `days` days ago, holds no unfinished money work, and has a verified archive
// that still matches it (or `withoutArchive`). The current and future months never qualify;
// under MIN_RETENTION_DAYS is refused (by monthsOlderThan). The check and the drop are one
// transaction that first locks the tables and the month's partitions, so that nothing can
// be written into the month between them. Idempotent: a month already dropped is simply
// absent. Dedupe keys of webhook events older than the cut-off go with them (their sessions
// are long over).
export async function applyRetention(
  sql: Sql,
  { now, days, dryRun = false, withoutArchive = false, log, lockTimeoutMs = RETENTION_LOCK_TIMEOUT_MS }: RetentionOptions,
): Promise<RetentionResult> {
  if (!Number.isInteger(lockTimeoutMs) || lockTimeoutMs <= 0) throw new RangeError('lockTimeoutMs must be a positive integer');
  const byTable = await partitionMonths(sql);
  const every = [...new Set([...byTable.values()].flat())];
  const candidates = monthsOlderThan(every, now, days);
  const cutoff = retentionCutoff(now, days);
  const result: RetentionResult = { cutoff: cutoff.toISOString(), olderThanDays: days, dropped: [], droppedWithoutArchive: [], kept: [], dryRun };
  for (const month of candidates) {
    const present = PARTITIONED_TABLES.filter((table) => byTable.get(table)!.includes(month));
    const judge = async (q: Queryable) => {
      const counts = await monthCounts(q, month, present);
      return { counts, verdict: retentionVerdict(month, { openWork: await openWork(q, month, present), archive: await latestArchive(q, month), counts, withoutArchive }) };
    };
    let judged: Awaited<ReturnType<typeof judge>>;
    if (dryRun) judged = await judge(sql);
    else {
      try {
        judged = await sql.transaction(async (tx) => {
          await tx.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK_KEY]);
          await tx.query(`SET LOCAL lock_timeout = ${lockTimeoutMs}`);
          // the parents (ONLY: not every month's partition) and this month's partitions, in
          // the order they are detached; DETACH would take the same locks one by one
          await tx.query(`LOCK TABLE ${present.map((table) => `ONLY ${table}, ONLY ${partitionName(table, month)}`).join(', ')} IN ACCESS EXCLUSIVE MODE`);
          const outcome = await judge(tx);
          if (outcome.verdict.drop) {
            for (const table of present) {
              const partition = partitionName(table, month);
              await tx.query(`ALTER TABLE ${table} DETACH PARTITION ${partition}`);
              await tx.query(`DROP TABLE ${partition}`);
            }
          }
          return outcome;
        });
      } catch (err) {
        if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err;
        result.kept.push({ month, reason: `the tables stayed locked by other work for ${lockTimeoutMs} ms: run it again` });
        continue;
      }
    }
    const { verdict, counts } = judged;
    if (!verdict.drop) {
      result.kept.push({ month, reason: verdict.reason });
      continue;
    }
    result.dropped.push(month);
    if (verdict.withoutArchive) {
      result.droppedWithoutArchive.push(month);
      log?.warn({ month, counts, dryRun }, dryRun ? 'retention would drop a month without a verified archive (--without-archive)' : 'retention dropped a month without a verified archive (--without-archive)');
    }
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
// what `rgs archive` prints, and records in month_archives once the file has been read back
export type ArchiveManifest = ArchiveHeader & { file: string; sha256: string; counts: Record<string, number>; openWork: OpenWork; verifiedAt: string };

const FETCH_ROWS = 1000;

// The file is created with O_EXCL ('wx'): an archive never replaces a file, which may be an
// earlier month's archive or anything else at that path (D36). Once written it is read back
// (the bytes' sha256 against those written, the rows per table against the trailer and the
// snapshot) and only then recorded in month_archives, which retention requires. A run that
// fails removes the file it created.
export async function archiveMonth(sql: Sql, month: Month, file: string, now: Date): Promise<ArchiveManifest> {
  const byTable = await partitionMonths(sql);
  const tables = ARCHIVE_ORDER.filter((table) => byTable.get(table)!.includes(month));
  if (tables.length === 0) throw new Error(`no partition holds ${month}: nothing to archive`);
  let handle: FileHandle;
  try {
    handle = await open(file, 'wx');
  } catch (err) {
    if ((err as { code?: string }).code === 'EEXIST') throw new ArchiveError(`${file} already exists: an archive never overwrites a file; choose another --out`);
    throw err;
  }
  const header: ArchiveHeader = { rgsArchive: ARCHIVE_FORMAT, month, tables, createdAt: now.toISOString() };
  const counts: Record<string, number> = {};
  let work: OpenWork = {};
  const client = await sql.pool.connect();
  const gzip = createGzip();
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const written = pipeline(gzip, hashing, handle.createWriteStream());
  const write = async (line: string) => {
    if (!gzip.write(`${line}\n`)) await once(gzip, 'drain');
  };
  try {
    try {
      // one snapshot for every table of the month, and for the work still open in it
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
      work = await openWork({ query: async (text: unknown) => (await client.query(text as string)).rows }, month, tables);
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
    const sha256 = hash.digest('hex');
    await verifyArchive(file, { month, sha256, counts });
    const verifiedAt = new Date();
    await sql.query(
      'INSERT INTO month_archives (id, month, file, sha256, counts, open_work, created_at, verified_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [randomUUID(), month, path.resolve(file), sha256, JSON.stringify(counts), JSON.stringify(work), now, verifiedAt],
    );
    return { ...header, file, sha256, counts, openWork: work, verifiedAt: verifiedAt.toISOString() };
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(file).catch(() => undefined);
    throw err;
  }
}

// Reads an archive back as retention will rely on it: the bytes on disk hash to what was
// written, the file reads to its trailer, and its rows per table are those of the snapshot.
async function verifyArchive(file: string, expected: { month: Month; sha256: string; counts: Record<string, number> }): Promise<void> {
  const onDisk = createHash('sha256');
  for await (const chunk of createReadStream(file)) onDisk.update(chunk as Buffer);
  if (onDisk.digest('hex') !== expected.sha256) throw new ArchiveError(`${file}: the bytes read back differ from those written`);
  const read: Record<string, number> = {};
  for await (const item of readArchive(file)) {
    if ('rgsArchive' in item) {
      if (item.month !== expected.month) throw new ArchiveError(`${file}: the header names ${item.month}, not ${expected.month}`);
    } else read[item.table] = (read[item.table] ?? 0) + 1;
  }
  for (const [table, n] of Object.entries(expected.counts)) {
    if ((read[table] ?? 0) !== n) throw new ArchiveError(`${file}: ${table} reads back ${read[table] ?? 0} rows, the month had ${n}`);
  }
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
