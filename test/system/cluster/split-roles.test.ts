import { splitDeploymentTests } from '../../support/split-deployment.js';
import { TEST_REDIS_URL } from '../../support/env.js';

// The split deployment of D12 on the shared Redis (test/support/split-deployment.ts).
describe('split deployment: every role in its own process', function () {
  splitDeploymentTests(this, async () => ({ env: {}, target: TEST_REDIS_URL, close: async () => undefined }));
});
