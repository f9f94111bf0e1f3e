import { expect } from 'chai';
import { once } from 'node:events';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

// The fault suite's private Redis: a restart loses every key, and clients reconnect to it.
describe('test support: private redis-server', function () {
  this.timeout(15_000);
  let server: RedisServer;
  let redis: Redis;

  before(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url, { retryStrategy: () => 50 });
    // the restart drops the connection; ioredis reports it and reconnects
    redis.on('error', () => undefined);
  });
  after(async () => {
    redis?.disconnect();
    await server?.close();
  });

  it('answers on its own port, not on the shared 6379', async () => {
    expect(server.port).to.not.equal(6379);
    expect(server.url).to.equal(`redis://127.0.0.1:${server.port}`);
    expect(await redis.ping()).to.equal('PONG');
  });

  it('restart: same port, every key gone, PING answers', async () => {
    await redis.set('fault-suite:key', 'value');
    expect(await redis.get('fault-suite:key')).to.equal('value');
    await server.restart();
    expect(await redis.ping()).to.equal('PONG');
    expect(await redis.get('fault-suite:key')).to.equal(null);
    expect(await redis.dbsize()).to.equal(0);
  });

  it('stop: the port refuses connections until restarted', async () => {
    await server.stop();
    const probe = connect({ host: '127.0.0.1', port: server.port });
    const [error] = (await once(probe, 'error')) as NodeJS.ErrnoException[];
    expect(error?.code).to.equal('ECONNREFUSED');
    await server.restart();
    expect(await redis.ping()).to.equal('PONG');
  });

  it('refuses to start on a port another server holds', async () => {
    const error = await startRedisServer({ port: server.port }).then(
      async (second) => {
        await second.close();
        return null;
      },
      (err: Error) => err,
    );
    expect(error?.message).to.match(/exited \(1\) before answering PING/);
  });
});
