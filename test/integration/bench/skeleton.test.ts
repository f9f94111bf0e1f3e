import { expect } from 'chai';
import pg from 'pg';
import { SKELETON_STEPS, openSkeleton, sampleSkeletonUnderLoad, skeletonSteps } from '../../../bench/skeleton.js';
import { clearRedisPrefix, createRedis } from '../../../src/shared/platform/redis.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/env.js';
import { until } from '../../support/game.js';

// The bench's bet path skeleton: the stack's own steps of a bet, run for real
// against the real Postgres and Redis. Nothing here is timed; what is checked is that every
// step really ran, in order, and that nothing is left behind.

const PREFIX = `${process.env.REDIS_KEY_PREFIX}-skeleton`;

async function skeletonTables(): Promise<string[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'bench_skeleton_%'`);
    return rows.map((row) => row.tablename);
  } finally {
    await client.end();
  }
}

// the bets accepted in the skeleton's own tables (one per sample), 0 before they exist
async function acceptedSkeletonBets(): Promise<number> {
  const [table] = (await skeletonTables()).filter((name) => name.endsWith('_bets'));
  if (!table) return 0;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE status = 'ACCEPTED'`);
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

async function prefixKeys(): Promise<string[]> {
  const redis = createRedis(TEST_REDIS_URL, { enableOfflineQueue: true });
  try {
    return await redis.keys(`${PREFIX}:*`);
  } finally {
    redis.disconnect();
  }
}

describe('bench bet path skeleton', () => {
  afterEach(() => clearRedisPrefix(TEST_REDIS_URL, PREFIX));

  for (const queueHop of [true, false]) {
    const steps = skeletonSteps(queueHop);
    it(`${queueHop ? 'with' : 'without'} the queue hop: runs each step of a bet in turn, the bet accepted after its audit row, and removes its tables and queue`, async () => {
      const skeleton = await openSkeleton(TEST_DATABASE_URL, TEST_REDIS_URL, PREFIX, queueHop);
      const [table] = (await skeletonTables()).filter((name) => name.endsWith('_bets'));
      let samples;
      try {
        samples = [await skeleton.once(), await skeleton.once(), await skeleton.once()];
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try {
          const bets = await client.query<{ status: string; audits: string }>(
            `SELECT status, (SELECT count(*) FROM ${table!.replace(/_bets$/, '_audits')} a WHERE a.bet_id = b.id)::text AS audits FROM ${table} b`,
          );
          expect(bets.rows).to.deep.equal([1, 2, 3].map(() => ({ status: 'ACCEPTED', audits: '1' })));
        } finally {
          await client.end();
        }
      } finally {
        await skeleton.close();
      }
      for (const sample of samples) {
        expect(Object.keys(sample)).to.deep.equal(steps);
        for (const step of steps) expect(sample[step], step).to.be.at.least(0);
      }
      expect(await skeletonTables()).to.deep.equal([]);
      expect(await prefixKeys()).to.deep.equal([]);
    });
  }

  it('without the queue hop, skips the bet job and places the bet with its audit row: placed, the wallet call, the acceptance', () => {
    expect(skeletonSteps(false)).to.deep.equal(['placed', 'debited', 'accepted']);
    expect(skeletonSteps(true)).to.deep.equal([...SKELETON_STEPS]);
  });

  it('samples on a thread of its own until stopped', async () => {
    const sampler = await sampleSkeletonUnderLoad(TEST_DATABASE_URL, TEST_REDIS_URL, PREFIX, true);
    // until its thread has accepted two bets (bounded), not a fixed 300 ms, which a loaded box
    // can spend on the first one: a bet in progress when it is stopped is finished and kept
    await until('two skeleton bets accepted', async () => (await acceptedSkeletonBets()) >= 2);
    const samples = await sampler.stop();
    expect(samples.length).to.be.above(1);
    for (const sample of samples) expect(Object.keys(sample)).to.deep.equal([...SKELETON_STEPS]);
    expect(await skeletonTables()).to.deep.equal([]);
  });
});
