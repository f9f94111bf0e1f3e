import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { migrate } from '../../../src/shared/platform/db/migrate.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { findSchemaDrift, loadDmmf } from './schema-drift.js';

// Fails when prisma/schema.prisma and the migrations disagree: the global setup has just
// built TEST_DATABASE_URL from prisma/migrations, so any difference is a missing or wrong
// migration (or a schema edit that was never migrated).

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

const withDatabase = (url: string, database: string) => {
  const next = new URL(url);
  next.pathname = `/${database}`;
  return next.toString();
};

describe('schema drift: schema.prisma vs the migrated database', () => {
  let client: pg.Client;

  before(async () => {
    client = await connect(TEST_DATABASE_URL);
  });

  after(async () => {
    await client?.end();
  });

  it('finds every model, column, enum, index and relation of schema.prisma in the database', async () => {
    const problems = await findSchemaDrift(await loadDmmf(), client);
    expect(problems, `schema.prisma and prisma/migrations disagree:\n  ${problems.join('\n  ')}\n`).to.deep.equal([]);
  });

  it('has the DB-only partial unique index seeds_one_current_per_session (D5)', async () => {
    const { rows } = await client.query<{
      table_name: string;
      is_unique: boolean;
      columns: string[];
      predicate: string | null;
    }>(
      `SELECT c.relname AS table_name,
              i.indisunique AS is_unique,
              array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                     ORDER BY k.ord) AS columns,
              pg_get_expr(i.indpred, i.indrelid) AS predicate
         FROM pg_index i
         JOIN pg_class ic ON ic.oid = i.indexrelid
         JOIN pg_class c ON c.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = ic.relnamespace
        WHERE n.nspname = current_schema() AND ic.relname = 'seeds_one_current_per_session'`,
    );
    expect(rows, 'index seeds_one_current_per_session missing').to.have.length(1);
    const index = rows[0]!;
    expect(index.table_name, 'seeds_one_current_per_session is on the wrong table').to.equal('seeds');
    expect(index.is_unique, 'seeds_one_current_per_session is not unique').to.equal(true);
    expect(index.columns, 'seeds_one_current_per_session has the wrong columns').to.deep.equal(['session_id']);
    expect(index.predicate, 'seeds_one_current_per_session is not partial').to.be.a('string');
    expect(index.predicate, 'seeds_one_current_per_session has the wrong predicate').to.equal('current');
  });
});

describe('schema drift: the checker itself', () => {
  const database = `rgs_drift_probe_${randomBytes(6).toString('hex')}`;
  const probeUrl = withDatabase(TEST_DATABASE_URL, database);

  after(async () => {
    const admin = await connect(withDatabase(TEST_DATABASE_URL, 'postgres'));
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });

  it('reports exactly a dropped column and a dropped index in a drifted database', async () => {
    const result = await migrate(probeUrl);
    expect(result.created).to.equal(true);
    const dmmf = await loadDmmf();
    const probe = await connect(probeUrl);
    try {
      expect(await findSchemaDrift(dmmf, probe), 'a freshly migrated database has no drift').to.deep.equal([]);

      // seeds_session_id_idx is the interesting one: the partial unique index on the same
      // column must not be mistaken for it.
      await probe.query('ALTER TABLE sessions DROP COLUMN lang');
      await probe.query('DROP INDEX seeds_session_id_idx');

      expect(await findSchemaDrift(dmmf, probe)).to.deep.equal([
        'column sessions.lang missing',
        'normal index on seeds(session_id) missing',
      ]);
    } finally {
      await probe.end();
    }
  });
});
