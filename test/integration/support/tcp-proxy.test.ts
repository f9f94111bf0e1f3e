import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/env.js';
import { until } from '../../support/game.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';

// The fault suite's TCP proxy in front of the real Postgres, the real Redis and an HTTP
// server: it carries each protocol untouched, and each fault does what the suite relies on.

const target = (url: string) => {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port) };
};

// 'pending' when the promise has not settled within ms
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('test support: TCP proxy', function () {
  this.timeout(15_000);

  describe('in front of Postgres', () => {
    let proxy: TcpProxy;
    const clients: pg.Client[] = [];
    const client = async () => {
      const c = new pg.Client({ connectionString: proxy.via(TEST_DATABASE_URL) });
      clients.push(c);
      // an error event with no listener would crash the run; the tests look at the query
      c.on('error', () => undefined);
      await c.connect();
      return c;
    };

    beforeEach(async () => {
      proxy = await startTcpProxy({ target: target(TEST_DATABASE_URL) });
    });
    afterEach(async () => {
      for (const c of clients.splice(0)) await c.end().catch(() => undefined);
      await proxy.close();
    });

    it('carries the pg wire protocol', async () => {
      const c = await client();
      const { rows } = await c.query('SELECT 1 + 1 AS two');
      expect(rows).to.deep.equal([{ two: 2 }]);
      expect(proxy.connections).to.equal(1);
    });

    it('adds the latency in each direction', async () => {
      const c = await client();
      proxy.setLatency(100);
      const started = performance.now();
      await c.query('SELECT 1');
      // one round trip: the query waits 100 ms on its way in, the answer 100 ms on its way out
      expect(performance.now() - started).to.be.at.least(200);
      proxy.setLatency(0);
      const fast = performance.now();
      await c.query('SELECT 1');
      expect(performance.now() - fast).to.be.below(100);
    });

    it('resetAll: a query in progress fails with ECONNRESET, a new connection works', async () => {
      const c = await client();
      const sleeping = c.query("SELECT pg_sleep(5) AS proxied_sleep");
      // the reset must hit a query the backend is running, not one still on its way
      const direct = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await direct.connect();
      try {
        await until('the backend to run the query', async () => {
          const { rowCount } = await direct.query(
            "SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%AS proxied_sleep'",
          );
          return rowCount === 1;
        });
      } finally {
        await direct.end();
      }
      proxy.resetAll();
      const error = await sleeping.then(() => null, (err: unknown) => err as NodeJS.ErrnoException);
      expect(error, 'the query should fail').to.be.an('error');
      expect(error!.code).to.equal('ECONNRESET');
      const again = await client();
      expect((await again.query('SELECT 2 AS n')).rows).to.deep.equal([{ n: 2 }]);
    });

    it("blackhole 'hold': a query hangs while on and completes once off", async () => {
      const c = await client();
      proxy.blackhole(true, 'hold');
      const query = c.query('SELECT 3 AS n');
      expect(await within(query, 300)).to.equal('pending');
      proxy.blackhole(false);
      expect((await query).rows).to.deep.equal([{ n: 3 }]);
    });

    it("blackhole 'drop': a query hangs for good, a new connection works once off", async () => {
      const c = await client();
      proxy.blackhole(true);
      const lost = c.query('SELECT 4 AS n').then(() => 'answered', () => 'failed');
      expect(await within(lost, 300)).to.equal('pending');
      proxy.blackhole(false);
      const again = await client();
      expect((await again.query('SELECT 5 AS n')).rows).to.deep.equal([{ n: 5 }]);
      expect(await within(lost, 100)).to.equal('pending');
    });

    it('refuse: new connections are reset while on, accepted again once off', async () => {
      proxy.refuse(true);
      const error = await client().then(() => null, (err: unknown) => err as NodeJS.ErrnoException);
      expect(error, 'the connection should fail').to.be.an('error');
      expect(error!.code).to.equal('ECONNRESET');
      proxy.refuse(false);
      const c = await client();
      expect((await c.query('SELECT 6 AS n')).rows).to.deep.equal([{ n: 6 }]);
    });
  });

  describe('in front of Redis', () => {
    let proxy: TcpProxy;
    let redis: Redis;

    beforeEach(async () => {
      proxy = await startTcpProxy({ target: target(TEST_REDIS_URL) });
      redis = new Redis(proxy.via(TEST_REDIS_URL), { retryStrategy: () => 50 });
    });
    afterEach(async () => {
      redis.disconnect();
      await proxy.close();
    });

    it('carries RESP', async () => {
      expect(await redis.ping()).to.equal('PONG');
    });

    it('adds the latency in each direction', async () => {
      await redis.ping();
      proxy.setLatency(80);
      const started = performance.now();
      await redis.ping();
      expect(performance.now() - started).to.be.at.least(160);
    });

    it('resetAll: the connection sees ECONNRESET and ioredis reconnects', async () => {
      await redis.ping();
      const errors: NodeJS.ErrnoException[] = [];
      redis.on('error', (err: NodeJS.ErrnoException) => errors.push(err));
      const reconnected = new Promise((resolve) => redis.once('ready', resolve));
      proxy.resetAll();
      await reconnected;
      expect(errors.map((err) => err.code)).to.include('ECONNRESET');
      expect(await redis.ping()).to.equal('PONG');
      expect(proxy.connections).to.equal(1);
    });

    it('freezeOpen: the open connection carries nothing more, a new one works', async () => {
      await redis.ping();
      proxy.freezeOpen();
      expect(await within(redis.ping(), 500)).to.equal('pending');
      const fresh = new Redis(proxy.via(TEST_REDIS_URL));
      try {
        expect(await fresh.ping()).to.equal('PONG');
      } finally {
        fresh.disconnect();
      }
    });
  });

  describe('in front of HTTP', () => {
    let server: Server;
    let proxy: TcpProxy;
    const seen: string[] = [];

    before(async () => {
      server = createServer((req, res) => {
        seen.push(req.url ?? '');
        res.end(`hello ${req.url}`);
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: (server.address() as AddressInfo).port } });
    });
    after(async () => {
      await proxy.close();
      server.closeAllConnections();
      server.close();
    });

    it('carries a request and its answer', async () => {
      const answer = await fetch(`http://${proxy.host}:${proxy.port}/x`, { headers: { connection: 'close' } });
      expect(await answer.text()).to.equal('hello /x');
    });

    it('holdMatching: a matching request waits, even after its client gave up, and arrives once released; others pass', async () => {
      const held = proxy.holdMatching('GET /late');
      const base = `http://${proxy.host}:${proxy.port}`;
      const given = await fetch(`${base}/late`, { signal: AbortSignal.timeout(300) }).then(() => 'answered', (err: Error) => err.name);
      expect(given).to.equal('TimeoutError');
      expect(held.connections).to.equal(1);
      expect(await (await fetch(`${base}/other`, { headers: { connection: 'close' } })).text()).to.equal('hello /other');
      expect(seen).to.not.include('/late');
      held.release();
      await until('the held request at the server', async () => seen.includes('/late'));
      // released: the marker is not held any more
      expect(await (await fetch(`${base}/late`, { headers: { connection: 'close' } })).text()).to.equal('hello /late');
    });
  });
});
