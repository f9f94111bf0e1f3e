import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { MIGRATIONS_DIR, dropDatabase, migrate } from '../../../src/shared/platform/db/migrate.js';
import { createPool, createSql, type Sql } from '../../../src/shared/platform/db/sql.js';
import {
  ARCHIVE_ORDER,
  PARTITIONED_TABLES,
  applyRetention,
  archiveMonth,
  ensurePartitions,
  partitionMonths,
  readArchive,
  ArchiveError,
  type ArchivedRow,
  type ArchiveHeader,
  type RetentionResult,
} from '../../../src/shared/platform/db/partitions.js';
import { reconcileWalletJob } from '../../../src/shared/game/wallet-jobs/reconciliation.js';
import { createLogger } from '../../../src/shared/platform/logger.js';
import { addMonths, monthOf, monthStart, partitionName, type Month } from '../../../src/shared/domain/months.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tableWithBets, tick, until } from '../../support/game.js';
import { checkMoneyInvariants, waitForQuiescence } from '../../support/invariants.js';

// D36: the money tables partitioned by month. Retention, archive and the migration run on
// databases of their own (dropped at the end), so that no other file's rows are in their
// months; the straddling bet is played by the real service on the run's database.

const THE_MIGRATION = '20261129000000_monthly_partitions';
const DAY_MS = 24 * 60 * 60 * 1000;
const databases: string[] = [];

function freshDatabaseUrl(): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/rgs_partitions_test_${randomBytes(6).toString('hex')}`;
  databases.push(url.toString());
  return url.toString();
}

type Db = { url: string; sql: Sql; pool: pg.Pool };
async function freshDatabase(migrationsDir = MIGRATIONS_DIR): Promise<Db> {
  const url = freshDatabaseUrl();
  await migrate(url, migrationsDir);
  const pool = createPool(url, 3);
  return { url, sql: createSql(pool), pool };
}

const sqlState = async (work: Promise<unknown>): Promise<string | undefined> => {
  try {
    await work;
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).message;
  }
};

// One bet's rows in the month of `at` (its cycle began then), written as the money path
// writes them: operator, session, seed and engine once per `ids`, then a cycle, the bet and,
// unless it was rejected, its round and held stake; its debit's audit row, a win job and a
// webhook event with an attempt. `partitioned`: the schema after THE_MIGRATION.
type Owner = { operatorId: string; sessionId: string; seedId: string };
type Played = { betId: string; roundId: string; cycleId: string; betTransactionUuid: string; eventId: string; jobId: string; callId: string };

async function owner(q: pg.Pool): Promise<Owner> {
  const operatorId = `op-${randomBytes(4).toString('hex')}`;
  const sessionId = randomUUID();
  const seedId = randomUUID();
  await q.query(`INSERT INTO operators (id, wallet_url, updated_at) VALUES ($1, 'http://127.0.0.1:1/', now())`, [operatorId]);
  await q.query(`INSERT INTO engines (operator_id, game_code, currency, updated_at) VALUES ($1, 'dice', 'EUR', now())`, [operatorId]);
  await q.query(
    `INSERT INTO sessions (id, operator_id, player_ref, game_code, currency, lang, jurisdiction, mode, created_at, expires_at)
     VALUES ($1, $2, 'p1', 'dice', 'EUR', 'en', 'MT', 'REAL', now(), now() + interval '1 hour')`,
    [sessionId, operatorId],
  );
  await q.query(
    `INSERT INTO seeds (id, session_id, encrypted_server_seed, server_seed_hash, client_seed) VALUES ($1, $2, '\\x00', 'h', 'c')`,
    [seedId, sessionId],
  );
  await q.query(`INSERT INTO webhook_endpoints (operator_id, url, events, updated_at) VALUES ($1, 'http://127.0.0.1:1/', '{}', now())`, [operatorId]);
  return { operatorId, sessionId, seedId };
}

let cycleNumber = 0;
async function play(
  q: pg.Pool | pg.PoolClient,
  o: Owner,
  at: Date,
  { partitioned, status = 'SETTLED', dedupeKey = null }: { partitioned: boolean; status?: string; dedupeKey?: string | null },
): Promise<Played> {
  const p: Played = {
    betId: randomUUID(),
    roundId: randomUUID(),
    cycleId: randomUUID(),
    betTransactionUuid: randomUUID(),
    eventId: randomUUID(),
    jobId: randomUUID(),
    callId: randomUUID(),
  };
  const extra = (column: string) => (partitioned ? `, ${column}` : '');
  await q.query(
    `INSERT INTO cycles (id, operator_id, game_code, currency, number, phase, betting_window_ms, rolling_window_ms, cooldown_ms, min_bet_micro,
                         max_bet_micro, commission_micro, payout_multiplier_scaled, low_weight, high_weight, created_at, finished_at)
     VALUES ($1, $2, 'dice', 'EUR', $3, 'FINISHED', 15000, 4000, 3000, 10000, 100000000, 3000, 200000, 1, 1, $4, $4)`,
    [p.cycleId, o.operatorId, ++cycleNumber, at],
  );
  await q.query(
    `INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, amount_micro, status,
                       bet_transaction_uuid, created_at, payout_micro${extra('cycle_created_at')})
     VALUES ($1, $2, $3, $4, $5, 'p1', 'dice', 'EUR', 'LOW', 9007199254740993, $6::bet_status, $7, $8, $9${partitioned ? ', $8' : ''})`,
    [p.betId, o.operatorId, o.sessionId, p.cycleId, p.roundId, status, p.betTransactionUuid, at, status === 'SETTLED' ? 0n : null],
  );
  if (status !== 'REJECTED') {
    const nonce = cycleNumber;
    await q.query(
      `INSERT INTO rounds (id, operator_id, session_id, cycle_id, seed_id, bet_id, game_code, currency, nonce, state, settled, low_weight, high_weight,
                           created_at${extra('cycle_created_at')})
       VALUES ($1, $2, $3, $4, $5, $6, 'dice', 'EUR', $7, $8::round_state, $9, 1, 1, $10${partitioned ? ', $10' : ''})`,
      [p.roundId, o.operatorId, o.sessionId, p.cycleId, o.seedId, p.betId, nonce, status === 'SETTLED' ? 'SETTLED' : 'BETTING_OPEN', status === 'SETTLED', at],
    );
    await q.query(
      `INSERT INTO pending_round_bets (bet_id, round_id, state, created_at${extra('cycle_created_at')})
       VALUES ($1, $2, $3::pending_round_bet_state, $4${partitioned ? ', $4' : ''})`,
      [p.betId, p.roundId, status === 'SETTLED' ? 'RESOLVED' : 'HELD', at],
    );
  }
  await q.query(
    `INSERT INTO wallet_calls (id, operator_id, session_id, endpoint, request_uuid, transaction_uuid, attempt, request_body, status, created_at)
     VALUES ($1, $2, $3, 'bet', $4, $5, 1, '{}', 'RS_OK', $6)`,
    [p.callId, o.operatorId, o.sessionId, randomUUID(), p.betTransactionUuid, at],
  );
  await q.query(
    `INSERT INTO wallet_jobs (id, operator_id, session_id, endpoint, transaction_uuid, bet_id, purpose, payload, completed_at, created_at)
     VALUES ($1, $2, $3, 'win', $4, $5, 'win', '{}', $6, $7)`,
    [p.jobId, o.operatorId, o.sessionId, randomUUID(), p.betId, status === 'SETTLED' ? at : null, at],
  );
  await q.query(
    `INSERT INTO webhook_events (id, operator_id, event_type, occurred_at, data, dedupe_key, status, created_at)
     VALUES ($1, $2, 'round.settled', $3, '{"n": 1}', $4, 'delivered', $3)`,
    [p.eventId, o.operatorId, at, dedupeKey],
  );
  await q.query(
    `INSERT INTO webhook_attempts (event_id, attempt, url, started_at${extra('event_created_at')}) VALUES ($1, 1, 'http://127.0.0.1:1/', $2${partitioned ? ', $2' : ''})`,
    [p.eventId, at],
  );
  return p;
}

// a bet of play() still in play settles: its round, held stake and win job with it
async function settle(q: pg.Pool, p: Played): Promise<void> {
  await q.query(`UPDATE bets SET status = 'SETTLED' WHERE id = $1`, [p.betId]);
  await q.query(`UPDATE rounds SET state = 'SETTLED', settled = true WHERE id = $1`, [p.roundId]);
  await q.query(`UPDATE pending_round_bets SET state = 'RESOLVED' WHERE bet_id = $1`, [p.betId]);
  await q.query(`UPDATE wallet_jobs SET completed_at = now() WHERE id = $1`, [p.jobId]);
}

// the partition a row is in
const partitionOf = async (q: pg.Pool, table: string, where: string, value: unknown) =>
  (await q.query<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM ${table} WHERE ${where} = $1`, [value])).rows.map((r) => r.p);

const count = async (q: pg.Pool, table: string) => Number((await q.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

// the middle of the month `offset` months from the current one
const inMonth = (offset: number, now = new Date()) => new Date(monthStart(addMonths(monthOf(now), offset)).getTime() + 14 * DAY_MS);

describe('monthly partitions of the money tables (D36)', function () {
  this.timeout(120_000);
  const pools: pg.Pool[] = [];
  const tempDirs: string[] = [];

  after(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    for (const url of databases.splice(0)) await dropDatabase(url);
    await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  async function database(migrationsDir?: string): Promise<Db> {
    const db = await freshDatabase(migrationsDir);
    pools.push(db.pool);
    return db;
  }

  describe('the migration from unpartitioned tables', () => {
    it('moves a populated database into monthly partitions, keeping every row, rule and relation', async () => {
      const before = await mkdtemp(path.join(tmpdir(), 'rgs-migrations-'));
      tempDirs.push(before);
      await cp(MIGRATIONS_DIR, before, { recursive: true });
      // the database as it was before the partitions: this migration and every later one undone
      for (const name of await readdir(before)) if (name >= THE_MIGRATION && !name.endsWith('.toml')) await rm(path.join(before, name), { recursive: true });
      const { url, pool } = await database(before);

      // four months of play, among them a bet still in play and one rejected, and an RG event
      const o = await owner(pool);
      const months = [-3, -2, -1, 0].map((offset) => inMonth(offset));
      const played: Played[] = [];
      for (const [i, at] of months.entries()) {
        played.push(await play(pool, o, at, { partitioned: false, dedupeKey: i === 0 ? `rg_limit_tripped:${o.sessionId}:dailyLossMicro` : null }));
      }
      const inPlay = await play(pool, o, months[3]!, { partitioned: false, status: 'ACCEPTED' });
      const rejected = await play(pool, o, months[3]!, { partitioned: false, status: 'REJECTED' });
      const counts = Object.fromEntries(await Promise.all(PARTITIONED_TABLES.map(async (t) => [t, await count(pool, t)] as const)));
      expect(counts.bets).to.equal(6);

      const applied = await migrate(url);
      expect(applied.applied[0]).to.equal(THE_MIGRATION);
      // D36: every wallet job knows its bet's month once migrated
      const [{ unknown }] = (
        await pool.query<{ unknown: number }>(
          `SELECT count(*)::int AS unknown FROM wallet_jobs j JOIN bets b ON b.id = j.bet_id
           WHERE j.bet_cycle_created_at IS DISTINCT FROM b.cycle_created_at`,
        )
      ).rows as [{ unknown: number }];
      expect(unknown).to.equal(0);

      // every row is there, each in its month's partition, and the months ahead exist
      for (const table of PARTITIONED_TABLES) expect(await count(pool, table), table).to.equal(counts[table]);
      for (const [i, p] of played.entries()) {
        const month = monthOf(months[i]!);
        expect(await partitionOf(pool, 'bets', 'id', p.betId)).to.deep.equal([partitionName('bets', month)]);
        expect(await partitionOf(pool, 'rounds', 'id', p.roundId)).to.deep.equal([partitionName('rounds', month)]);
        expect(await partitionOf(pool, 'pending_round_bets', 'bet_id', p.betId)).to.deep.equal([partitionName('pending_round_bets', month)]);
        expect(await partitionOf(pool, 'wallet_calls', 'id', p.callId)).to.deep.equal([partitionName('wallet_calls', month)]);
        expect(await partitionOf(pool, 'wallet_jobs', 'id', p.jobId)).to.deep.equal([partitionName('wallet_jobs', month)]);
        expect(await partitionOf(pool, 'webhook_events', 'id', p.eventId)).to.deep.equal([partitionName('webhook_events', month)]);
        expect(await partitionOf(pool, 'webhook_attempts', 'event_id', p.eventId)).to.deep.equal([partitionName('webhook_attempts', month)]);
      }
      const byTable = await partitionMonths(createSql(pool));
      for (const table of PARTITIONED_TABLES) {
        expect(byTable.get(table), table).to.include.members([monthOf(months[0]!), monthOf(new Date()), addMonths(monthOf(new Date()), 3)]);
      }
      // money keeps every digit, and the bet carries its cycle's start
      const { rows } = await pool.query<{ amount_micro: bigint | string; same: boolean }>(
        `SELECT b.amount_micro::text AS amount_micro, b.cycle_created_at = c.created_at AS same FROM bets b JOIN cycles c ON c.id = b.cycle_id WHERE b.id = $1`,
        [played[0]!.betId],
      );
      expect(rows).to.deep.equal([{ amount_micro: '9007199254740993', same: true }]);
      // the dedupe key moved to its own table
      expect((await pool.query('SELECT dedupe_key FROM webhook_dedupe_keys')).rows).to.deep.equal([
        { dedupe_key: `rg_limit_tripped:${o.sessionId}:dailyLossMicro` },
      ]);

      // the rules still refuse: a second live bet of the session in a migrated bet's cycle,
      // a round for a bet that does not exist, an attempt of an event that does not exist
      const live = await pool.query<{ cycle_id: string; cycle_created_at: Date }>('SELECT cycle_id, cycle_created_at FROM bets WHERE id = $1', [inPlay.betId]);
      const { cycle_id, cycle_created_at } = live.rows[0]!;
      expect(
        await sqlState(
          pool.query(
            `INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, amount_micro, status,
                               bet_transaction_uuid, cycle_created_at)
             VALUES ($1, $2, $3, $4, $5, 'p1', 'dice', 'EUR', 'LOW', 1, 'PENDING', $6, $7)`,
            [randomUUID(), o.operatorId, o.sessionId, cycle_id, randomUUID(), randomUUID(), cycle_created_at],
          ),
        ),
      ).to.equal('23505');
      expect(
        await sqlState(
          pool.query(
            `INSERT INTO rounds (id, operator_id, session_id, cycle_id, seed_id, bet_id, game_code, currency, nonce, state, low_weight, high_weight, cycle_created_at)
             VALUES ($1, $2, $3, $4, $5, $6, 'dice', 'EUR', 999, 'BETTING_OPEN', 1, 1, $7)`,
            [randomUUID(), o.operatorId, o.sessionId, rejected.cycleId, o.seedId, randomUUID(), cycle_created_at],
          ),
        ),
      ).to.equal('23503');
      expect(
        await sqlState(pool.query(`INSERT INTO webhook_attempts (event_id, attempt, url, started_at, event_created_at) VALUES ($1, 1, 'u', now(), now())`, [randomUUID()])),
      ).to.equal('23503');
      // and new play lands in this month's partitions
      const fresh = await play(pool, o, new Date(), { partitioned: true });
      expect(await partitionOf(pool, 'bets', 'id', fresh.betId)).to.deep.equal([partitionName('bets', monthOf(new Date()))]);
    });
  });

  describe('rgs partitions ensure', () => {
    it('makes the coming months of every table once; a second run makes none; --from makes past months', async () => {
      const { sql } = await database();
      const now = new Date();
      const first = await ensurePartitions(sql, { now, monthsAhead: 5 });
      // the migration made three months ahead; two more per table now
      expect(first.created).to.have.length(2 * PARTITIONED_TABLES.length);
      expect(first.created).to.include(partitionName('bets', addMonths(monthOf(now), 5)));
      const again = await ensurePartitions(sql, { now, monthsAhead: 5 });
      expect(again).to.deep.equal({ months: first.months, created: [] });
      // concurrent runs (the leader and an operator's command) make each partition once
      const racing = await Promise.all([1, 2, 3].map(() => ensurePartitions(sql, { now, monthsAhead: 7 })));
      expect(racing.flatMap((r) => r.created).sort()).to.have.length(2 * PARTITIONED_TABLES.length);
      const past = await ensurePartitions(sql, { now, monthsAhead: 0, from: addMonths(monthOf(now), -14) });
      expect(past.created).to.have.length(14 * PARTITIONED_TABLES.length);
      const byTable = await partitionMonths(sql);
      for (const table of PARTITIONED_TABLES) expect(byTable.get(table)).to.have.length(14 + 1 + 7);
    });
  });

  describe('rgs retention apply and rgs archive', () => {
    it('drops only whole months older than the age, keeps younger ones and months with money still in play, and is idempotent', async () => {
      const { sql, pool } = await database();
      const now = new Date();
      await ensurePartitions(sql, { now, from: addMonths(monthOf(now), -8) });
      const o = await owner(pool);
      const old = await play(pool, o, inMonth(-7), { partitioned: true });
      const stuck = await play(pool, o, inMonth(-6), { partitioned: true, status: 'ACCEPTED' });
      const young = await play(pool, o, inMonth(-3), { partitioned: true });
      const current = await play(pool, o, now, { partitioned: true });

      // archives are the next test's: here every finished month goes without one
      const dry = await applyRetention(sql, { now, days: 120, dryRun: true, withoutArchive: true });
      expect(dry.dropped).to.include(monthOf(inMonth(-7)));
      expect(await count(pool, 'bets')).to.equal(4);

      const result = await applyRetention(sql, { now, days: 120, withoutArchive: true });
      // months -8 and -7 ended more than 120 days ago (at least 181); month -6 is kept for its bet in play
      expect(result.dropped).to.include.members([addMonths(monthOf(now), -8), monthOf(inMonth(-7))]);
      expect(result.dropped).to.not.include(monthOf(inMonth(-6)));
      expect(result.kept).to.deep.equal([
        { month: monthOf(inMonth(-6)), reason: 'unfinished money work: 1 bets in play, 1 rounds not settled, 1 stakes held, 1 open wallet jobs' },
      ]);
      for (const dropped of result.dropped) {
        expect(new Date(`${addMonths(dropped, 1)}-01T00:00:00Z`).getTime()).to.be.at.most(now.getTime() - 120 * DAY_MS);
      }
      const ids = (await pool.query<{ id: string }>('SELECT id FROM bets ORDER BY created_at')).rows.map((r) => r.id);
      expect(ids).to.deep.equal([stuck.betId, young.betId, current.betId]);
      expect(await partitionOf(pool, 'rounds', 'id', old.roundId)).to.deep.equal([]);
      expect(await partitionOf(pool, 'webhook_attempts', 'event_id', old.eventId)).to.deep.equal([]);
      const byTable = await partitionMonths(sql);
      for (const table of PARTITIONED_TABLES) expect(byTable.get(table), table).to.not.include(monthOf(inMonth(-7)));

      // again: nothing more to drop
      const again = await applyRetention(sql, { now, days: 120, withoutArchive: true });
      expect(again.dropped).to.deep.equal([]);
      // the bet settles: its month goes next time
      await settle(pool, stuck);
      expect((await applyRetention(sql, { now, days: 120, withoutArchive: true })).dropped).to.deep.equal([monthOf(inMonth(-6))]);
      // a longer age keeps more; under 120 days is refused
      expect((await applyRetention(sql, { now, days: 400, withoutArchive: true })).dropped).to.deep.equal([]);
      expect(await sqlState(applyRetention(sql, { now, days: 119, withoutArchive: true }))).to.match(/refused/);
      expect(await count(pool, 'bets')).to.equal(2);
    });

    it("archives a month's rows of every table to a file that reads back into the same rows", async () => {
      const { sql, pool } = await database();
      const now = new Date();
      const month: Month = addMonths(monthOf(now), -5);
      await ensurePartitions(sql, { now, from: month });
      const o = await owner(pool);
      await play(pool, o, inMonth(-5), { partitioned: true });
      await play(pool, o, inMonth(-5), { partitioned: true, status: 'REJECTED' });
      await play(pool, o, inMonth(-4), { partitioned: true });

      const dir = await mkdtemp(path.join(tmpdir(), 'rgs-archive-'));
      tempDirs.push(dir);
      const file = path.join(dir, `${month}.ndjson.gz`);
      const manifest = await archiveMonth(sql, month, file, now);
      expect(manifest.counts).to.deep.equal({
        bets: 2, rounds: 1, pending_round_bets: 1, wallet_calls: 2, wallet_jobs: 2, webhook_events: 2, webhook_attempts: 2,
      });

      // read back into an empty copy of each partition: the same rows, byte for byte as Postgres compares them
      let header: ArchiveHeader | undefined;
      const rows: ArchivedRow[] = [];
      for await (const item of readArchive(file)) {
        if ('rgsArchive' in item) header = item;
        else rows.push(item);
      }
      expect(header).to.include({ month, rgsArchive: 1 });
      expect(header!.tables).to.deep.equal(ARCHIVE_ORDER);
      for (const table of ARCHIVE_ORDER) {
        const partition = partitionName(table, month);
        await pool.query(`CREATE TEMP TABLE restored_${table} (LIKE ${partition})`);
        for (const { row } of rows.filter((r) => r.table === table)) {
          await pool.query(`INSERT INTO restored_${table} SELECT * FROM jsonb_populate_record(NULL::restored_${table}, $1::jsonb)`, [row]);
        }
        const diff = await pool.query(
          `(SELECT * FROM ONLY ${partition} EXCEPT ALL SELECT * FROM restored_${table}) UNION ALL (SELECT * FROM restored_${table} EXCEPT ALL SELECT * FROM ONLY ${partition})`,
        );
        expect(diff.rowCount, table).to.equal(0);
      }
      expect(rows.filter((r) => r.table === 'bets').map((r) => JSON.parse(r.row).amount_micro)).to.have.length(2);
      expect(rows.find((r) => r.table === 'bets')!.row).to.include('"amount_micro": 9007199254740993');

      // a file cut short is refused
      const { execFileSync } = await import('node:child_process');
      const cut = path.join(dir, 'cut.ndjson.gz');
      execFileSync('sh', ['-c', `gunzip -c ${file} | head -n 3 | gzip > ${cut}`]);
      const read = async () => {
        for await (const _ of readArchive(cut)) void _;
      };
      expect(await sqlState(read())).to.match(/cut short/);
      expect(await read().catch((err: unknown) => err)).to.be.instanceOf(ArchiveError);
    });
  });

  describe('what retention requires before it drops a month', () => {
    const now = new Date();
    const month = addMonths(monthOf(now), -7);
    const reasonFor = (result: RetentionResult, m: Month) => result.kept.find((k) => k.month === m)?.reason;

    async function archivesDir(): Promise<string> {
      const dir = await mkdtemp(path.join(tmpdir(), 'rgs-retention-'));
      tempDirs.push(dir);
      return dir;
    }

    it("checks every table that has the month's partition: a bet in play keeps its month when another table's partition is missing", async () => {
      const { sql, pool } = await database();
      await ensurePartitions(sql, { now, from: month });
      const o = await owner(pool);
      const accepted = await play(pool, o, inMonth(-7), { partitioned: true, status: 'ACCEPTED' });
      // one table's partition of the month is gone (dropped by hand, or never made)
      await pool.query(`ALTER TABLE webhook_attempts DETACH PARTITION ${partitionName('webhook_attempts', month)}`);
      await pool.query(`DROP TABLE ${partitionName('webhook_attempts', month)}`);

      for (const dryRun of [true, false]) {
        const result = await applyRetention(sql, { now, days: 120, dryRun, withoutArchive: true });
        expect(result.dropped, `dryRun ${dryRun}`).to.not.include(month);
        expect(reasonFor(result, month)).to.equal('unfinished money work: 1 bets in play, 1 rounds not settled, 1 stakes held, 1 open wallet jobs');
      }
      expect(await partitionOf(pool, 'bets', 'id', accepted.betId)).to.deep.equal([partitionName('bets', month)]);
      const [bet] = (await pool.query<{ status: string; amount: string }>('SELECT status, amount_micro::text AS amount FROM bets WHERE id = $1', [accepted.betId])).rows;
      expect(bet).to.deep.equal({ status: 'ACCEPTED', amount: '9007199254740993' });
    });

    it('drops a month only once rgs archive has written and verified it, and again only while it still matches; --without-archive is logged', async () => {
      const { sql, pool } = await database();
      const other = addMonths(month, 1);
      await ensurePartitions(sql, { now, from: month });
      const o = await owner(pool);
      await play(pool, o, inMonth(-7), { partitioned: true });
      await play(pool, o, inMonth(-6), { partitioned: true });

      const refused = await applyRetention(sql, { now, days: 120 });
      // (months with no rows go: dropping them loses nothing)
      expect(refused.dropped).to.not.include.members([month, other]);
      expect(reasonFor(refused, month)).to.equal(`no verified archive: run rgs archive --month ${month} --out FILE first, or pass --without-archive`);
      expect(await count(pool, 'bets')).to.equal(2);

      const dir = await archivesDir();
      const file = path.join(dir, `${month}.ndjson.gz`);
      const manifest = await archiveMonth(sql, month, file, now);
      expect(manifest.sha256).to.equal(createHash('sha256').update(await readFile(file)).digest('hex'));
      expect(manifest.openWork).to.deep.equal({});
      const records = (await pool.query('SELECT month, file, sha256, counts, open_work FROM month_archives')).rows;
      expect(records).to.deep.equal([{ month, file: path.resolve(file), sha256: manifest.sha256, counts: manifest.counts, open_work: {} }]);

      // a bet written into the month after its archive: the archive no longer stands for it
      await play(pool, o, inMonth(-7), { partitioned: true });
      const stale = await applyRetention(sql, { now, days: 120 });
      expect(stale.dropped).to.not.include.members([month, other]);
      expect(reasonFor(stale, month)).to.match(/^the archive .* no longer matches the month \(bets 1 archived, 2 now, /);
      expect(reasonFor(stale, month)).to.match(/: run rgs archive --month \d{4}-\d{2} --out FILE again, or pass --without-archive$/);

      await archiveMonth(sql, month, path.join(dir, `${month}-again.ndjson.gz`), now);
      const applied = await applyRetention(sql, { now, days: 120 });
      expect(applied.dropped).to.include(month);
      expect(applied.droppedWithoutArchive).to.deep.equal([]);
      expect(reasonFor(applied, other)).to.match(/^no verified archive/);
      expect(await count(pool, 'bets')).to.equal(1);

      // the operator's explicit choice, logged at warn with the month and its rows
      const lines: string[] = [];
      const log = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
      const without = await applyRetention(sql, { now, days: 120, withoutArchive: true, log });
      expect(without.dropped).to.include(other);
      expect(without.droppedWithoutArchive).to.include(other);
      expect(await count(pool, 'bets')).to.equal(0);
      const warned = lines.map((line) => JSON.parse(line)).find((entry) => entry.month === other);
      expect(warned).to.include({ level: 40, msg: 'retention dropped a month without a verified archive (--without-archive)' });
      expect(warned.counts).to.include({ bets: 1, rounds: 1, wallet_jobs: 1 });
    });

    it('keeps a month with an abandoned win until a human has reconciled it, and then needs an archive taken after', async () => {
      const { sql, pool } = await database();
      await ensurePartitions(sql, { now, from: month });
      const o = await owner(pool);
      const p = await play(pool, o, inMonth(-7), { partitioned: true });
      // its win job was given up after 24 hours (contract 3.4): a ticket for a human
      await pool.query(`UPDATE wallet_jobs SET completed_at = NULL, abandoned_at = $2, last_error = 'RS_ERROR_TIMEOUT' WHERE id = $1`, [p.jobId, inMonth(-7)]);

      const kept = await applyRetention(sql, { now, days: 120, withoutArchive: true });
      expect(kept.dropped).to.not.include(month);
      expect(reasonFor(kept, month)).to.equal('unfinished money work: 1 abandoned wallet jobs not reconciled');
      const dir = await archivesDir();
      const early = await archiveMonth(sql, month, path.join(dir, 'early.ndjson.gz'), now);
      expect(early.openWork).to.deep.equal({ 'abandoned wallet jobs not reconciled': 1 });

      // a note and a name are required; a job the service still owns cannot be marked
      expect(await sqlState(reconcileWalletJob(sql, { id: p.jobId, note: ' ', by: 'ops-anna', now }))).to.match(/--note must say why/);
      const open = await play(pool, o, now, { partitioned: true, status: 'ACCEPTED' });
      expect(await sqlState(reconcileWalletJob(sql, { id: open.jobId, note: 'x', by: 'ops-anna', now }))).to.match(/is not abandoned/);
      expect(await sqlState(reconcileWalletJob(sql, { id: randomUUID(), note: 'x', by: 'ops-anna', now }))).to.match(/does not exist/);

      const done = await reconcileWalletJob(sql, { id: p.jobId, note: 'the wallet paid it by hand, ticket 4411', by: 'ops-anna', now });
      expect(done).to.deep.include({ id: p.jobId, endpoint: 'win', reconciledBy: 'ops-anna', reconciliationNote: 'the wallet paid it by hand, ticket 4411', reconciledAt: now.toISOString() });
      // once: the first record of who settled it stays
      expect(await sqlState(reconcileWalletJob(sql, { id: p.jobId, note: 'again', by: 'someone-else', now }))).to.match(/reconciled already, by ops-anna/);

      // the archive taken before the mark shows the job unreconciled: not the record to keep
      const stale = await applyRetention(sql, { now, days: 120 });
      expect(reasonFor(stale, month)).to.match(/was taken while the month had unfinished money work \(1 abandoned wallet jobs not reconciled\)/);
      await archiveMonth(sql, month, path.join(dir, 'after.ndjson.gz'), now);
      expect((await applyRetention(sql, { now, days: 120 })).dropped).to.include(month);
      expect(await partitionOf(pool, 'wallet_jobs', 'id', p.jobId)).to.deep.equal([]);
    });

    it('checks and drops in one transaction: a bet committed into the month while retention waits for the tables keeps the month', async () => {
      const { sql, pool } = await database();
      await ensurePartitions(sql, { now, from: month });
      const o = await owner(pool);
      const writer = await pool.connect();
      try {
        // a bet of the month being written: its transaction holds the tables until it commits
        await writer.query('BEGIN');
        const late = await play(writer, o, inMonth(-7), { partitioned: true, status: 'ACCEPTED' });
        const [{ pid }] = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
        // the lock wait is bounded by the test's own timeout, not by the default
        const running = applyRetention(sql, { now, days: 120, withoutArchive: true, lockTimeoutMs: 120_000 });
        // retention waits for a lock the writer holds; then the writer commits
        await until('retention waiting behind the writer', async () => {
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND $1 = ANY(pg_blocking_pids(pid))`,
            [pid],
          );
          return rows[0]!.n > 0;
        });
        await writer.query('COMMIT');
        const result = await running;
        expect(result.dropped).to.not.include(month);
        expect(reasonFor(result, month)).to.equal('unfinished money work: 1 bets in play, 1 rounds not settled, 1 stakes held, 1 open wallet jobs');
        expect(await partitionOf(pool, 'bets', 'id', late.betId)).to.deep.equal([partitionName('bets', month)]);
      } finally {
        await writer.query('ROLLBACK').catch(() => undefined);
        writer.release();
      }
    });

    it('rgs archive never overwrites a file: an existing --out is refused and left as it was', async () => {
      const { sql, pool } = await database();
      await ensurePartitions(sql, { now, from: month });
      await play(pool, await owner(pool), inMonth(-7), { partitioned: true });
      const dir = await archivesDir();
      const file = path.join(dir, 'earlier.ndjson.gz');
      await writeFile(file, 'an earlier archive');

      const err = await archiveMonth(sql, month, file, now).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ArchiveError);
      expect((err as Error).message).to.equal(`${file} already exists: an archive never overwrites a file; choose another --out`);
      expect(await readFile(file, 'utf8')).to.equal('an earlier archive');
      expect((await pool.query('SELECT count(*)::int AS n FROM month_archives')).rows).to.deep.equal([{ n: 0 }]);
    });
  });

  describe('the scheduler leader', () => {
    it('makes the coming months it finds missing when it is elected', async () => {
      // the furthest month ahead, gone from every table of the run's database
      const far = addMonths(monthOf(new Date()), 3);
      const pool = createPool(TEST_DATABASE_URL, 1);
      pools.push(pool);
      for (const table of PARTITIONED_TABLES) {
        await pool.query(`ALTER TABLE ${table} DETACH PARTITION ${partitionName(table, far)}`);
        await pool.query(`DROP TABLE ${partitionName(table, far)}`);
      }
      const h = await startHarness({}, ['scheduler']);
      try {
        await until('the partitions', async () => {
          const byTable = await partitionMonths(createSql(pool));
          return PARTITIONED_TABLES.every((table) => byTable.get(table)!.includes(far));
        });
      } finally {
        await h.close();
      }
    });
    it('drops the expired idempotency keys (D17: kept 24 hours) and keeps the live ones', async () => {
      const pool = createPool(TEST_DATABASE_URL, 1);
      pools.push(pool);
      const insert = (requestUuid: string, expiresAt: Date) =>
        pool.query(
          `INSERT INTO idempotency_entries (operator_id, request_uuid, endpoint, body_hash, state, locked_until, created_at, expires_at)
           VALUES ('op-sweep', $1, 'POST /v1/session', 'h', 'COMPLETED', $2, $2, $2)`,
          [requestUuid, expiresAt],
        );
      const expired = [randomUUID(), randomUUID()];
      const live = randomUUID();
      for (const id of expired) await insert(id, new Date(Date.now() - 60_000));
      await insert(live, new Date(Date.now() + 24 * 60 * 60 * 1000));
      const keys = async () =>
        (await pool.query<{ request_uuid: string }>(`SELECT request_uuid FROM idempotency_entries WHERE operator_id = 'op-sweep'`)).rows.map(
          (r) => r.request_uuid,
        );
      expect((await keys()).sort()).to.deep.equal([...expired, live].sort());
      const h = await startHarness({}, ['scheduler']);
      try {
        await until('the expired keys dropped', async () => (await keys()).length === 1);
        expect(await keys()).to.deep.equal([live]);
      } finally {
        await h.close();
      }
    });
  });

  describe('a bet placed in one month and settled in the next', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({}, ROLES_WITHOUT_CLOCK);
    });
    after(() => h?.close());

    it("stays in its cycle's month: settled and paid there, the win job in the month it ran", async () => {
      const operator = await operatorWith(h, { bettingWindowMs: 60_000, lowWeight: 1n, highWeight: 0n });
      const table = await tableWithBets(h, operator, 1, 10_000_000n);
      const lastMonth = addMonths(monthOf(new Date()), -1);
      await ensurePartitions(h.svc.sql, { now: new Date(), from: lastMonth });
      // the cycle began a moment before this month did: its bet, round and held stake move
      // with it (the foreign keys cascade the new cycle_created_at)
      const lastMoment = new Date(monthStart(monthOf(new Date())).getTime() - 1);
      await h.svc.sql.query('UPDATE cycles SET created_at = $2 WHERE id = $1', [table.cycleId, lastMoment]);
      const [bet] = await h.svc.sql.query<{ id: string; p: string; bet_transaction_uuid: string; session_id: string }>(
        `SELECT id, tableoid::regclass::text AS p, bet_transaction_uuid, session_id FROM bets WHERE cycle_id = $1`,
        [table.cycleId],
      );
      expect(bet!.p).to.equal(partitionName('bets', lastMonth));

      await tick(h, { cycleId: table.cycleId, from: 'BETTING_OPEN' });
      await tick(h, { cycleId: table.cycleId, from: 'ROLLING' });
      await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
      expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);

      const [settled] = await h.svc.sql.query<{ p: string; status: string; settled_at: Date; rp: string; rstate: string; hp: string; hstate: string }>(
        `SELECT b.tableoid::regclass::text AS p, b.status, b.settled_at, r.tableoid::regclass::text AS rp, r.state AS rstate,
                h.tableoid::regclass::text AS hp, h.state AS hstate
         FROM bets b JOIN rounds r ON r.bet_id = b.id JOIN pending_round_bets h ON h.bet_id = b.id WHERE b.id = $1`,
        [bet!.id],
      );
      expect(settled).to.deep.include({
        p: partitionName('bets', lastMonth),
        status: 'SETTLED',
        rp: partitionName('rounds', lastMonth),
        rstate: 'SETTLED',
        hp: partitionName('pending_round_bets', lastMonth),
        hstate: 'RESOLVED',
      });
      expect(monthOf(settled!.settled_at)).to.equal(monthOf(new Date()));
      const jobs = await h.svc.sql.query<{ p: string }>(`SELECT tableoid::regclass::text AS p FROM wallet_jobs WHERE bet_id = $1 AND endpoint = 'win'`, [bet!.id]);
      expect(jobs).to.deep.equal([{ p: partitionName('wallet_jobs', monthOf(new Date())) }]);

      // 8.2 rule 4 across months: another live bet of the session in that cycle is refused,
      // whichever month it claims to be in
      const again = (cycleCreatedAt: Date) =>
        h.svc.sql.query(
          `INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, amount_micro, status,
                             bet_transaction_uuid, cycle_created_at)
           SELECT $1, operator_id, session_id, cycle_id, $2, player_ref, game_code, currency, side, amount_micro, 'PENDING', $3, $4
           FROM bets WHERE id = $5`,
          [randomUUID(), randomUUID(), randomUUID(), cycleCreatedAt, bet!.id],
        );
      expect(await sqlState(again(lastMoment))).to.equal('23505');
      expect(await sqlState(again(new Date()))).to.equal('23503');
      // the same bet_transaction_uuid again in its own month is refused by the index
      expect(
        await sqlState(
          h.svc.sql.query(
            `INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, amount_micro, status,
                               bet_transaction_uuid, cycle_created_at)
             SELECT $1, operator_id, session_id, cycle_id, $2, player_ref, game_code, currency, side, amount_micro, 'REJECTED', bet_transaction_uuid, cycle_created_at
             FROM bets WHERE id = $3`,
            [randomUUID(), randomUUID(), bet!.id],
          ),
        ),
      ).to.equal('23505');
    });
  });
});
