import { expect } from 'chai';
import pg from 'pg';
import { DEFERRED_FLUSH, deferredFlushUnless } from '../../../src/shared/platform/db/sql.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// A write that a later synchronous commit makes durable (the bet row, place.ts) commits
// without waiting for the write-ahead log to reach the disk, and only that statement does:
// Postgres counts the log's syncs (pg_stat_wal.wal_sync, cluster-wide), which every
// ordinary commit adds one to.
describe('statements that defer their disk flush', () => {
  let client: pg.Client;
  before(async () => {
    client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query('CREATE TABLE deferred_flush_probe (id bigserial PRIMARY KEY, n int NOT NULL)');
  });
  after(async () => {
    await client.query('DROP TABLE IF EXISTS deferred_flush_probe');
    await client.end();
  });

  const walSyncs = async () => {
    // this backend's counters reach pg_stat_wal when it next reports
    await client.query('SELECT pg_stat_force_next_flush()');
    await client.query('SELECT 1');
    const { rows } = await client.query<{ wal_sync: string }>('SELECT wal_sync FROM pg_stat_wal');
    return Number(rows[0]!.wal_sync);
  };
  const syncsOf = async (text: string, inserts: number) => {
    const before = await walSyncs();
    for (let n = 0; n < inserts; n++) await client.query({ text, values: [n] });
    return (await walSyncs()) - before;
  };

  it('an ordinary insert syncs the log at every commit', async () => {
    expect(await syncsOf('INSERT INTO deferred_flush_probe (n) VALUES ($1)', 50)).to.be.at.least(50);
  });

  it('an insert with DEFERRED_FLUSH does not (the WAL writer flushes a few times a second)', async () => {
    const text = `WITH ${DEFERRED_FLUSH} INSERT INTO deferred_flush_probe (n) SELECT $1::int FROM deferred_flush`;
    expect(await syncsOf(text, 50)).to.be.below(10);
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM deferred_flush_probe');
    expect(Number(rows[0]!.n)).to.equal(100);
  });

  it('deferredFlushUnless defers only when its condition is false (place.ts: a batch that writes no audit row)', async () => {
    const text = (durable: boolean) =>
      `WITH ${deferredFlushUnless(`${durable}`)} INSERT INTO deferred_flush_probe (n) SELECT $1::int FROM deferred_flush`;
    expect(await syncsOf(text(true), 50), 'durable: a sync per commit').to.be.at.least(50);
    expect(await syncsOf(text(false), 50), 'deferred').to.be.below(10);
  });

  it('leaves the connection committing synchronously afterwards', async () => {
    await syncsOf(`WITH ${DEFERRED_FLUSH} INSERT INTO deferred_flush_probe (n) SELECT $1::int FROM deferred_flush`, 1);
    const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    expect(rows[0]!.synchronous_commit).to.equal('on');
    expect(await syncsOf('INSERT INTO deferred_flush_probe (n) VALUES ($1)', 5)).to.be.at.least(5);
  });
});
