import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { HSTS } from '../../../src/api/middleware/security-headers.js';
import { TEST_REDIS_URL } from '../../support/env.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { send, type ApiResponse } from '../../support/signed-client.js';

// The request pipeline around the handlers: transport headers (contract 5.5), open health
// endpoints (D15), the signed-only /v1 namespace (5.5, D16), unknown routes, body size (D9),
// the IP allow-list before the signature (5.4, D3) and proxy trust (D12).

const HSTS_VALUE = 'max-age=63072000; includeSubDomains; preload';
const MAX_BODY = 64 * 1024;

describe('request pipeline (contract 5.4, 5.5, D3, D9, D12, D15)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const get = (path: string, headers: Record<string, string> = {}) => send(`${h.baseUrl}${path}`, { method: 'GET', headers });
  const sessionRows = (operatorId: string) => h.svc.db.session.count({ where: { operatorId } });
  const walletRequests = (operatorId: string) =>
    h.wallet.requests.filter((r) => (r.body as { operatorId?: unknown } | undefined)?.operatorId === operatorId).length;

  async function expectNothingHappened(operator: TestOperator): Promise<void> {
    expect(await sessionRows(operator.operatorId), 'session rows').to.equal(0);
    expect(walletRequests(operator.operatorId), 'wallet simulator requests').to.equal(0);
    expect(await h.svc.db.walletCall.count({ where: { operatorId: operator.operatorId } }), 'wallet audit rows').to.equal(0);
  }

  function expectError(response: ApiResponse, status: number, error: string): void {
    expect(response.status, response.text).to.equal(status);
    expect(response.body.error).to.equal(error);
    expect(response.body.message).to.be.a('string').and.not.equal('');
  }

  // a session body padded (unknown fields are ignored, D9) to exactly `bytes` bytes
  function paddedBody(operator: TestOperator, bytes: number): string {
    const base = JSON.stringify({ ...operator.sessionBody(), padding: '' });
    const raw = JSON.stringify({ ...operator.sessionBody(), padding: 'x'.repeat(bytes - base.length) });
    expect(Buffer.byteLength(raw)).to.equal(bytes);
    return raw;
  }

  describe('Strict-Transport-Security (contract 5.5)', () => {
    it('is the exact contract value', () => {
      expect(HSTS).to.equal(HSTS_VALUE);
    });

    it('is on every response, whatever its status', async () => {
      const operator = await h.onboard();
      const blocked = await h.onboard({ ipAllowList: ['10.0.0.0/8'] });
      const responses: Record<string, ApiResponse> = {
        '200 session': await operator.launch(),
        '401 unsigned': await get('/v1/nope'),
        '403 ip': await blocked.launch(),
        '404 signed unknown route': await operator.request('GET', '/v1/nope'),
        '404 outside /v1': await get('/nope'),
        '413 too large': await operator.request('POST', '/v1/session', undefined, { rawBody: paddedBody(operator, MAX_BODY + 1) }),
        '400 invalid body': await operator.request('POST', '/v1/session', { operatorId: operator.operatorId }),
        '404 dispute pack of an unknown round': await operator.request('GET', `/v1/rounds/${randomUUID()}/dispute-pack`),
        '200 healthz': await get('/healthz'),
        '200 readyz': await get('/readyz'),
        '200 metrics': await get('/metrics'),
      };
      for (const [name, response] of Object.entries(responses)) {
        expect(response.status, name).to.equal(Number(name.slice(0, 3)));
        expect(response.headers.get('strict-transport-security'), name).to.equal(HSTS_VALUE);
      }
    });
  });

  describe('open endpoints (D15)', () => {
    it('GET /healthz answers 200 {status: "ok"} without a signature', async () => {
      const response = await get('/healthz');
      expect(response.status).to.equal(200);
      expect(response.body).to.deep.equal({ status: 'ok' });
    });

    it('GET /readyz answers 200 with the Postgres and Redis checks', async () => {
      const response = await get('/readyz');
      expect(response.status, response.text).to.equal(200);
      expect(response.body.checks).to.deep.equal({ postgres: 'ok', redis: 'ok' });
    });

    it('GET /metrics is Prometheus text with the request latency histogram by route', async () => {
      const operator = await h.onboard();
      expect((await operator.request('GET', `/v1/rounds/${randomUUID()}/dispute-pack`)).status).to.equal(404);
      const response = await get('/metrics');
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/plain/);
      expect(response.text).to.include('# TYPE rgs_http_request_duration_seconds histogram');
      expect(response.text).to.match(/rgs_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/rounds\/:roundId\/dispute-pack"/);
      // the route pattern, never the raw path with its id
      expect(response.text).to.not.match(/route="\/v1\/rounds\/[0-9a-f]{8}-/);
      // D15: queue depths and rounds by state
      expect(response.text).to.match(/rgs_queue_jobs\{queue="rgs-bet",state="waiting"\} \d+/);
      expect(response.text).to.include('# TYPE rgs_rounds gauge');
      expect(response.text).to.include('# TYPE rgs_wallet_call_duration_seconds histogram');
    });
  });

  describe('the /v1 namespace is signed only (contract 5.5)', () => {
    const unsigned: [string, string][] = [
      ['GET', '/v1/nope'],
      ['POST', '/v1/nope'],
      ['GET', '/v1'],
      ['GET', '/v1/'],
      ['GET', '/v1/session'],
      ['POST', '/v1/session'],
      ['POST', `/v1/session/${randomUUID()}/terminate`],
      ['GET', `/v1/rounds/${randomUUID()}/dispute-pack`],
      ['GET', `/v1/rounds/${randomUUID()}/proof`],
      ['DELETE', '/v1/session'],
      ['GET', '/V1/nope'],
      ['POST', '/V1/session'],
      ['GET', `/V1/rounds/${randomUUID()}/dispute-pack`],
      ['GET', `/v1/ROUNDS/${randomUUID()}/dispute-pack`],
    ];
    for (const [method, path] of unsigned) {
      it(`answers an unsigned ${method} ${path} with 401, never 404 or 200`, async () => {
        const operator = await h.onboard();
        const body = method === 'POST' ? JSON.stringify(operator.sessionBody()) : undefined;
        const response = await send(`${h.baseUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body });
        expectError(response, 401, 'invalid_signature');
        expect(response.body.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
        await expectNothingHappened(operator);
      });
    }

    it('answers a signed request to an unknown /v1 route with 404 not_found', async () => {
      const operator = await h.onboard();
      expectError(await operator.request('GET', '/v1/nope'), 404, 'not_found');
      expectError(await operator.request('POST', '/v1/nope', { a: 1 }), 404, 'not_found');
      expectError(await operator.request('DELETE', '/v1/session'), 404, 'not_found');
    });

    it('answers a signed dispute-pack request for an unknown round with 404 round_not_found (D32)', async () => {
      const operator = await h.onboard();
      expectError(await operator.request('GET', `/v1/rounds/${randomUUID()}/dispute-pack`), 404, 'round_not_found');
    });
  });

  describe('body size (D9)', () => {
    it('refuses a signed body over 64 KiB with 413 payload_too_large and creates nothing', async () => {
      const operator = await h.onboard();
      const response = await operator.request('POST', '/v1/session', undefined, { rawBody: paddedBody(operator, MAX_BODY + 1) });
      expectError(response, 413, 'payload_too_large');
      await expectNothingHappened(operator);
    });

    it('refuses a large body before looking at its signature', async () => {
      const operator = await h.onboard();
      const response = await operator.request('POST', '/v1/session', undefined, {
        rawBody: paddedBody(operator, 2 * MAX_BODY),
        signature: 'AAAA',
      });
      expectError(response, 413, 'payload_too_large');
      await expectNothingHappened(operator);
    });

    it('accepts a body of exactly 64 KiB', async () => {
      const operator = await h.onboard();
      const response = await operator.request('POST', '/v1/session', undefined, { rawBody: paddedBody(operator, MAX_BODY) });
      expect(response.status, response.text).to.equal(200);
      expect(await sessionRows(operator.operatorId)).to.equal(1);
    });
  });

  describe('IP allow-list (contract 5.4, D3)', () => {
    it('refuses a caller outside the list with 403 ip_not_allowed, even when correctly signed', async () => {
      const operator = await h.onboard({ ipAllowList: ['10.0.0.0/8'] });
      expectError(await operator.launch(), 403, 'ip_not_allowed');
      await expectNothingHappened(operator);
    });

    it('checks the IP before the signature: unsigned or badly signed requests also get 403', async () => {
      const operator = await h.onboard({ ipAllowList: ['10.0.0.0/8'] });
      const attempts = [
        await operator.launch({}, { omit: ['timestamp', 'signature'] }),
        await operator.launch({}, { signature: 'bm90IGEgc2lnbmF0dXJl' }),
        await operator.launch({}, { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
        await operator.launch({}, { signPath: '/v1/other' }),
        await operator.request('GET', `/v1/rounds/${randomUUID()}/dispute-pack`, undefined, { omit: ['signature'] }),
      ];
      for (const response of attempts) expectError(response, 403, 'ip_not_allowed');
      await expectNothingHappened(operator);
    });

    it('lets a caller on the list through', async () => {
      const operator = await h.onboard({ ipAllowList: ['127.0.0.1'] });
      const response = await operator.launch();
      expect(response.status, response.text).to.equal(200);
      expect(await sessionRows(operator.operatorId)).to.equal(1);
      // on the list, the signature is still checked
      expectError(await operator.launch({}, { signature: 'bm90IGEgc2lnbmF0dXJl' }), 401, 'invalid_signature');
      expect(await sessionRows(operator.operatorId)).to.equal(1);
    });

    it('matches a CIDR range that contains the caller', async () => {
      const operator = await h.onboard({ ipAllowList: ['10.0.0.0/8', '127.0.0.0/8'] });
      expect((await operator.launch()).status).to.equal(200);
    });

    it('checks only the signature when the list is empty', async () => {
      const operator = await h.onboard({ ipAllowList: [] });
      expect((await operator.launch()).status).to.equal(200);
      expectError(await operator.launch({}, { signature: 'bm90IGEgc2lnbmF0dXJl' }), 401, 'invalid_signature');
      expect(await sessionRows(operator.operatorId)).to.equal(1);
    });

    it('ignores X-Forwarded-For when TRUST_PROXY is unset: the socket address is judged', async () => {
      const forwarded = { 'x-forwarded-for': '203.0.113.7, 127.0.0.1' };
      const proxyListed = await h.onboard({ ipAllowList: ['203.0.113.0/24'] });
      expectError(await proxyListed.launch({}, { headers: forwarded }), 403, 'ip_not_allowed');
      await expectNothingHappened(proxyListed);
      const localListed = await h.onboard({ ipAllowList: ['127.0.0.1'] });
      expect((await localListed.launch({}, { headers: forwarded })).status).to.equal(200);
    });
  });

  describe('with TRUST_PROXY=true (D12, D24)', () => {
    let trusted: Harness;
    before(async () => {
      trusted = await startHarness({ TRUST_PROXY: 'true' });
    });
    after(() => trusted.close());

    const sessions = (operator: TestOperator) => trusted.svc.db.session.count({ where: { operatorId: operator.operatorId } });

    it('judges the right-most X-Forwarded-For address (the one the proxy appended): allowed when it is on the list', async () => {
      const operator = await trusted.onboard({ ipAllowList: ['203.0.113.0/24'] });
      const response = await operator.launch({}, { headers: { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' } });
      expect(response.status, response.text).to.equal(200);
      expect(await sessions(operator)).to.equal(1);
    });

    it('never trusts the left-most address: a client that names an allowed IP ahead of its own is refused', async () => {
      const operator = await trusted.onboard({ ipAllowList: ['203.0.113.0/24'] });
      // what a proxy makes of a client at 198.51.100.9 that sent "X-Forwarded-For: 203.0.113.7"
      const spoofed = await operator.launch({}, { headers: { 'x-forwarded-for': '203.0.113.7, 198.51.100.9' } });
      expectError(spoofed, 403, 'ip_not_allowed');
      expect(await sessions(operator)).to.equal(0);
    });

    it('refuses when the right-most address is not on the list, even if the socket is', async () => {
      const socketOnly = await trusted.onboard({ ipAllowList: ['127.0.0.1'] });
      expectError(await socketOnly.launch({}, { headers: { 'x-forwarded-for': '127.0.0.1, 203.0.113.7' } }), 403, 'ip_not_allowed');
      expect(await sessions(socketOnly)).to.equal(0);
    });
  });

  describe('with TRUST_PROXY=true and TRUST_PROXY_HOPS=2 (D12)', () => {
    let twoHops: Harness;
    before(async () => {
      twoHops = await startHarness({ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '2' });
    });
    after(() => twoHops.close());

    // client -> CDN (appends the client) -> load balancer (appends the CDN) -> service
    const forwarded = { 'x-forwarded-for': '203.0.113.7, 198.51.100.9, 10.0.0.2' };

    it('judges the address two hops from the right', async () => {
      const operator = await twoHops.onboard({ ipAllowList: ['198.51.100.0/24'] });
      const response = await operator.launch({}, { headers: forwarded });
      expect(response.status, response.text).to.equal(200);
    });

    it('refuses an allowed address further left (client-chosen) or the nearest proxy', async () => {
      for (const list of [['203.0.113.0/24'], ['10.0.0.0/8']]) {
        const operator = await twoHops.onboard({ ipAllowList: list });
        expectError(await operator.launch({}, { headers: forwarded }), 403, 'ip_not_allowed');
        expect(await twoHops.svc.db.session.count({ where: { operatorId: operator.operatorId } })).to.equal(0);
      }
    });
  });

  describe('readiness when Redis goes away (D15)', () => {
    // The service reaches Redis through a TCP relay that the test can cut; startHarness needs
    // a Redis that answers at start, so Redis is taken away after the start.
    let relay: Server;
    const sockets = new Set<Socket>();
    let degraded: Harness;
    before(async () => {
      const target = new URL(TEST_REDIS_URL);
      relay = createServer((client) => {
        const upstream = createConnection(Number(target.port || 6379), target.hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => socket.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
      const relayUrl = new URL(TEST_REDIS_URL);
      relayUrl.hostname = '127.0.0.1';
      relayUrl.port = String((relay.address() as AddressInfo).port);
      degraded = await startHarness({ REDIS_URL: relayUrl.toString() });
    });
    after(async () => {
      await degraded.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    });

    it('answers 503 naming redis once Redis is unreachable, while /healthz stays 200', async () => {
      const before = await send(`${degraded.baseUrl}/readyz`, {});
      expect(before.status, before.text).to.equal(200);

      relay.close();
      for (const socket of sockets) socket.destroy();

      const response = await send(`${degraded.baseUrl}/readyz`, {});
      expect(response.status, response.text).to.equal(503);
      expect(response.body.checks).to.deep.equal({ postgres: 'ok', redis: 'failed' });
      expect(response.headers.get('strict-transport-security')).to.equal(HSTS_VALUE);
      const health = await send(`${degraded.baseUrl}/healthz`, {});
      expect(health.status).to.equal(200);
    });
  });
});
