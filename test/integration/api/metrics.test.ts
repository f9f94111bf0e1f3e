import { expect } from 'chai';
import { startHarness, type Harness } from '../../support/harness.js';
import { freePort } from '../../support/processes.js';

// D15, D20, D25: GET /metrics. In production the public port (PORT) answers it only with
// `Authorization: Bearer $METRICS_TOKEN`, and 404 otherwise; HEALTH_PORT answers it openly.
// Node's default metrics keep their standard names (process_*, nodejs_*).

const PRODUCTION = {
  NODE_ENV: 'production',
  MASTER_KEY: '7c'.repeat(32),
  JWT_SECRET: 'metrics-test-jwt-secret-'.padEnd(48, 'x'),
};
const TOKEN = 'metrics-token-'.padEnd(48, 'z');

const get = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { headers });
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') ?? '' };
};

function expectMetrics(response: { status: number; text: string; type: string }): void {
  expect(response.status, response.text).to.equal(200);
  expect(response.type).to.include('text/plain');
  expect(response.text).to.match(/^# TYPE rgs_http_request_duration_seconds histogram$/m);
}

function expectNotFound(response: { status: number; text: string }): void {
  expect(response.status, response.text).to.equal(404);
  expect(JSON.parse(response.text)).to.include({ error: 'not_found' });
  expect(response.text).not.to.include('rgs_');
}

describe('/metrics (D15, D25)', () => {
  describe('outside production', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(() => h.close());

    it('is open on the public port', async () => {
      expectMetrics(await get(`${h.baseUrl}/metrics`));
    });

    it("Node's default metrics keep their standard unprefixed names", async () => {
      const { text } = await get(`${h.baseUrl}/metrics`);
      for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes']) {
        expect(text, name).to.match(new RegExp(`^${name}(\\{[^}]*\\})? `, 'm'));
      }
      expect(text).not.to.match(/^rgs_(process|nodejs)_/m);
    });
  });

  describe('in production without METRICS_TOKEN', () => {
    let h: Harness;
    let healthPort: number;
    before(async () => {
      healthPort = await freePort();
      h = await startHarness({ ...PRODUCTION, HEALTH_PORT: String(healthPort) });
    });
    after(() => h.close());

    it('the public port answers 404, whatever the Authorization header', async () => {
      expectNotFound(await get(`${h.baseUrl}/metrics`));
      expectNotFound(await get(`${h.baseUrl}/metrics`, { authorization: `Bearer ${TOKEN}` }));
      expectNotFound(await get(`${h.baseUrl}/METRICS`));
      // health and readiness stay open: load balancers probe them
      expect((await get(`${h.baseUrl}/healthz`)).status).to.equal(200);
      expect((await get(`${h.baseUrl}/readyz`)).status).to.equal(200);
    });

    it('HEALTH_PORT serves it, next to the api', async () => {
      expectMetrics(await get(`http://127.0.0.1:${healthPort}/metrics`));
      expect((await get(`http://127.0.0.1:${healthPort}/healthz`)).status).to.equal(200);
    });
  });

  describe('in production with METRICS_TOKEN', () => {
    let h: Harness;
    let healthPort: number;
    before(async () => {
      healthPort = await freePort();
      h = await startHarness({ ...PRODUCTION, METRICS_TOKEN: TOKEN, HEALTH_PORT: String(healthPort) });
    });
    after(() => h.close());

    it('the public port serves it with Authorization: Bearer $METRICS_TOKEN', async () => {
      expectMetrics(await get(`${h.baseUrl}/metrics`, { authorization: `Bearer ${TOKEN}` }));
      expectMetrics(await get(`${h.baseUrl}/metrics`, { authorization: `bearer ${TOKEN}` }));
    });

    it('and answers 404 without it or with another token', async () => {
      expectNotFound(await get(`${h.baseUrl}/metrics`));
      for (const authorization of [
        `Bearer ${TOKEN.slice(0, -1)}y`, // same length
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.slice(0, 10)}`,
        'Bearer ',
        TOKEN,
        `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`,
      ]) {
        expectNotFound(await get(`${h.baseUrl}/metrics`, { authorization }));
      }
    });

    it('HEALTH_PORT serves it without a token', async () => {
      expectMetrics(await get(`http://127.0.0.1:${healthPort}/metrics`));
    });
  });

  describe('in production, a realtime process without the api role', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(PRODUCTION, ['realtime']);
    });
    after(() => h.close());

    it('answers 404 for /metrics on its public port', async () => {
      expectNotFound(await get(`${h.baseUrl}/metrics`));
      expect((await get(`${h.baseUrl}/healthz`)).status).to.equal(200);
    });
  });
});
