import { expect } from 'chai';
import { Worker } from 'bullmq';
import { QUEUES, queuePrefix } from '../../../src/shared/platform/queues.js';
import { superviseWorker, type RunningWorkers } from '../../../src/workers/pools.js';
import { TEST_REDIS_URL } from '../../support/env.js';
import { until } from '../../support/game.js';
import { startHarness, uniqueId, type Harness } from '../../support/harness.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';

// P08: Redis is the transport, and a worker whose Redis connections look alive but carry
// nothing (as the client can be left after a Redis Cluster restarts empty) takes no job and
// raises no error. The queue shows it: a job ready to run that stays there while the worker
// sits idle. The worker is then replaced by a new one on a new connection (stall-watch.ts).
describe('faults: a worker whose connections carry nothing more', function () {
  this.timeout(60_000);
  let h: Harness;
  let proxy: TcpProxy;
  let workers: RunningWorkers | undefined;
  const lines: string[] = [];
  before(async () => {
    // the api alone: no pool of the service's own takes the jobs of this test's queue
    h = await startHarness({ REDIS_KEY_PREFIX: uniqueId('rgs-stall') }, ['api'], { logLines: lines });
    const redis = new URL(TEST_REDIS_URL);
    proxy = await startTcpProxy({ target: { host: redis.hostname, port: Number(redis.port || 6379) } });
  });
  after(async () => {
    await workers?.close();
    await h?.close();
    await proxy?.close();
  });

  it('is replaced while a job waits, and the job runs', async () => {
    // the worker reaches Redis through the proxy; the queue the service adds to does not
    const svc = { ...h.svc, config: { ...h.svc.config, redisUrl: proxy.via(h.svc.config.redisUrl) } };
    const ran: string[] = [];
    workers = superviseWorker(
      svc,
      'settle',
      (connection) =>
        new Worker(QUEUES.settle.name, async (job) => void ran.push(job.id!), { connection, prefix: queuePrefix(svc.config.redisKeyPrefix, 'settle') }),
    );
    await h.svc.queues.settle.add('win', { walletJobIds: ['before'] }, { jobId: 'before' });
    await until('the first job to run', async () => ran.includes('before'));

    proxy.freezeOpen();
    await h.svc.queues.settle.add('win', { walletJobIds: ['after'] }, { jobId: 'after' });
    await until('the job added after the freeze to run', async () => ran.includes('after'), 40_000);
    const warnings = lines.map((line) => JSON.parse(line) as { msg: string; pool?: string }).filter((line) => line.msg.includes('renewing the worker'));
    expect(warnings.map((line) => [line.pool, line.msg])).to.deep.equal([['settle', 'worker took no job while jobs waited: renewing the worker']]);
  });
});
