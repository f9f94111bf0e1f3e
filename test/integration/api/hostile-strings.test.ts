import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import { errorBodies } from '../../../src/api/middleware/errors.js';
import { idempotency } from '../../../src/api/middleware/idempotency.js';
import type { ApiState } from '../../../src/api/state.js';
import { notFound } from '../../../src/shared/platform/errors.js';
import { startHttpServer } from '../../../src/shared/platform/http.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { send, type ApiResponse } from '../../support/signed-client.js';

// Strings no honest caller sends (NUL, a lone surrogate, far over any bound) in every field
// of every REST route: the answer is a D3 error (4xx, {error, message}), never a 5xx, and
// an error body never echoes what was sent (D3, D24). Storing an answer for idempotency
// (D17) never turns it into a 500.

const NUL = 'di\u0000ce';
const SURROGATE = 'di\ud800ce';
const OVERSIZED = 'o'.repeat(60 * 1024);
const HOSTILE: [string, string][] = [
  ['NUL', NUL],
  ['a lone surrogate', SURROGATE],
  ['60 KiB', OVERSIZED],
];
// the same in a URL: percent-encoded NUL, a surrogate's CESU-8 bytes, 4 KiB (twice in one
// URL stays under Node's 16 KiB header limit, beyond which Node itself answers 431)
const HOSTILE_IN_URL: [string, string][] = [
  ['NUL', 'di%00ce'],
  ['a lone surrogate', 'di%ED%A0%80ce'],
  ['4 KiB', 'u'.repeat(4 * 1024)],
];

// text that would give away a stack, a source location or SQL
function expectNoInternals(text: string): void {
  expect(text).not.to.match(/\bat \S+ \(|\\n\s+at |\.ts:\d+|\.[cm]?js:\d+|node_modules|Prisma|TypeError|RangeError/);
  expect(text).not.to.match(/\b(SELECT|INSERT INTO|UPDATE \S+ SET)\b/);
}

// every string anywhere in a parsed body
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((item) => strings(item, out));
  else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) out.push(key), strings(item, out);
  return out;
}

function expectContractError(res: ApiResponse, where: string, sent: string): void {
  expect(res.status, `${where}: ${res.text.slice(0, 300)}`).to.be.within(400, 499);
  // a 429 would hide the answer under test (each case runs under its own operator)
  expect(res.status, where).not.to.equal(429);
  expect(res.body, `${where}: ${res.status} ${res.text.slice(0, 200)}`).to.be.an('object').and.not.be.an('array');
  expect(res.body.error, where).to.be.a('string').and.not.equal('');
  expect(res.body.message, where).to.be.a('string').and.not.equal('');
  expectNoInternals(res.text);
  // no echo: neither the value, nor a NUL or lone surrogate from it, nor its bulk
  for (const text of strings(res.body)) {
    expect(text, where).not.to.include(sent);
    expect(/[\u0000]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text), `${where}: ${JSON.stringify(text)}`).to.equal(false);
    expect(text.length, where).to.be.below(1024);
  }
}

describe('hostile strings on every REST route (D3, D17, D24)', () => {
  let h: Harness;
  // a fresh operator (and so fresh rate-limit buckets, contract 8.1) for each few requests
  let operator: TestOperator;
  const fresh = async () => (operator = await h.onboard({ jurisdictionsBlocked: ['XX-BLOCKED'] }));
  before(async () => {
    h = await startHarness();
  });
  beforeEach(fresh);
  after(() => h.close());

  // the tests run one at a time: any wallet call or session row is one of theirs
  const walletCalls = () => h.wallet.requests.length;
  const sessions = () => h.svc.db.session.count();

  it('gameCode "di\\u0000ce" with a requestUuid: a 4xx in the D3 shape that does not echo it, and so is its retry', async () => {
    const before = { wallet: walletCalls(), sessions: await sessions() };
    const body = operator.sessionBody({ gameCode: NUL, requestUuid: randomUUID() });
    const t = Math.floor(Date.now() / 1000);
    for (const timestamp of [t, t + 1]) {
      const res = await operator.request('POST', '/v1/session', body, { timestamp });
      expectContractError(res, `attempt at ${timestamp - t}`, NUL);
      expect(res.text).not.to.include('di\\u0000ce');
    }
    expect(walletCalls()).to.equal(before.wallet);
    expect(await sessions()).to.equal(before.sessions);
  });

  it('refusals of well-formed values do not echo them either (unknown game, currency, jurisdiction)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ gameCode: 'roulette-ECHO-1' }, 'roulette-ECHO-1'],
      [{ currency: 'ECHOX' }, 'ECHOX'],
      [{ jurisdiction: 'XX-BLOCKED' }, 'XX-BLOCKED'],
    ];
    for (const [overrides, sent] of cases) {
      const res = await (await fresh()).launch({ ...overrides, requestUuid: randomUUID() });
      expectContractError(res, JSON.stringify(overrides), sent);
    }
  });

  describe('POST /v1/session: every field', () => {
    const FIELDS = ['operatorId', 'playerRef', 'gameCode', 'currency', 'lang', 'jurisdiction', 'mode', 'returnUrl', 'clientSeed', 'requestUuid', 'botChallengeToken'];
    for (const [label, value] of HOSTILE) {
      it(`${label} in each field and in rgLimits: 4xx, nothing created`, async () => {
        const before = { wallet: walletCalls(), sessions: await sessions() };
        const bodies: [string, (op: TestOperator) => Record<string, unknown>][] = [
          ...FIELDS.map((field): [string, (op: TestOperator) => Record<string, unknown>] => [field, (op) => op.sessionBody({ requestUuid: randomUUID(), [field]: value })]),
          ...FIELDS.map((field): [string, (op: TestOperator) => Record<string, unknown>] => [`${field} (no requestUuid)`, (op) => op.sessionBody({ [field]: value })]),
          ['rgLimits.dailyLossMicro', (op) => op.sessionBody({ rgLimits: { dailyLossMicro: value }, requestUuid: randomUUID() })],
          ['an unknown field', (op) => ({ ...op.sessionBody({ requestUuid: randomUUID() }), [value.slice(0, 100)]: value, gameCode: 'nope' })],
        ];
        for (const [field, body] of bodies) {
          const op = await fresh();
          expectContractError(await op.request('POST', '/v1/session', body(op)), field, value);
        }
        expect(walletCalls()).to.equal(before.wallet);
        expect(await sessions()).to.equal(before.sessions);
      });
    }
  });

  describe('POST /v1/session/{id}/terminate', () => {
    it('hostile reasons (with and without a requestUuid) are 4xx and leave the session active', async () => {
      const launched = await operator.launch();
      expect(launched.status, launched.text).to.equal(200);
      const path = `/v1/session/${launched.body.sessionId}/terminate`;
      for (const [label, value] of HOSTILE) {
        for (const body of [{ reason: value }, { reason: value, requestUuid: randomUUID() }, { reason: 'ok', requestUuid: value }]) {
          expectContractError(await operator.request('POST', path, body), `${label} ${Object.keys(body).join('+')}`, value);
        }
      }
      const row = await h.svc.db.session.findUniqueOrThrow({ where: { id: launched.body.sessionId } });
      expect(row.state).to.equal('ACTIVE');
    });

    it('hostile session ids in the path are 4xx', async () => {
      for (const [label, value] of HOSTILE_IN_URL) {
        const res = await operator.request('POST', `/v1/session/${value}/terminate`, { requestUuid: randomUUID() });
        expectContractError(res, label, decodeURIComponent(value.replace('%ED%A0%80', '')));
      }
    });
  });

  describe('the reads (D10) and the proof', () => {
    const READS = ['/v1/rounds/{v}', '/v1/rounds/{v}/proof', '/v1/rounds?cursor={v}', '/v1/rounds?from={v}', '/v1/rounds?to={v}', '/v1/rounds?limit={v}', '/v1/rounds?operatorId={v}', '/v1/reports/ggr?from={v}', '/v1/reports/ggr?operatorId={v}', '/v1/reports/wallet-calls?to={v}', '/v1/reports/wallet-calls?operatorId={v}', '/v1/rounds/{v}?operatorId={v}'];
    for (const [label, value] of HOSTILE_IN_URL) {
      it(`${label} in each path segment and query parameter: 4xx`, async () => {
        for (const template of READS) {
          const path = template.replaceAll('{v}', value);
          expectContractError(await operator.request('GET', path), path.slice(0, 80), decodeURIComponent(value.replace('%ED%A0%80', '')));
        }
      });
    }

    it('an unknown route with a hostile path is 404 and does not echo the path', async () => {
      for (const [label, value] of HOSTILE_IN_URL) {
        const res = await operator.request('GET', `/v1/${value}`);
        expectContractError(res, label, value.slice(0, 20));
        expect(res.status).to.equal(404);
        const open = await send(`${h.baseUrl}/nowhere-${value}`, { method: 'GET' });
        expectContractError(open, `open ${label}`, value.slice(0, 20));
      }
    });
  });

  it('a badly signed request echoes its requestUuid in the 401 only when it is a UUID (D3)', async () => {
    for (const [label, value] of HOSTILE) {
      const res = await operator.launch({ requestUuid: value }, { signature: 'bm90IGEgc2lnbmF0dXJl' });
      expectContractError(res, label, value);
      expect(res.body).to.include({ error: 'invalid_signature', requestUuid: '' });
    }
  });

  it('hostile key ids are 401 unknown_key (a header cannot carry NUL; latin-1 and 8 KiB can)', async () => {
    for (const kid of ['\u00ff\u00fe\u00e9', 'k'.repeat(8 * 1024)]) {
      const res = await send(`${h.baseUrl}/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-rgs-key-id': kid, 'x-rgs-timestamp': String(Math.floor(Date.now() / 1000)), 'x-rgs-signature': 'AAAA' },
        body: JSON.stringify(operator.sessionBody()),
      });
      expectContractError(res, kid.slice(0, 10), kid);
      expect(res.body.error).to.equal('unknown_key');
    }
  });

  it('an answer the store cannot hold (here a NUL in an error message) is still answered, not turned into a 500 (D17)', async () => {
    // a handler of the shape every idempotent route has, whose answer jsonb cannot store
    const app = new Koa<ApiState>();
    const router = new Router<ApiState>();
    app.use(errorBodies(h.svc.logger));
    app.use(async (ctx, next) => {
      ctx.state.operator = { id: operator.operatorId } as ApiState['operator'];
      ctx.state.rawBody = Buffer.from('{}');
      ctx.state.body = { requestUuid: ctx.get('x-request-uuid') };
      await next();
    });
    let runs = 0;
    router.post('/v1/echo', idempotency(h.svc, 10_000), () => {
      runs++;
      throw notFound('not_found', `no such thing as ${NUL}`);
    });
    app.use(router.routes());
    const http = await startHttpServer(0, app.callback());
    try {
      const requestUuid = randomUUID();
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await send(`${http.url}/v1/echo`, { method: 'POST', headers: { 'x-request-uuid': requestUuid } });
        expect(res.status, res.text).to.equal(404);
        expect(res.body.error).to.equal('not_found');
      }
      // not stored, so a retry runs again; and no claim is left behind
      expect(runs).to.equal(2);
      expect(await h.svc.db.idempotencyEntry.count({ where: { operatorId: operator.operatorId, requestUuid } })).to.equal(0);
    } finally {
      await http.close();
    }
  });
});
