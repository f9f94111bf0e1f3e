import { expect } from 'chai';
import { createDatabase, poolShares } from '../../../src/shared/platform/db/client.js';
import { statement } from '../../../src/shared/platform/db/sql.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// The hot path's named statements run the generic plan that statement-plans.test.ts checks,
// planned once per connection however many months are attached (D36); Prisma's queries keep
// Postgres's own choice between a generic and a per-call plan, on connections of their own.
const PROBE = statement(
  'plan_modes_probe',
  `SELECT count(*)::int AS bets FROM bets WHERE cycle_created_at BETWEEN $1::timestamptz AND $2::timestamptz AND status = 'PENDING'`,
);

describe('plan modes of the two pools', () => {
  it('splits a process\'s connections: a quarter for Prisma, the rest for the statements, each at least one', () => {
    expect(poolShares(20)).to.deep.equal({ statements: 15, prisma: 5 });
    expect(poolShares(2)).to.deep.equal({ statements: 1, prisma: 1 });
    expect(poolShares(1)).to.deep.equal({ statements: 1, prisma: 1 });
  });

  it('plans a named statement once per connection, and never per call; Prisma\'s queries are left to Postgres', async () => {
    const database = createDatabase(TEST_DATABASE_URL, 4);
    try {
      const from = new Date(Date.UTC(2026, 0, 1));
      const to = new Date(Date.UTC(2026, 0, 31));
      const plans = await database.sql.transaction(async (tx) => {
        for (let i = 0; i < 8; i++) await tx.query(PROBE, [from, to]);
        const [row] = await tx.query<{ generic: string; custom: string }>(
          `SELECT generic_plans::text AS generic, custom_plans::text AS custom FROM pg_prepared_statements WHERE name = $1`,
          [PROBE.name],
        );
        return row;
      });
      // Postgres's default would plan the first five executions for their values
      expect(plans).to.deep.equal({ generic: '8', custom: '0' });
      const [prisma] = await database.db.$queryRawUnsafe<{ plan_cache_mode: string }[]>('SHOW plan_cache_mode');
      expect(prisma?.plan_cache_mode).to.equal('auto');
    } finally {
      await database.close();
    }
  });
});
