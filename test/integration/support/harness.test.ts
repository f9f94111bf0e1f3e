import { expect } from 'chai';
import { createRedis } from '../../../src/shared/platform/redis.js';
import { TEST_REDIS_URL } from '../../support/env.js';
import { startHarness, uniqueId } from '../../support/harness.js';

// A harness with a key prefix of its own leaves nothing in the shared Redis when it closes
// (the run's shared prefix is cleared when the run ends, global.ts).
describe('test support: harness key prefix', function () {
  this.timeout(20_000);

  it('removes the keys of its own prefix when it closes, and no one else\'s', async () => {
    const prefix = uniqueId('rgs-own');
    const neighbour = `${uniqueId('rgs-other')}:kept`;
    const redis = createRedis(TEST_REDIS_URL, { enableOfflineQueue: true });
    const keysOf = (of: string) => redis.keys(`${of}:*`);
    try {
      await redis.set(neighbour, '1');
      // the scheduler takes its lease and queues its work under the prefix
      const h = await startHarness({ REDIS_KEY_PREFIX: prefix }, ['api', 'scheduler', 'bet']);
      await h.svc.queues.bet.add('bets', { node: 'n', tickets: [] }, { delay: 60_000 });
      expect(await keysOf(prefix)).to.not.be.empty;
      await h.close();
      expect(await keysOf(prefix)).to.deep.equal([]);
      expect(await redis.get(neighbour)).to.equal('1');
    } finally {
      await redis.del(neighbour);
      redis.disconnect();
    }
  });
});
