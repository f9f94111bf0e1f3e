import { parseRedisNodes } from '../../../src/shared/platform/config.js';
import { TEST_REDIS_URL } from '../../support/env.js';
import { startRedisCluster } from '../../support/redis-cluster.js';
import { splitDeploymentTests } from '../../support/split-deployment.js';

// D36: the split deployment of D12 (test/support/split-deployment.ts) on a Redis Cluster of
// three masters with a replica each: every process reaches it through REDIS_CLUSTER_NODES,
// the queues, the lease and the rate limits with their keys hash-tagged, and the players'
// messages crossing between the two web nodes on sharded pub/sub.
describe('Redis Cluster (D36): the split deployment', function () {
  splitDeploymentTests(this, async () => {
    const cluster = await startRedisCluster();
    return {
      env: { REDIS_CLUSTER_NODES: cluster.nodes },
      target: { redisUrl: TEST_REDIS_URL, redisClusterNodes: parseRedisNodes(cluster.nodes)! },
      close: () => cluster.close(),
    };
  });
});
