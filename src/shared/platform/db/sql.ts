import pg from 'pg';

// Raw SQL on the pool that Prisma's driver adapter also uses. Prisma stays the
// tool for administration, reports and rare paths; the hot paths (placing, debiting,
// accepting and settling bets, the engine clock) are single set-based statements here,
// which cost a fraction of Prisma's client-side CPU per query and let one statement carry
// a whole batch of bets.

// D18: BIGINT columns come back as bigint, never as a JS number; NUMERIC stays text
// (pg's default), dates are Dates.
const INT8 = 20;
const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 ? (text: string) => BigInt(text) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

// A statement with a name is prepared once per connection and then only bound and run, so
// a name stands for one text only (Postgres refuses to bind a name to a second text on a
// connection that prepared the first). Every statement is listed, so that the suite can
// check each one's plan against the indexes (test/integration/db/statement-plans.test.ts).
export type Statement = { name: string; text: string };
const statements = new Map<string, Statement>();

// A CTE that commits its statement without waiting for the write-ahead log to reach the
// disk (synchronous_commit off for this one transaction; the connection keeps its own
// setting). Only for a write that nothing outside Postgres acts on before a later commit
// that does wait: Postgres flushes its log in order, so that later commit makes this one
// durable too. A statement names it in its FROM list, so that it runs.
export const DEFERRED_FLUSH = `deferred_flush AS (SELECT set_config('synchronous_commit', 'off', true))`;

// DEFERRED_FLUSH unless `durable` (a boolean expression of the statement's parameters) is
// true: then the statement commits as the connection does, waiting for the disk. For a
// statement that sometimes writes what something outside Postgres acts on next.
export const deferredFlushUnless = (durable: string) =>
  `deferred_flush AS (SELECT set_config('synchronous_commit', CASE WHEN ${durable} THEN current_setting('synchronous_commit') ELSE 'off' END, true))`;

export function statement(name: string, text: string): Statement {
  const known = statements.get(name);
  if (known && known.text !== text) throw new Error(`statement ${name} is already defined with another text`);
  const defined = known ?? { name, text };
  statements.set(name, defined);
  return defined;
}

export const definedStatements = (): Statement[] => [...statements.values()];

// A statement's parameters, numbered in the order they are declared: `one()` is the next
// `$n`, `many(count)` the next `count` of them (a block a shared fragment fills, such as
// completeAuditsSql's). Declared in the order the caller passes the values, so that no
// number in a text is computed by hand.
export type Params = { one(): string; many(count: number): string[] };

export function params(): Params {
  let count = 0;
  const one = () => `$${++count}`;
  return { one, many: (n) => Array.from({ length: n }, one) };
}

export type Queryable = {
  query<R extends object>(sql: Statement | string, values?: unknown[]): Promise<R[]>;
};

export type Sql = Queryable & {
  // BEGIN ... COMMIT on one connection; a throw rolls back
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  readonly pool: pg.Pool;
};

// readOnly: every transaction of the pool's connections is read-only (the read replica's
// pool, D36: a write sent there by mistake fails loudly, even on a server that is not a
// standby); applicationName: how the connections show in pg_stat_activity; genericPlans:
// see GENERIC_PLANS
export type PoolOptions = { readOnly?: boolean; applicationName?: string; genericPlans?: boolean };

// The pool that runs this module's statements plans each named statement once per
// connection and keeps that plan (plan_cache_mode force_generic_plan). Left to choose,
// Postgres plans a statement again on most executions: a plan built for the parameters'
// values prunes the month partitions (D36) when it is made, so it looks cheaper than the
// generic plan, and the planning cost grows with the number of months attached. The generic
// plan leaves out the months outside the parameters' range when it starts (keyRange), and
// it is the plan test/integration/db/statement-plans.test.ts checks against the indexes.
// Prisma's queries keep Postgres's own choice, on a pool of their own (client.ts): their
// texts are not checked that way.
const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';
const READ_ONLY = '-c default_transaction_read_only=on';

export function createPool(databaseUrl: string, poolSize: number, options: PoolOptions = {}): pg.Pool {
  // idle connections are kept a minute: a burst of bets every few seconds would otherwise
  // have the pool close and reopen Postgres backends (a process each) between bursts
  const settings = [options.readOnly ? READ_ONLY : '', options.genericPlans ? GENERIC_PLANS : ''].filter(Boolean).join(' ');
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolSize,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 60_000,
    types: TYPES,
    ...(options.applicationName === undefined ? {} : { application_name: options.applicationName }),
    ...(settings ? { options: settings } : {}),
  });
  // an idle connection that Postgres ends (a restart, a failover, an administrator) is an
  // 'error' event on the pool, which would otherwise end the process; the pool drops that
  // connection and the next query opens a new one or reports the outage (D15)
  pool.on('error', () => undefined);
  return pool;
}

const run = async <R extends object>(client: pg.Pool | pg.PoolClient, sql: Statement | string, values: unknown[] = []): Promise<R[]> => {
  const config = typeof sql === 'string' ? { text: sql, values } : { name: sql.name, text: sql.text, values };
  return (await client.query<R>(config)).rows;
};

export function createSql(pool: pg.Pool): Sql {
  return {
    pool,
    query: (sql, values) => run(pool, sql, values),
    transaction: async (work) => {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work({ query: (sql, values) => run(client, sql, values) });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackFailed: Error) => {
          broken = rollbackFailed;
        });
        throw err;
      } finally {
        // a connection whose ROLLBACK failed is not handed out again
        client.release(broken);
      }
    },
  };
}

// SQLSTATE of a unique violation (a constraint that makes a second effect impossible)
export const UNIQUE_VIOLATION = '23505';
export const isUniqueViolation = (err: unknown): boolean => (err as { code?: unknown })?.code === UNIQUE_VIOLATION;

// D36: the least and the greatest of a batch's partition keys (a cycle's start, a row's
// creation), as two scalar parameters: `key BETWEEN $lo AND $hi` lets Postgres leave out,
// when the statement starts, every month outside the batch's (a key compared with an array
// parameter, `= ANY($n)`, does not). Nulls are skipped; an empty batch gives [null, null],
// which reads no month.
export function keyRange(keys: readonly (Date | string | null | undefined)[]): [Date | null, Date | null] {
  let lo: Date | null = null;
  let hi: Date | null = null;
  for (const key of keys) {
    if (key === null || key === undefined) continue;
    const at = typeof key === 'string' ? new Date(key) : key;
    if (lo === null || at < lo) lo = at;
    if (hi === null || at > hi) hi = at;
  }
  return [lo, hi];
}
