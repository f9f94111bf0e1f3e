import { expect } from 'chai';
import { createPool, createSql } from '../../../src/shared/platform/db/sql.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// D15: Postgres ending an idle connection (a restart, a failover, an administrator) must not
// end the process: the pool drops the connection and the next query opens another.
describe('an idle pool connection that Postgres ends', () => {
  it('does not crash the process, and the next query is answered', async () => {
    const pool = createPool(TEST_DATABASE_URL, 2);
    const sql = createSql(pool);
    const admin = createSql(createPool(TEST_DATABASE_URL, 1));
    try {
      const [backend] = await sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // the connection is idle in the pool now; the pool's 'error' event, unheard, is thrown
      await admin.query('SELECT pg_terminate_backend($1)', [backend!.pid]);
      for (let waited = 0; pool.totalCount > 0 && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(pool.totalCount, 'the ended connection left the pool').to.equal(0);
      const [answer] = await sql.query<{ one: number }>('SELECT 1 AS one');
      expect(answer?.one).to.equal(1);
    } finally {
      await pool.end();
      await admin.pool.end();
    }
  });
});
