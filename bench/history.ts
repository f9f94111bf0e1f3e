import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpus } from 'node:os';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { dropDatabase, migrate, MIGRATIONS_DIR } from '../src/shared/platform/db/migrate.js';
import { monthOf } from '../src/shared/domain/months.js';
import { ensurePartitions } from '../src/shared/platform/db/partitions.js';
import { createPool, createSql, type Sql } from '../src/shared/platform/db/sql.js';
import {
  HISTORY_CYCLE_MS,
  HISTORY_GAME,
  HISTORY_LAUNCH_LEAD_MS,
  HISTORY_PLAYERS,
  historyChunks,
  historyLayout,
  historyMonths,
  historyTemplateName,
  type HistoryChunk,
  type HistoryLayout,
} from './history-layout.js';
import { benchDatabaseUrl, CURRENCY } from './setup.js';

// `--history N`: N settled bets of the past twelve months, with everything the service
// wrote for them (sessions and their seeds, the engines' cycles, rounds, held stakes, the
// debit's and the win's audit rows with both bodies, the win jobs), in the run's database
// before the service starts, so that a run measures the bet path on tables and indexes that
// hold that history. Seeding takes minutes for millions of bets, so it is done once into a
// template database (named by N and the hash of the migrations and of this file's format)
// and every run copies that template (CREATE DATABASE ... TEMPLATE).

// bumped whenever the rows written here change, so that older templates are not reused
const HISTORY_FORMAT = 1;
// bets written per chunk (one transaction, one statement per table), and the chunks
// written at once, each by a connection of its own (the box's cores)
const BETS_PER_CHUNK = 250_000;
const SEED_CONNECTIONS = Math.max(1, Math.min(4, cpus().length));
// a chunk's bets are held in a temporary table, in memory rather than in temporary files
const CHUNK_TEMP_BUFFERS = '512MB';
const GAME_CODE = 'dice';

export type HistoryInfo = {
  bets: number;
  template: string;
  // the template existed and was copied as it was
  reused: boolean;
  // how long seeding the template took (when it was built, by this run or an earlier one)
  seedSeconds: number;
  builtAt: string;
  // how long copying it into this run's database took
  copySeconds: number;
  templateBytes: number;
  // the months the history covers: [from, to)
  from: string;
  to: string;
};

type Progress = (line: string) => void;

// What a template records of its own seeding, as the database's comment.
type TemplateNote = { bets: number; seedSeconds: number; builtAt: string; format: number };

export async function historyHash(): Promise<string> {
  const hash = createHash('sha256').update(`history-format:${HISTORY_FORMAT}\n`);
  const names = (await readdir(MIGRATIONS_DIR, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const name of names) hash.update(`${name}\n`).update(await readFile(path.join(MIGRATIONS_DIR, name, 'migration.sql')));
  return hash.digest('hex');
}

const maintenanceUrl = (databaseUrl: string) => benchDatabaseUrl(databaseUrl, 'postgres');

const isLocalServer = (databaseUrl: string) => ['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(databaseUrl).hostname);

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

// The run's database (databaseUrl, not existing) as a copy of the history template of
// `bets` bets, built first when missing or when `rebuild`. cleanup receives what removes a
// template half built, should the run be stopped while seeding.
export async function historyDatabase(
  databaseUrl: string,
  bets: number,
  { rebuild, progress, cleanup }: { rebuild: boolean; progress: Progress; cleanup: (() => Promise<void> | void)[] },
): Promise<HistoryInfo> {
  const template = historyTemplateName(bets, await historyHash());
  const templateUrl = benchDatabaseUrl(databaseUrl, template);
  const exists = await withClient(maintenanceUrl(databaseUrl), async (client) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])).rowCount === 1);
  const reused = exists && !rebuild;
  if (reused) {
    progress(`history: reusing template ${template} (${bets} bets)`);
  } else {
    await buildTemplate(templateUrl, bets, progress, cleanup);
  }
  const copyStart = performance.now();
  await copyDatabase(template, databaseUrl);
  // The copy leaves gigabytes of dirty pages that the kernel writes back for minutes: during
  // the run that writeback takes CPU and slows every commit, a cost of the copy, not of the
  // history. Where Postgres runs on this machine, wait for it (sync) before measuring.
  if (isLocalServer(databaseUrl)) execFileSync('sync');
  const copySeconds = (performance.now() - copyStart) / 1000;
  // the copy's migrations are the template's: this only checks that they are today's
  await migrate(databaseUrl);
  const { note, bytes } = await withClient(maintenanceUrl(databaseUrl), async (client) => {
    const { rows } = await client.query<{ note: string | null; bytes: string }>(
      `SELECT shobj_description(oid, 'pg_database') AS note, pg_database_size(oid)::text AS bytes FROM pg_database WHERE datname = $1`,
      [template],
    );
    return { note: JSON.parse(rows[0]?.note ?? '{}') as Partial<TemplateNote>, bytes: Number(rows[0]?.bytes ?? 0) };
  });
  const months = historyMonths(new Date(note.builtAt ?? Date.now()));
  progress(`history: ${template} (${(bytes / 2 ** 30).toFixed(2)} GiB) copied and written to disk in ${copySeconds.toFixed(1)} s`);
  return {
    bets,
    template,
    reused,
    seedSeconds: note.seedSeconds ?? 0,
    builtAt: note.builtAt ?? '',
    copySeconds: Math.round(copySeconds * 10) / 10,
    templateBytes: bytes,
    from: months[0]!.toISOString(),
    to: months.at(-1)!.toISOString(),
  };
}

// Built under a name of its own and renamed when complete, so that a template that exists
// is always whole; an existing one (--history-rebuild) is replaced only then.
async function buildTemplate(templateUrl: string, bets: number, progress: Progress, cleanup: (() => Promise<void> | void)[]): Promise<void> {
  const template = new URL(templateUrl).pathname.slice(1);
  const building = `${template}_build_${process.pid}`;
  const buildingUrl = benchDatabaseUrl(templateUrl, building);
  cleanup.push(() => dropDatabase(buildingUrl));
  await dropDatabase(buildingUrl);
  await migrate(buildingUrl);
  const started = performance.now();
  const builtAt = new Date();
  await seedHistory(buildingUrl, historyLayout(bets, builtAt), progress, builtAt);
  const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
  const note: TemplateNote = { bets, seedSeconds, builtAt: builtAt.toISOString(), format: HISTORY_FORMAT };
  await withClient(maintenanceUrl(templateUrl), async (client) => {
    await client.query(`COMMENT ON DATABASE ${pg.escapeIdentifier(building)} IS ${pg.escapeLiteral(JSON.stringify(note))}`);
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(template)} WITH (FORCE)`);
    await client.query(`ALTER DATABASE ${pg.escapeIdentifier(building)} RENAME TO ${pg.escapeIdentifier(template)}`);
    // CREATE DATABASE ... TEMPLATE needs the template without connections: none is let in
    // (autovacuum included; the template was vacuumed and analyzed when it was seeded)
    await client.query(`ALTER DATABASE ${pg.escapeIdentifier(template)} ALLOW_CONNECTIONS false`);
  });
  progress(`history: template ${template} seeded with ${bets} bets in ${seedSeconds} s`);
}

// FILE_COPY copies the template's files as they are, instead of writing every page of a
// template of gigabytes to the WAL (Postgres 15's default strategy); older servers know
// only that way.
async function copyDatabase(template: string, databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  await withClient(maintenanceUrl(databaseUrl), async (client) => {
    const create = `CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`;
    try {
      await client.query(`${create} STRATEGY FILE_COPY`);
    } catch (err) {
      if ((err as { code?: string }).code !== '42601') throw err;
      await client.query(create);
    }
  });
}

// D36: the money tables are partitioned by month, so the partitions of the months the
// history's rows fall in, from `from` through the month of `now` (and the coming ones, as the
// leader keeps them), must exist before the rows are written.
export async function prepareHistoryMonths(sql: Sql, months: { from: Date; now: Date }): Promise<void> {
  await ensurePartitions(sql, { now: months.now, from: monthOf(months.from) });
}

// Writes the history into the (migrated, empty) database at databaseUrl.
export async function seedHistory(databaseUrl: string, layout: HistoryLayout, progress: Progress, now: Date): Promise<void> {
  const L = layout;
  const pool = createPool(databaseUrl, 1);
  try {
    const sql = createSql(pool);
    await prepareHistoryMonths(sql, { from: L.from, now });
    // the operators (the run completes them: wallet URL, credentials, game config) and their
    // engines, stopped
    await sql.query(
      `INSERT INTO operators (id, wallet_url, currencies, created_at, updated_at)
       SELECT 'bench-op-' || o, 'http://127.0.0.1:1', ARRAY['${CURRENCY}'], $1, $1 FROM generate_series(0, ${L.operators} - 1) o`,
      [L.from],
    );
    await sql.query(
      `INSERT INTO engines (operator_id, game_code, currency, running, updated_at)
       SELECT 'bench-op-' || o, '${GAME_CODE}', '${CURRENCY}', false, $1 FROM generate_series(0, ${L.operators} - 1) o`,
      [L.to],
    );
  } finally {
    await pool.end();
  }

  // the chunks are independent (each its own groups), written by several connections at once
  const chunks = historyChunks(L, BETS_PER_CHUNK);
  const started = performance.now();
  let written = 0;
  // a failed chunk stops the others from taking more
  let failed = false;
  const worker = () =>
    withClient(databaseUrl, async (client) => {
      // nothing here must survive a crash: the template is renamed into place only once whole
      await client.query('SET synchronous_commit = off');
      await client.query(`SET temp_buffers = '${CHUNK_TEMP_BUFFERS}'`);
      // the rows are consistent by construction (the test checks them), so the foreign keys'
      // per-row checks are skipped where the role may (a superuser's session), and run otherwise
      await client.query('SET session_replication_role = replica').catch(() => progress('history: foreign keys checked row by row (not a superuser)'));
      for (let chunk = chunks.shift(); chunk && !failed; chunk = chunks.shift()) {
        await writeChunk(client, L, chunk).catch((err: unknown) => {
          failed = true;
          throw err;
        });
        written += chunk.endBet - chunk.firstBet;
        progress(
          `history: ${written.toLocaleString('en')} of ${L.bets.toLocaleString('en')} bets (${Math.round((written / L.bets) * 100)} %), ` +
            `${((performance.now() - started) / 1000).toFixed(0)} s`,
        );
      }
    });
  await Promise.all(Array.from({ length: SEED_CONNECTIONS }, worker));

  // as autovacuum would leave tables in service: visibility and hint bits set, so that a
  // run's first reads of old pages write nothing, and statistics for the planner
  progress('history: VACUUM ANALYZE');
  await withClient(databaseUrl, (client) => client.query('VACUUM (ANALYZE)'));
}

async function writeChunk(client: pg.Client, L: HistoryLayout, chunk: HistoryChunk): Promise<void> {
  const at = (ms: string) => `(timestamptz '${L.from.toISOString()}' + (${ms}) * interval '1 millisecond')`;
  const ops = String(L.operators);
  // group g's operator: the groups are dealt to the operators in turn
  const op = (group: string) => `'bench-op-' || (${group} % ${ops})`;
  const G = L.sessionsPerGroup;
  const S = L.betsPerSession;
  const B = L.betsPerGroup;
  const N = L.bets;
  const step = L.groupStepMs;
  const game = HISTORY_GAME;
  await client.query('BEGIN');
  // the cycles the chunk's groups bet in: group g, cycle j of the group, number j + 1 after
  // the engine's earlier groups' cycles
  await client.query(
    `INSERT INTO cycles (id, operator_id, game_code, currency, number, phase, phase_ends_at, betting_window_ms, rolling_window_ms,
                         cooldown_ms, min_bet_micro, max_bet_micro, commission_micro, payout_multiplier_scaled, low_weight, high_weight,
                         created_at, finished_at)
     SELECT md5('history-cycle:' || c)::uuid, ${op('g')}, '${GAME_CODE}', '${CURRENCY}', ((g / ${ops}) * ${S} + j + 1)::int, 'FINISHED',
            ${at(`g * ${step} + ${HISTORY_LAUNCH_LEAD_MS} + (j + 1) * ${HISTORY_CYCLE_MS}`)},
            ${game.bettingWindowMs}, ${game.rollingWindowMs}, ${game.cooldownMs}, ${game.minBetMicro}, ${game.maxBetMicro},
            ${game.commissionMicro}, ${game.payoutMultiplierScaled}, ${game.lowWeight}, ${game.highWeight},
            ${at(`g * ${step} + ${HISTORY_LAUNCH_LEAD_MS} + j * ${HISTORY_CYCLE_MS}`)},
            ${at(`g * ${step} + ${HISTORY_LAUNCH_LEAD_MS} + (j + 1) * ${HISTORY_CYCLE_MS}`)}
     FROM (SELECT c, c / ${S} AS g, c % ${S} AS j FROM generate_series(${chunk.firstGroup * S}::bigint, ${chunk.endGroup * S - 1}) c) x
     WHERE g * ${B} + j * ${G} < ${N}`,
  );
  // the groups' sessions, one per player at the table, expired an hour after launch, each
  // with its one seed, retired then (contract 3.3)
  const sessions = `(SELECT k, k / ${G} AS g, k % ${G} AS s, ${at(`(k / ${G}) * ${step}`)} AS launched
      FROM generate_series(${chunk.firstGroup * G}::bigint, ${chunk.endGroup * G - 1}) k) x
     WHERE g * ${B} + s < ${N}`;
  await client.query(
    `INSERT INTO sessions (id, operator_id, player_ref, game_code, currency, lang, jurisdiction, mode, created_at, expires_at, state,
                           end_reason, sandbox)
     SELECT md5('history-session:' || k)::uuid, ${op('g')}, 'bench-player-' || (k % ${HISTORY_PLAYERS}), '${GAME_CODE}', '${CURRENCY}',
            'en', 'MT', 'REAL', launched, launched + interval '1 hour', 'EXPIRED', 'expired', false
     FROM ${sessions}`,
  );
  await client.query(
    `INSERT INTO seeds (id, session_id, encrypted_server_seed, server_seed_hash, client_seed, next_nonce, current, created_at, retired_at)
     SELECT md5('history-seed:' || k)::uuid, md5('history-session:' || k)::uuid,
            sha256(('history-server-seed-a:' || k)::bytea) || sha256(('history-server-seed-b:' || k)::bytea)
              || substring(sha256(('history-server-seed-c:' || k)::bytea) FROM 1 FOR 28),
            encode(sha256(('history-server-seed:' || k)::bytea), 'hex'), md5('history-client-seed:' || k),
            least(${S}, ceil((${N} - g * ${B} - s)::numeric / ${G}))::int, true, launched, launched + interval '1 hour'
     FROM ${sessions}`,
  );
  // each bet of the chunk once, with everything derived from its index; the rows below
  // are read from here
  await client.query('DROP TABLE IF EXISTS pg_temp.history_chunk');
  await client.query(`CREATE TEMP TABLE history_chunk AS ${betsOfChunk(L, chunk.firstBet, chunk.endBet)}`);
  await client.query(
    `INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, amount_micro, is_free,
                       status, bet_transaction_uuid, win_transaction_uuid, payout_micro, demo, created_at, accepted_at, settled_at,
                       cycle_created_at)
     SELECT bet_id, operator_id, session_id, cycle_id, round_id, player_ref, '${GAME_CODE}', '${CURRENCY}', side, amount_micro, false,
            'SETTLED', bet_tx, CASE WHEN won THEN win_tx END, payout_micro, false, placed_at, accepted_at,
            CASE WHEN won THEN win_completed_at ELSE round_settled_at END, cycle_at
     FROM history_chunk`,
  );
  await client.query(
    `INSERT INTO rounds (id, operator_id, session_id, cycle_id, seed_id, bet_id, game_code, currency, nonce, state, settled, low_weight,
                         high_weight, outcome_side, outcome_sum, dice_values, demo, created_at, result_at, settled_at, cycle_created_at)
     SELECT round_id, operator_id, session_id, cycle_id, seed_id, bet_id, '${GAME_CODE}', '${CURRENCY}', nonce, 'SETTLED', true,
            ${game.lowWeight}, ${game.highWeight}, outcome_side, face, ARRAY[face], false, accepted_at, result_at, round_settled_at, cycle_at
     FROM history_chunk`,
  );
  await client.query(
    `INSERT INTO pending_round_bets (bet_id, round_id, state, created_at, resolved_at, cycle_created_at)
     SELECT bet_id, round_id, 'RESOLVED', accepted_at, CASE WHEN won THEN win_completed_at ELSE round_settled_at END, cycle_at
     FROM history_chunk`,
  );
  // contract 2.13: every debit's audit row, and every win's, with the bytes sent and the
  // answer received
  await client.query(
    `INSERT INTO wallet_calls (id, operator_id, session_id, direction, endpoint, request_uuid, transaction_uuid, attempt, request_body,
                               http_status, status, latency_ms, created_at, responded_at, response_body)
     SELECT id, operator_id, session_id, 'OUT', endpoint, request_uuid, transaction_uuid, 1, request_body, 200, 'RS_OK', latency_ms,
            created_at, responded_at,
            '{"status":"RS_OK","requestUuid":"' || request_uuid || '","balanceMicro":"' || balance_micro || '","currency":"${CURRENCY}"}'
     FROM (
       SELECT i, 0 AS call, debit_call_id AS id, operator_id, session_id, 'bet' AS endpoint, debit_request AS request_uuid, bet_tx AS transaction_uuid,
              '{"requestUuid":"' || debit_request || '","operatorId":"' || operator_id || '","playerRef":"' || player_ref
                || '","currency":"${CURRENCY}","gameCode":"${GAME_CODE}","transactionUuid":"' || bet_tx || '","amountMicro":"' || amount_micro
                || '","roundId":"' || round_id || '"}' AS request_body,
              debit_latency_ms AS latency_ms, placed_at AS created_at, placed_at + debit_latency_ms * interval '1 millisecond' AS responded_at,
              balance_micro - amount_micro AS balance_micro
       FROM history_chunk
       UNION ALL
       SELECT i, 1, win_call_id, operator_id, session_id, 'win', win_request, win_tx, '{"requestUuid":"' || win_request || '",' || substr(win_payload, 2),
              win_latency_ms, win_called_at, win_called_at + win_latency_ms * interval '1 millisecond', balance_micro - amount_micro + payout_micro
       FROM history_chunk WHERE won
     ) calls ORDER BY created_at, i, call`,
  );
  // contract 2.13: the win job behind every credit, completed
  await client.query(
    `INSERT INTO wallet_jobs (id, operator_id, session_id, endpoint, transaction_uuid, bet_id, bet_cycle_created_at, purpose, payload, attempts,
                              created_at, completed_at)
     SELECT win_job_id, operator_id, session_id, 'win', win_tx, bet_id, cycle_at, 'win', win_payload::jsonb, 1, round_settled_at,
            win_completed_at
     FROM history_chunk WHERE won`,
  );
  await client.query('COMMIT');
  await client.query('DROP TABLE pg_temp.history_chunk');
}

// Bet i of the history, in SQL: where it falls (history-layout.ts), its ids (md5 of its
// index: random-looking, like the service's random UUIDs, and the same in every statement),
// and its outcome and amounts from a hash of its index. contract 8.4: the net payout of a
// win is gross - commission, gross = stake * multiplier / 100000, commission = gross *
// commissionMicro / 100000, truncating, in bigint.
function betsOfChunk(L: HistoryLayout, firstBet: number, endBet: number): string {
  const G = L.sessionsPerGroup;
  const S = L.betsPerSession;
  const B = L.betsPerGroup;
  const game = HISTORY_GAME;
  const gross = `(amount_micro * ${game.payoutMultiplierScaled} / 100000)`;
  return `
    WITH b AS (
      SELECT i, i / ${B} AS g, (i % ${B}) / ${G} AS j, i % ${G} AS s, hashint8extended(i, 26) AS h
      FROM generate_series(${firstBet}::bigint, ${endBet - 1}) i
    ),
    placed AS (
      SELECT i, g, j, s, g * ${G} + s AS k, g * ${S} + j AS c,
             timestamptz '${L.from.toISOString()}' + (g * ${L.groupStepMs} + ${HISTORY_LAUNCH_LEAD_MS} + j * ${HISTORY_CYCLE_MS}) * interval '1 millisecond' AS cycle_at,
             CASE WHEN h & 1 = 0 THEN 'LOW' ELSE 'HIGH' END AS side,
             CASE WHEN (h >> 1) & 1 = 0 THEN 'LOW' ELSE 'HIGH' END AS outcome_side,
             -- D2: LOW is faces 1 to 3, HIGH 4 to 6
             (((h >> 1) & 1) * 3 + 1 + ((h >> 8) & 65535) % 3)::int AS face,
             -- 0.10 to 10.00 in steps of 0.10 (100000 micro-units = 1.00)
             ((((h >> 24) & 65535) % 100) + 1) * 10000 AS amount_micro,
             200 + ((h >> 40) & 65535) % ${game.bettingWindowMs - 500} AS placed_ms,
             (3 + ((h >> 4) & 15))::int AS debit_latency_ms,
             (3 + ((h >> 56) & 15))::int AS win_latency_ms,
             100000000 + ((h >> 12) & 1073741823) AS balance_micro
      FROM b
    ),
    timed AS (
      SELECT *, side = outcome_side AS won,
             CASE WHEN side = outcome_side THEN ${gross} - ${gross} * ${game.commissionMicro} / 100000 ELSE 0 END AS payout_micro,
             cycle_at + placed_ms * interval '1 millisecond' AS placed_at,
             cycle_at + (placed_ms + debit_latency_ms + 2) * interval '1 millisecond' AS accepted_at,
             cycle_at + ${game.bettingWindowMs + game.rollingWindowMs} * interval '1 millisecond' AS result_at,
             cycle_at + ${game.bettingWindowMs + game.rollingWindowMs + 15} * interval '1 millisecond' AS round_settled_at,
             cycle_at + ${game.bettingWindowMs + game.rollingWindowMs + 25} * interval '1 millisecond' AS win_called_at,
             cycle_at + (${game.bettingWindowMs + game.rollingWindowMs + 27} + win_latency_ms) * interval '1 millisecond' AS win_completed_at
      FROM placed
    ),
    ids AS (
      SELECT timed.*, j AS nonce,
             'bench-op-' || (g % ${L.operators}) AS operator_id,
             'bench-player-' || (k % ${HISTORY_PLAYERS}) AS player_ref,
             md5('history-bet:' || i)::uuid AS bet_id,
             md5('history-round:' || i)::uuid AS round_id,
             md5('history-session:' || k)::uuid AS session_id,
             md5('history-seed:' || k)::uuid AS seed_id,
             md5('history-cycle:' || c)::uuid AS cycle_id,
             md5('history-bet-tx:' || i)::uuid AS bet_tx,
             md5('history-debit-call:' || i)::uuid AS debit_call_id,
             md5('history-debit-request:' || i)::uuid AS debit_request,
             md5('history-win-tx:' || i)::uuid AS win_tx,
             md5('history-win-call:' || i)::uuid AS win_call_id,
             md5('history-win-request:' || i)::uuid AS win_request,
             md5('history-win-job:' || i)::uuid AS win_job_id
      FROM timed
    )
    -- contract 2.7: the win's fields, in the order the service sends them
    SELECT ids.*,
           '{"operatorId":"' || operator_id || '","playerRef":"' || player_ref || '","currency":"${CURRENCY}","gameCode":"${GAME_CODE}",'
             || '"transactionUuid":"' || win_tx || '","referenceTransactionUuid":"' || bet_tx || '","amountMicro":"' || payout_micro
             || '","roundId":"' || round_id || '"}' AS win_payload
    FROM ids`;
}
