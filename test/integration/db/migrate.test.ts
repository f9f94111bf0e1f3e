import { createHash, randomBytes } from 'node:crypto';
import { appendFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { MIGRATIONS_DIR, MigrationError, migrate } from '../../../src/shared/platform/db/migrate.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// `rgs migrate` (D11) against throwaway databases on the test server: each test takes a
// fresh, randomly named database, all of which are dropped afterwards.

const created: string[] = [];

function freshDatabaseUrl(): { name: string; url: string } {
  const name = `rgs_migrate_test_${randomBytes(6).toString('hex')}`;
  created.push(name);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

function maintenanceUrl(): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = '/postgres';
  return url.toString();
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function databaseExists(name: string): Promise<boolean> {
  return withClient(maintenanceUrl(), async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return rowCount === 1;
  });
}

async function migrationNames(dir = MIGRATIONS_DIR): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

async function expectRejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  expect.fail('expected the promise to reject');
}

const tableExists = async (client: pg.Client, table: string) =>
  (await client.query<{ oid: string | null }>('SELECT to_regclass($1)::text AS oid', [table])).rows[0]!.oid !== null;

describe('migrate (rgs migrate, D11)', () => {
  let all: string[];
  let tempDirs: string[] = [];

  before(async () => {
    all = await migrationNames();
    expect(all, 'prisma/migrations holds no migration').to.not.be.empty;
  });

  afterEach(async () => {
    await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
    tempDirs = [];
  });

  after(async () => {
    await withClient(maintenanceUrl(), async (client) => {
      for (const name of created.splice(0)) {
        await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      }
    });
  });

  // A private copy of prisma/migrations that a test may change.
  async function copyOfMigrations(): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'rgs-migrations-'));
    tempDirs.push(dir);
    await cp(MIGRATIONS_DIR, dir, { recursive: true });
    return dir;
  }

  it('creates a missing database and applies every migration, then applies nothing on a second run', async () => {
    const { name, url } = freshDatabaseUrl();
    expect(await databaseExists(name)).to.equal(false);

    const first = await migrate(url);
    expect(first).to.deep.equal({ database: name, created: true, applied: all, alreadyApplied: [] });
    expect(await databaseExists(name)).to.equal(true);
    await withClient(url, async (client) => {
      for (const table of ['operators', 'credentials', 'game_configs', 'sessions', 'seeds', 'idempotency_entries', 'wallet_calls']) {
        expect(await tableExists(client, table), `table ${table} missing after migrate`).to.equal(true);
      }
    });

    const second = await migrate(url);
    expect(second).to.deep.equal({ database: name, created: false, applied: [], alreadyApplied: all });
    await withClient(url, async (client) => {
      const { rows } = await client.query<{ migration_name: string; n: number }>(
        'SELECT migration_name, count(*)::int AS n FROM "_prisma_migrations" GROUP BY migration_name ORDER BY migration_name',
      );
      expect(rows).to.deep.equal(all.map((migration_name) => ({ migration_name, n: 1 })));
    });
  });

  it('survives 4 concurrent runners on a fresh database, applying each migration exactly once', async () => {
    const { name, url } = freshDatabaseUrl();
    const results = await Promise.all([migrate(url), migrate(url), migrate(url), migrate(url)]);

    expect(results.filter((r) => r.created), 'exactly one runner creates the database').to.have.length(1);
    expect(results.flatMap((r) => r.applied).sort(), 'each migration applied by exactly one runner').to.deep.equal(all);
    for (const result of results) {
      expect(result.database).to.equal(name);
      expect([...result.applied, ...result.alreadyApplied].sort()).to.deep.equal(all);
    }
    await withClient(url, async (client) => {
      const { rows } = await client.query<{ migration_name: string; n: number }>(
        'SELECT migration_name, count(*)::int AS n FROM "_prisma_migrations" GROUP BY migration_name ORDER BY migration_name',
      );
      expect(rows).to.deep.equal(all.map((migration_name) => ({ migration_name, n: 1 })));
      expect(await tableExists(client, 'sessions')).to.equal(true);
      expect(await tableExists(client, 'seeds')).to.equal(true);
    });
  });

  it('with MASTER_KEY, makes the pack and token signing keys once: a rerun and concurrent runners keep one current key of each (D32, D34, D38)', async () => {
    const { url } = freshDatabaseUrl();
    const masterKey = randomBytes(32);
    const first = await migrate(url, undefined, { masterKey });
    expect(first.signingKeys).to.have.length(2);
    const [pack, token] = first.signingKeys!;
    expect(pack).to.include({ purpose: 'pack', created: true });
    expect(token).to.include({ purpose: 'token', created: true });
    const again = await migrate(url, undefined, { masterKey });
    expect(again.signingKeys).to.deep.equal([
      { purpose: 'pack', kid: pack!.kid, created: false },
      { purpose: 'token', kid: token!.kid, created: false },
    ]);
    // D34: SESSION_TOKEN_ALG changed to RS256: the token key is rotated to an RS256 one, once
    const rs = await migrate(url, undefined, { masterKey, tokenKeyAlg: 'RS256' });
    expect(rs.signingKeys![0]).to.deep.equal({ purpose: 'pack', kid: pack!.kid, created: false });
    expect(rs.signingKeys![1]).to.include({ purpose: 'token', created: true });
    const rsAgain = await migrate(url, undefined, { masterKey, tokenKeyAlg: 'RS256' });
    expect(rsAgain.signingKeys![1]).to.deep.equal({ purpose: 'token', kid: rs.signingKeys![1]!.kid, created: false });
    await withClient(url, async (client) => {
      const { rows } = await client.query<{ kid: string; algorithm: string; retired: boolean }>(
        `SELECT kid, algorithm, retired_at IS NOT NULL AS retired FROM signing_keys WHERE purpose = 'token' ORDER BY created_at`,
      );
      expect(rows).to.deep.equal([
        { kid: token!.kid, algorithm: 'EdDSA', retired: true },
        { kid: rs.signingKeys![1]!.kid, algorithm: 'RS256', retired: false },
      ]);
    });

    // a fresh database, four runners racing: one makes each key, every one reports them
    const racing = freshDatabaseUrl().url;
    const results = await Promise.all([1, 2, 3, 4].map(() => migrate(racing, undefined, { masterKey })));
    const keys = results.flatMap((r) => r.signingKeys!);
    expect(keys.filter((k) => k.created)).to.have.length(2);
    expect(new Set(keys.map((k) => k.kid)).size).to.equal(2);
    await withClient(racing, async (client) => {
      const { rows } = await client.query<{ kid: string; purpose: string; algorithm: string; retired_at: Date | null }>(
        'SELECT kid, purpose, algorithm, retired_at FROM signing_keys ORDER BY purpose',
      );
      expect(rows).to.deep.equal([
        { kid: keys[0]!.kid, purpose: 'pack', algorithm: 'EdDSA', retired_at: null },
        { kid: keys[1]!.kid, purpose: 'token', algorithm: 'EdDSA', retired_at: null },
      ]);
    });
    // without MASTER_KEY (tests, tools that only migrate) it makes none and says nothing of keys
    const bare = freshDatabaseUrl().url;
    expect(await migrate(bare)).to.not.have.property('signingKeys');
  });

  it("records migrations in Prisma's _prisma_migrations format", async () => {
    const { url } = freshDatabaseUrl();
    await migrate(url);
    await withClient(url, async (client) => {
      const columns = await client.query<{ column_name: string; data_type: string; is_nullable: string }>(
        `SELECT column_name, data_type, is_nullable FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      );
      expect(columns.rows).to.deep.equal([
        { column_name: 'id', data_type: 'character varying', is_nullable: 'NO' },
        { column_name: 'checksum', data_type: 'character varying', is_nullable: 'NO' },
        { column_name: 'finished_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
        { column_name: 'migration_name', data_type: 'character varying', is_nullable: 'NO' },
        { column_name: 'logs', data_type: 'text', is_nullable: 'YES' },
        { column_name: 'rolled_back_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
        { column_name: 'started_at', data_type: 'timestamp with time zone', is_nullable: 'NO' },
        { column_name: 'applied_steps_count', data_type: 'integer', is_nullable: 'NO' },
      ]);

      const { rows } = await client.query<{
        id: string;
        checksum: string;
        finished_at: Date | null;
        started_at: Date;
        rolled_back_at: Date | null;
        migration_name: string;
        applied_steps_count: number;
      }>('SELECT * FROM "_prisma_migrations" ORDER BY migration_name');
      expect(rows.map((r) => r.migration_name)).to.deep.equal(all);
      for (const row of rows) {
        const sql = await readFile(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'), 'utf8');
        expect(row.checksum, `checksum of ${row.migration_name}`).to.equal(createHash('sha256').update(sql).digest('hex'));
        expect(row.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(row.finished_at, `finished_at of ${row.migration_name}`).to.be.instanceOf(Date);
        expect(row.finished_at!.getTime()).to.be.at.least(row.started_at.getTime());
        expect(row.rolled_back_at).to.equal(null);
        expect(row.applied_steps_count).to.equal(1);
      }
    });
  });

  it('refuses a migration that was modified after it was applied, naming it', async () => {
    const { url } = freshDatabaseUrl();
    const dir = await copyOfMigrations();
    await migrate(url, dir);

    const modified = all[all.length - 1]!;
    await appendFile(path.join(dir, modified, 'migration.sql'), '\n-- edited after the fact\n');
    const err = await expectRejection(migrate(url, dir));
    expect(err).to.be.instanceOf(MigrationError);
    expect(err.message).to.include(modified).and.to.include('modified');
  });

  it('runs each migration in a transaction: broken SQL leaves no partial table and no record', async () => {
    const { url } = freshDatabaseUrl();
    const dir = await copyOfMigrations();
    const broken = '29991231000000_broken_probe';
    await mkdir(path.join(dir, broken));
    await writeFile(
      path.join(dir, broken, 'migration.sql'),
      'CREATE TABLE "drift_partial_probe" ("id" INTEGER NOT NULL);\nINSERT INTO "no_such_table" VALUES (1);\n',
    );

    const err = await expectRejection(migrate(url, dir));
    expect(err).to.be.instanceOf(MigrationError);
    expect(err.message).to.include(broken).and.to.include('no_such_table');

    await withClient(url, async (client) => {
      expect(await tableExists(client, 'drift_partial_probe'), 'the broken migration left its table behind').to.equal(false);
      const { rows } = await client.query<{ migration_name: string }>(
        'SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name',
      );
      // The migrations before it committed on their own; the broken one left no row.
      expect(rows.map((r) => r.migration_name)).to.deep.equal(all);
    });

    // Once fixed, the next run applies just that migration.
    await writeFile(path.join(dir, broken, 'migration.sql'), 'CREATE TABLE "drift_partial_probe" ("id" INTEGER NOT NULL);\n');
    const retry = await migrate(url, dir);
    expect(retry.applied).to.deep.equal([broken]);
    expect(retry.alreadyApplied).to.deep.equal(all);
  });
});
