import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import type { Statement } from '../../../src/shared/platform/db/sql.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// Every raw hot-path statement (src/shared/platform/db/sql.ts) must find its rows through an index
// in the tables that grow without bound: a plan that reads such a table whole costs more
// with every round played, however fast it was on the day it was written. Each statement
// is planned as Postgres plans it after a few runs (the generic plan of a prepared
// statement), with sequential scans priced out, so a sequential scan left in the plan, or
// a non-partial index read without a condition on its leading column (a btree read whole),
// means no index serves it.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
// one row per operator or less: read whole, they are still small
const BOUNDED_TABLES = new Set(['operators', 'credentials', 'game_configs', 'engines', 'webhook_endpoints', '_prisma_migrations']);

type PlanNode = {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
};

// The modules are imported by file URL, as are the sql module's list and every module
// that adds to it: one instance of each (tsx gives a module imported by its .js name, as
// the tests' static imports do, an instance of its own).
async function loadEveryStatement(): Promise<Statement[]> {
  const load = (file: string) => import(pathToFileURL(path.join(ROOT, 'src', file)).href);
  const files = (await readdir(path.join(ROOT, 'src'), { recursive: true })).filter((f) => f.endsWith('.ts') && !f.includes('generated'));
  for (const file of files) {
    if (/\bstatement\(\s*'/.test(await readFile(path.join(ROOT, 'src', file), 'utf8'))) await load(file);
  }
  const { definedStatements } = (await load('shared/platform/db/sql.ts')) as typeof import('../../../src/shared/platform/db/sql.js');
  return definedStatements();
}

// an index by name: its table, its leading column, and whether it is partial (a partial
// index holds only the few rows of its predicate, so reading it whole is cheap)
type IndexInfo = { table: string; leading: string; partial: boolean };

function unindexedReads(node: PlanNode, indexes: Map<string, IndexInfo>, found: string[] = []): string[] {
  const table = node['Relation Name'];
  if (node['Node Type'] === 'Seq Scan' && table && !BOUNDED_TABLES.has(table)) found.push(`sequential scan of ${table}`);
  const index = node['Index Name'] && indexes.get(node['Index Name']);
  if (index && !index.partial && !BOUNDED_TABLES.has(index.table)) {
    const condition = node['Index Cond'] ?? '';
    if (!new RegExp(`\\b${index.leading}\\b`).test(condition)) {
      found.push(`index ${node['Index Name']} read whole (${condition || 'no condition'}, leading column ${index.leading})`);
    }
  }
  for (const child of node.Plans ?? []) unindexedReads(child, indexes, found);
  return found;
}

// the statement inside the function that the move to ROLLING calls (clock.ts), planned as the
// function plans it: its arguments are its parameters
const ROUNDS_FOLLOW_ROLLING = 'rgs_rounds_follow_rolling';

// D36: the statements every bet runs name the month of each partitioned table they read (the
// cycle's start, the audit row's or the wallet job's creation), so that a year of history
// adds no index probe to them: planned with their parameters unknown, such a statement keeps
// at most one partition of each table, or none (a month named by a parameter is chosen when
// it runs). A statement that found its rows by id alone would read every month's index.
const PER_BET_STATEMENTS = [
  'wallet_audit_insert',
  'wallet_audit_complete',
  'bets_accept',
  ROUNDS_FOLLOW_ROLLING,
  'roll_rounds',
  'roll_persist',
  'settle_rounds',
  'settle_apply',
  'wallet_jobs_read',
  'wallet_jobs_complete',
  'placement_facts',
  'session_create',
];
const MONTH_PARTITION = /^(.*)_\d{4}_\d{2}$/;

function partitionsRead(node: PlanNode, indexes: Map<string, IndexInfo>, read = new Map<string, Set<string>>()): Map<string, Set<string>> {
  const match = node['Relation Name'] && MONTH_PARTITION.exec(node['Relation Name']);
  const index = node['Index Name'] && indexes.get(node['Index Name']);
  // an empty partial index (a month with no bet in play) costs one page; any other read of a
  // month costs a descent of its index
  if (match && !(index && index.partial)) {
    const table = match[1]!;
    if (!read.has(table)) read.set(table, new Set());
    read.get(table)!.add(node['Relation Name']!);
  }
  for (const child of node.Plans ?? []) partitionsRead(child, indexes, read);
  return read;
}

// A PL/pgSQL function's one data statement, as its text is stored, with each argument
// named by its position ($1, $2, ...) and typed as declared.
async function functionStatement(client: pg.Client, name: string): Promise<Statement> {
  const { rows } = await client.query<{ body: string; args: string[]; types: string[] }>(
    `SELECT p.prosrc AS body, p.proargnames AS args, ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t) AS types
     FROM pg_proc p WHERE p.proname = $1`,
    [name],
  );
  const { body, args, types } = rows[0]!;
  const found = /\b(?:UPDATE|INSERT|DELETE|SELECT)\b[^;]*(?=;)/i.exec(body.replace(/^[\s\S]*?\bBEGIN\b/i, ''));
  if (!found) throw new Error(`${name}: no statement in its body`);
  const text = args.reduce((sql, arg, i) => sql.replace(new RegExp(`\\b${arg}\\b`, 'g'), `$${i + 1}::${types[i]}`), found[0]);
  return { name, text };
}

describe('hot-path statements read growing tables through indexes', () => {
  let client: pg.Client;
  let statements: Statement[];
  let indexes: Map<string, IndexInfo>;

  before(async () => {
    statements = await loadEveryStatement();
    client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    statements.push(await functionStatement(client, ROUNDS_FOLLOW_ROLLING));
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query('SET enable_seqscan = off');
    const { rows } = await client.query<IndexInfo & { name: string }>(
      `SELECT c.relname AS name, t.relname AS table, a.attname AS leading, i.indpred IS NOT NULL AS partial
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
       WHERE n.nspname = 'public'`,
    );
    indexes = new Map(rows.map(({ name, ...info }) => [name, info]));
  });

  after(async () => {
    await client?.end();
  });

  // the statement's generic plan (as a prepared statement runs after a few executions), its
  // parameters unknown
  async function genericPlan(name: string, text: string): Promise<PlanNode> {
    const prepared = `plan_probe_${name}`;
    await client.query(`PREPARE ${prepared} AS ${text}`);
    try {
      const [{ count }] = (
        await client.query<{ count: number }>('SELECT cardinality(parameter_types) AS count FROM pg_prepared_statements WHERE name = $1', [prepared])
      ).rows as [{ count: number }];
      const args = count > 0 ? `(${Array.from({ length: count }, () => 'NULL').join(', ')})` : '';
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE ${prepared}${args}`);
      return rows[0]!['QUERY PLAN'][0].Plan;
    } finally {
      await client.query(`DEALLOCATE ${prepared}`);
    }
  }

  it('finds the statements of every hot path', () => {
    const names = statements.map((s) => s.name);
    for (const expected of ['session_create', 'credential_with_operator', 'idempotency_claim', 'wallet_audit_insert', 'roll_rounds', 'settle_rounds']) {
      expect(names).to.include(expected);
    }
  });

  it('plans no statement with a full read of a table that grows', async () => {
    const problems: string[] = [];
    for (const { name, text } of statements) {
      for (const read of unindexedReads(await genericPlan(name, text), indexes)) problems.push(`${name}: ${read}`);
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('reads one month of each partitioned table in the statements every bet runs (D36)', async () => {
    // a year of months, as a database in service has them
    await client.query(
      `SELECT rgs_ensure_month_partition(t, (date_trunc('month', now()) - m * interval '1 month')::date)
       FROM generate_series(1, 12) m,
            unnest(ARRAY['bets', 'rounds', 'pending_round_bets', 'wallet_calls', 'wallet_jobs', 'webhook_events', 'webhook_attempts']) t`,
    );
    const { rows: partial } = await client.query<IndexInfo & { name: string }>(
      `SELECT c.relname AS name, t.relname AS table, i.indpred IS NOT NULL AS partial, '' AS leading
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid`,
    );
    const allIndexes = new Map(partial.map(({ name, ...info }) => [name, info]));
    const problems: string[] = [];
    for (const name of PER_BET_STATEMENTS) {
      const found = statements.find((s) => s.name === name);
      if (!found) {
        problems.push(`${name}: no such statement`);
        continue;
      }
      for (const [table, months] of partitionsRead(await genericPlan(name, found.text), allIndexes)) {
        if (months.size > 1) problems.push(`${name}: reads ${months.size} months of ${table}`);
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
