import { expect } from 'chai';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { send, signedRequest, type ApiKey, type ApiResponse, type SignedRequestOptions } from '../../support/signed-client.js';
import { SIGNATURE_HEADERS, sign } from '../../../src/shared/wallet/signer.js';

// Every malformed, oversized, unsigned, stale, replayed or wrongly-typed POST /v1/session gets
// the D3 status and body and changes nothing (no session row, no wallet call); no input makes
// the process answer 500. Contract 2.2, 4.1, 5.1-5.2, 7.2; DECISIONS D3, D9, D17.

const PATH = '/v1/session';
const MAX_BODY = 64 * 1024;
const INT64_MAX = 9223372036854775807n;

type RsStatus = 'RS_ERROR_WRONG_SYNTAX' | 'RS_ERROR_WRONG_TYPES';
type Sent = { body?: unknown; raw?: string | Buffer; options?: SignedRequestOptions; key?: ApiKey };
type Case = {
  name: string;
  send: (op: TestOperator) => Sent;
  status: number;
  error: string;
  rs?: RsStatus; // the D3 `status` of a 400
  paths?: string[]; // paths the 400 details must name
  requestUuid?: string; // the 401 echo
  operator?: Parameters<Harness['onboard']>[0];
};

const nowSeconds = () => Math.floor(Date.now() / 1000);

// A response body must never carry a stack trace, a source location or SQL (D3).
function expectNoInternals(text: string): void {
  expect(text).not.to.match(/\bat \S+ \(/);
  expect(text).not.to.match(/\bat (file:|node:|\/)/);
  expect(text).not.to.match(/\\n\s+at /);
  expect(text).not.to.match(/\.ts:\d+/);
  expect(text).not.to.match(/\.[cm]?js:\d+/);
  expect(text).not.to.include('node_modules');
  expect(text).not.to.match(/\b(SELECT|INSERT INTO|UPDATE \S+ SET)\b/);
  expect(text).not.to.match(/Prisma|TypeError|RangeError|SyntaxError/);
}

// D3: every non-2xx JSON body has `error` and `message`; 400s add `status` and `details`.
function expectErrorBody(res: ApiResponse, status: number, error: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.headers.get('content-type') ?? '', res.text).to.match(/^application\/json/);
  expect(res.body, res.text).to.be.an('object').and.not.be.an('array');
  expect(res.body.error, res.text).to.equal(error);
  expect(res.body.message, res.text).to.be.a('string').and.not.equal('');
  expectNoInternals(res.text);
}

function expect400(res: ApiResponse, rs: RsStatus, paths: string[] = []): void {
  expectErrorBody(res, 400, 'invalid_request');
  expect(res.body.status, res.text).to.equal(rs);
  expect(res.body.details, res.text).to.be.an('array');
  for (const detail of res.body.details as unknown[]) {
    expect(detail, res.text).to.be.an('object').that.has.all.keys('path', 'keyword', 'message');
    const { path, keyword, message } = detail as Record<string, unknown>;
    expect(path, res.text).to.be.a('string').that.matches(/^\//);
    expect(keyword, res.text).to.be.a('string').and.not.equal('');
    expect(message, res.text).to.be.a('string').and.not.equal('');
  }
  const named = (res.body.details as { path: string }[]).map((detail) => detail.path);
  expect(named, res.text).to.include.members(paths);
}

// String values a 400 must not echo (D3: paths only, no values).
function stringLeaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((item) => stringLeaves(item, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((item) => stringLeaves(item, out));
  return out;
}

function rg(op: TestOperator, limits: Record<string, unknown>) {
  return { body: op.sessionBody({ rgLimits: limits }) };
}

function without(op: TestOperator, field: string) {
  const body = op.sessionBody();
  delete body[field];
  return { body };
}

const REQUIRED = ['operatorId', 'playerRef', 'gameCode', 'currency', 'lang', 'jurisdiction'];

const CASES: Case[] = [
  // unparseable (D3: RS_ERROR_WRONG_SYNTAX)
  { name: 'a lone "{"', send: () => ({ raw: '{' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_SYNTAX' },
  { name: '"nul"', send: () => ({ raw: 'nul' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_SYNTAX' },
  {
    name: 'valid JSON followed by garbage',
    send: (op) => ({ raw: `${JSON.stringify(op.sessionBody())} trailing` }),
    status: 400,
    error: 'invalid_request',
    rs: 'RS_ERROR_WRONG_SYNTAX',
  },
  {
    name: 'two JSON documents',
    send: (op) => ({ raw: `${JSON.stringify(op.sessionBody())}${JSON.stringify(op.sessionBody())}` }),
    status: 400,
    error: 'invalid_request',
    rs: 'RS_ERROR_WRONG_SYNTAX',
  },
  { name: 'an empty body', send: () => ({ raw: '' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_SYNTAX' },
  { name: 'only whitespace', send: () => ({ raw: ' \n\t ' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_SYNTAX' },
  {
    name: 'bytes that are not UTF-8',
    send: () => ({ raw: Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x80]) }),
    status: 400,
    error: 'invalid_request',
    rs: 'RS_ERROR_WRONG_SYNTAX',
  },
  {
    name: 'single-quoted pseudo-JSON',
    send: () => ({ raw: "{'operatorId':'x'}" }),
    status: 400,
    error: 'invalid_request',
    rs: 'RS_ERROR_WRONG_SYNTAX',
  },

  // JSON, but not an object (RS_ERROR_WRONG_TYPES)
  { name: 'an empty JSON array', send: () => ({ raw: '[]' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_TYPES', paths: ['/'] },
  {
    name: 'an array holding a valid body',
    send: (op) => ({ body: [op.sessionBody()] }),
    status: 400,
    error: 'invalid_request',
    rs: 'RS_ERROR_WRONG_TYPES',
    paths: ['/'],
  },
  { name: 'a JSON string', send: () => ({ raw: '"session"' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_TYPES', paths: ['/'] },
  { name: 'a JSON number', send: () => ({ raw: '42' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_TYPES', paths: ['/'] },
  { name: 'JSON null', send: () => ({ raw: 'null' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_TYPES', paths: ['/'] },
  { name: 'JSON true', send: () => ({ raw: 'true' }), status: 400, error: 'invalid_request', rs: 'RS_ERROR_WRONG_TYPES', paths: ['/'] },

  // each required field missing (RS_ERROR_WRONG_SYNTAX, the path named)
  ...REQUIRED.map(
    (field): Case => ({
      name: `${field} missing`,
      send: (op) => without(op, field),
      status: 400,
      error: 'invalid_request',
      rs: 'RS_ERROR_WRONG_SYNTAX',
      paths: [`/${field}`],
    }),
  ),
  {
    name: 'an empty object (every required field named)',
    send: () => ({ body: {} }),
    status: 400,
    error: 'invalid_request',
    rs: 'RS_ERROR_WRONG_SYNTAX',
    paths: REQUIRED.map((field) => `/${field}`),
  },
  {
    name: 'a field missing and another of the wrong type (missing wins)',
    send: (op) => ({ body: { ...without(op, 'lang').body, currency: 'eur' } }),
    status: 400,
    error: 'invalid_request',
    rs: 'RS_ERROR_WRONG_SYNTAX',
    paths: ['/lang'],
  },

  // wrong types, patterns and bounds (RS_ERROR_WRONG_TYPES)
  ...(
    [
      ['playerRef a number', { playerRef: 123456 }, '/playerRef'],
      ['playerRef null', { playerRef: null }, '/playerRef'],
      ['playerRef empty', { playerRef: '' }, '/playerRef'],
      ['playerRef of 129 characters', { playerRef: 'p'.repeat(129) }, '/playerRef'],
      ['playerRef of 129 emoji', { playerRef: '\u{1F600}'.repeat(129) }, '/playerRef'],
      ['playerRef an e-mail address', { playerRef: 'a@b.co' }, '/playerRef'],
      ['playerRef another e-mail address', { playerRef: 'jane.doe@casino.example' }, '/playerRef'],
      ['playerRef a phone number', { playerRef: '+44 20 7946 0958' }, '/playerRef'],
      ['playerRef a bare phone number', { playerRef: '(020) 7946-0958' }, '/playerRef'],
      ['playerRef with a NUL character', { playerRef: 'player\u0000zero' }, '/playerRef'],
      ['playerRef with a lone surrogate', { playerRef: 'player\ud800half' }, '/playerRef'],
      ['operatorId a number', { operatorId: 7 }, '/operatorId'],
      ['gameCode of 65 characters', { gameCode: 'g'.repeat(65) }, '/gameCode'],
      ['gameCode an object', { gameCode: { code: 'dice' } }, '/gameCode'],
      ['currency lower-case "eur"', { currency: 'eur' }, '/currency'],
      ['currency "E"', { currency: 'E' }, '/currency'],
      ['currency of 11 characters', { currency: 'EURXXXXXXXX' }, '/currency'],
      ['currency an array', { currency: ['EUR'] }, '/currency'],
      ['lang "e"', { lang: 'e' }, '/lang'],
      ['lang of 36 characters', { lang: `en${'-abcdefgh'.repeat(3)}-abcdef` }, '/lang'],
      ['jurisdiction of 17 characters', { jurisdiction: 'MTXXXXXXXXXXXXXXX' }, '/jurisdiction'],
      ['mode "live"', { mode: 'live' }, '/mode'],
      ['mode null', { mode: null }, '/mode'],
      ['returnUrl "ftp://x"', { returnUrl: 'ftp://files.example/x' }, '/returnUrl'],
      ['returnUrl "javascript:alert(1)"', { returnUrl: 'javascript:alert(1)' }, '/returnUrl'],
      ['returnUrl of 2049 characters', { returnUrl: `https://casino.example/${'r'.repeat(2049 - 23)}` }, '/returnUrl'],
      ['returnUrl with a space', { returnUrl: 'https://casino.example/a b' }, '/returnUrl'],
      ['clientSeed with ":"', { clientSeed: 'seed:with-colon' }, '/clientSeed'],
      ['clientSeed of 65 characters', { clientSeed: 's'.repeat(65) }, '/clientSeed'],
      ['clientSeed with a non-ASCII character', { clientSeed: 'seed-é-accent' }, '/clientSeed'],
      ['clientSeed empty', { clientSeed: '' }, '/clientSeed'],
      ['clientSeed with a newline', { clientSeed: 'seed\nline' }, '/clientSeed'],
      ['requestUuid "not-a-uuid"', { requestUuid: 'not-a-uuid' }, '/requestUuid'],
      ['requestUuid a number', { requestUuid: 12345 }, '/requestUuid'],
      ['rgLimits an array', { rgLimits: [] }, '/rgLimits'],
      ['rgLimits a string', { rgLimits: 'strict' }, '/rgLimits'],
    ] as [string, Record<string, unknown>, string][]
  ).map(
    ([name, overrides, path]): Case => ({
      name,
      send: (op) => ({ body: op.sessionBody(overrides) }),
      status: 400,
      error: 'invalid_request',
      rs: 'RS_ERROR_WRONG_TYPES',
      paths: [path],
    }),
  ),
  ...(
    [
      ['sessionTimeSeconds 59', { sessionTimeSeconds: 59 }, 'sessionTimeSeconds'],
      ['sessionTimeSeconds 3601', { sessionTimeSeconds: 3601 }, 'sessionTimeSeconds'],
      ['sessionTimeSeconds 60.5', { sessionTimeSeconds: 60.5 }, 'sessionTimeSeconds'],
      ['sessionTimeSeconds "600"', { sessionTimeSeconds: '600' }, 'sessionTimeSeconds'],
      ['sessionTimeSeconds null', { sessionTimeSeconds: null }, 'sessionTimeSeconds'],
      ['dailyLossMicro "100.00"', { dailyLossMicro: '100.00' }, 'dailyLossMicro'],
      ['dailyLossMicro the number 100', { dailyLossMicro: 100 }, 'dailyLossMicro'],
      ['dailyLossMicro of 21 digits', { dailyLossMicro: '1'.repeat(21) }, 'dailyLossMicro'],
      ['dailyLossMicro "-5"', { dailyLossMicro: '-5' }, 'dailyLossMicro'],
      ['dailyLossMicro null', { dailyLossMicro: null }, 'dailyLossMicro'],
      ['dailyLossMicro above the 64-bit range', { dailyLossMicro: (INT64_MAX + 1n).toString() }, 'dailyLossMicro'],
      ['dailyLossMicro of 20 nines', { dailyLossMicro: '9'.repeat(20) }, 'dailyLossMicro'],
      ['dailyWagerMicro "1e6"', { dailyWagerMicro: '1e6' }, 'dailyWagerMicro'],
      ['dailyWagerMicro null', { dailyWagerMicro: null }, 'dailyWagerMicro'],
      ['dailyWagerMicro above the 64-bit range', { dailyWagerMicro: (INT64_MAX + 1n).toString() }, 'dailyWagerMicro'],
    ] as [string, Record<string, unknown>, string][]
  ).map(
    ([name, limits, field]): Case => ({
      name: `rgLimits.${name}`,
      send: (op) => rg(op, limits),
      status: 400,
      error: 'invalid_request',
      rs: 'RS_ERROR_WRONG_TYPES',
      paths: [`/rgLimits/${field}`],
    }),
  ),

  // oversized (D9: 413)
  {
    name: 'a body of 64 KiB + 1 byte',
    send: (op) => ({ raw: padTo(op.sessionBody(), MAX_BODY + 1) }),
    status: 413,
    error: 'payload_too_large',
  },
  {
    name: 'a body of 1 MiB',
    send: (op) => ({ raw: padTo(op.sessionBody(), 1024 * 1024) }),
    status: 413,
    error: 'payload_too_large',
  },

  // unsigned, wrongly signed, stale (D3: 401 with the wallet-response shape)
  { name: 'no key id header', send: (op) => ({ body: op.sessionBody(), options: { omit: ['keyId'] } }), status: 401, error: 'invalid_signature' },
  {
    name: 'no timestamp header',
    send: (op) => ({ body: op.sessionBody(), options: { omit: ['timestamp'] } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'no signature header',
    send: (op) => ({ body: op.sessionBody(), options: { omit: ['signature'] } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'no signing headers at all',
    send: (op) => ({ body: op.sessionBody(), options: { omit: ['keyId', 'timestamp', 'signature'] } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'a corrupted signature',
    send: (op) => ({ body: op.sessionBody(), options: { signature: 'AAAA' + 'A'.repeat(40) } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'a signature over another body',
    send: (op) => ({ body: op.sessionBody(), options: { signBody: JSON.stringify(op.sessionBody()) } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'a signature over another path',
    send: (op) => ({ body: op.sessionBody(), options: { signPath: '/v1/session/' } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'a signature for another method',
    send: (op) => ({ body: op.sessionBody(), options: { signMethod: 'PUT' } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'a signature with another secret',
    send: (op) => ({ body: op.sessionBody(), key: { kid: op.apiKeyId, secret: 'f'.repeat(128) } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'a timestamp that is not an integer',
    send: (op) => ({ body: op.sessionBody(), options: { timestamp: `${nowSeconds()}.5` } }),
    status: 401,
    error: 'invalid_signature',
  },
  {
    name: 'a timestamp in milliseconds',
    send: (op) => ({ body: op.sessionBody(), options: { timestamp: Date.now() } }),
    status: 401,
    error: 'stale_timestamp',
  },
  {
    name: 'a timestamp 2 minutes old',
    send: (op) => ({ body: op.sessionBody(), options: { timestamp: nowSeconds() - 120 } }),
    status: 401,
    error: 'stale_timestamp',
  },
  {
    name: 'a timestamp 2 minutes ahead',
    send: (op) => ({ body: op.sessionBody(), options: { timestamp: nowSeconds() + 120 } }),
    status: 401,
    error: 'stale_timestamp',
  },
  {
    name: 'an unknown key id',
    send: (op) => ({ body: op.sessionBody(), key: { kid: 'ak_000000000000000000000000', secret: op.apiSecret } }),
    status: 401,
    error: 'unknown_key',
  },
  {
    name: 'the wallet credential used as an API key',
    send: (op) => ({ body: op.sessionBody(), key: { kid: op.walletKeyId, secret: op.walletSignatureSecret } }),
    status: 401,
    error: 'unknown_key',
  },
  {
    name: 'a bad signature on a body with a requestUuid (echoed in the 401)',
    send: (op) => ({
      body: op.sessionBody({ requestUuid: '2b0c8f9e-1d3a-4c5b-9e7f-6a8b0c1d2e3f' }),
      options: { signature: 'bm90IGEgc2lnbmF0dXJl' },
    }),
    status: 401,
    error: 'invalid_signature',
    requestUuid: '2b0c8f9e-1d3a-4c5b-9e7f-6a8b0c1d2e3f',
  },

  // well-formed, but not this operator's or not allowed (D3 403, D7 404)
  {
    name: 'operatorId of another operator',
    send: (op) => ({ body: op.sessionBody({ operatorId: `${op.operatorId}-other` }) }),
    status: 403,
    error: 'operator_mismatch',
  },
  {
    name: 'a caller IP not on the allow-list (checked before the signature)',
    operator: { ipAllowList: ['203.0.113.7'] },
    send: (op) => ({ body: op.sessionBody(), options: { signature: 'garbage' } }),
    status: 403,
    error: 'ip_not_allowed',
  },
  {
    name: 'an unknown gameCode',
    send: (op) => ({ body: op.sessionBody({ gameCode: 'roulette' }) }),
    status: 422,
    error: 'game_not_available',
  },
];

// JSON of the body with an unknown padding field, exactly `size` bytes long.
function padTo(body: Record<string, unknown>, size: number): string {
  const empty = JSON.stringify({ ...body, padding: '' });
  const text = JSON.stringify({ ...body, padding: 'x'.repeat(size - Buffer.byteLength(empty)) });
  expect(Buffer.byteLength(text)).to.equal(size);
  return text;
}

describe('bad input on POST /v1/session (D3, D9)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const sessionCount = (op: TestOperator) => h.svc.db.session.count({ where: { operatorId: op.operatorId } });
  const walletCalls = (op: TestOperator) =>
    h.wallet.requests.filter((request) => (request.body as { operatorId?: unknown } | undefined)?.operatorId === op.operatorId).length;

  const post = (op: TestOperator, sent: Sent) =>
    signedRequest(h.baseUrl, sent.key ?? op.key, 'POST', PATH, sent.raw === undefined ? sent.body : undefined, {
      ...sent.options,
      ...(sent.raw === undefined ? {} : { rawBody: sent.raw }),
    });

  describe('table of cases: D3 status and body, nothing changed', () => {
    for (const c of CASES) {
      it(`${c.name} -> ${c.status} ${c.error}${c.rs ? ` ${c.rs}` : ''}`, async () => {
        const op = await h.onboard(c.operator);
        const sent = c.send(op);
        const res = await post(op, sent);

        if (c.status === 400) {
          expect400(res, c.rs!, c.paths);
          // D3: details carry paths, never the values sent
          for (const value of stringLeaves(sent.body)) {
            if (value.length >= 3) expect(res.text, `echoes ${JSON.stringify(value.slice(0, 40))}`).not.to.include(value);
          }
        } else {
          expectErrorBody(res, c.status, c.error);
        }
        if (c.status === 401) {
          // D3: the wallet-response shape, requestUuid from the body or ""
          expect(res.body.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
          expect(res.body.requestUuid).to.equal(c.requestUuid ?? '');
        }
        const playerRef = (sent.body as { playerRef?: unknown } | undefined)?.playerRef;
        if (typeof playerRef === 'string' && playerRef.length >= 3) expect(res.text).not.to.include(playerRef);

        expect(await sessionCount(op), 'no session row').to.equal(0);
        expect(walletCalls(op), 'no wallet call').to.equal(0);
        expect(await h.svc.db.idempotencyEntry.count({ where: { operatorId: op.operatorId, state: 'IN_PROGRESS' } })).to.equal(0);
      });
    }
  });

  it('a chunked body over 64 KiB (no Content-Length) is 413 too', async () => {
    const op = await h.onboard();
    const text = padTo(op.sessionBody(), MAX_BODY + 4096);
    const timestamp = String(nowSeconds());
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 8192) controller.enqueue(bytes.slice(at, at + 8192));
        controller.close();
      },
    });
    const res = await send(`${h.baseUrl}${PATH}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [SIGNATURE_HEADERS.keyId]: op.apiKeyId,
        [SIGNATURE_HEADERS.timestamp]: timestamp,
        [SIGNATURE_HEADERS.signature]: sign(op.apiSecret, 'POST', PATH, timestamp, text),
      },
      body,
      duplex: 'half',
    } as RequestInit);
    expectErrorBody(res, 413, 'payload_too_large');
    expect(await sessionCount(op)).to.equal(0);
    expect(walletCalls(op)).to.equal(0);
  });

  it('a body of exactly 64 KiB is accepted; its unknown field is ignored', async () => {
    const op = await h.onboard();
    const raw = padTo(op.sessionBody(), MAX_BODY);
    const res = await post(op, { raw });
    expect(res.status, res.text).to.equal(200);
    expect(await sessionCount(op)).to.equal(1);
  });

  it('unknown fields are ignored (200) and never echoed, not even inside the token or to the wallet', async () => {
    const op = await h.onboard();
    const body = op.sessionBody({
      extraMarkerField: 'EXTRA-MARKER-5f3a',
      constructor: 'CTOR-MARKER-5f3a',
      hasOwnProperty: 'HOP-MARKER-5f3a',
      nested: { deep: ['NESTED-MARKER-5f3a'] },
      rgLimits: { sessionTimeSeconds: 600, bogusLimit: 'BOGUS-MARKER-5f3a' },
    });
    const res = await post(op, { body });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.have.all.keys('sessionId', 'sessionToken', 'launchUrl', 'expiresAt', 'serverSeedHash', 'sandbox');
    const token = res.body.sessionToken as string;
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
    const seen = `${res.text}\n${JSON.stringify(claims)}\n${h.wallet.requests.map((request) => request.rawBody).join('\n')}`;
    for (const marker of ['MARKER-5f3a', 'extraMarkerField', 'bogusLimit', 'nested']) expect(seen).not.to.include(marker);
    expect(claims.rgLimits.sessionTimeSeconds).to.equal(600);
    const row = await h.svc.db.session.findUniqueOrThrow({ where: { id: res.body.sessionId } });
    expect(row.sessionTimeSeconds).to.equal(600);
    expect(walletCalls(op)).to.equal(1);
  });

  it('accepts every D9 upper bound (the refusals above are not off by one)', async () => {
    const op = await h.onboard({ currencies: ['EUR', 'ABCDEFGHIJ', 'BTC'] });
    const bodies = [
      op.sessionBody({
        playerRef: 'p'.repeat(128),
        currency: 'ABCDEFGHIJ',
        lang: `en${'-abcdefgh'.repeat(3)}-abcde`,
        jurisdiction: 'J'.repeat(16),
        returnUrl: `https://casino.example/${'r'.repeat(2048 - 23)}`,
        clientSeed: '~'.repeat(64),
        rgLimits: { sessionTimeSeconds: 3600, dailyLossMicro: INT64_MAX.toString(), dailyWagerMicro: '0' },
        requestUuid: 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D',
      }),
      op.sessionBody({ playerRef: 'p', currency: 'BTC', lang: 'en', jurisdiction: 'J', clientSeed: ' ', rgLimits: { sessionTimeSeconds: 60 } }),
      // D9 counts characters: 128 emoji are 128 characters (256 UTF-16 code units)
      op.sessionBody({ playerRef: '\u{1F600}'.repeat(128), gameCode: 'dice' }),
    ];
    expect((bodies[0]!.lang as string).length).to.equal(35);
    expect((bodies[0]!.returnUrl as string).length).to.equal(2048);
    for (const body of bodies) {
      const res = await post(op, { body });
      expect(res.status, res.text).to.equal(200);
    }
    expect(await sessionCount(op)).to.equal(3);
    expect(h.wallet.violations, 'the wallet accepted every balance call').to.deep.equal([]);
  });

  it('a replayed signed request is 401 replayed_signature and creates nothing more (D17)', async () => {
    const op = await h.onboard();
    const body = op.sessionBody();
    const timestamp = nowSeconds();
    const first = await post(op, { body, options: { timestamp } });
    expect(first.status, first.text).to.equal(200);
    const replay = await post(op, { body, options: { timestamp } });
    expectErrorBody(replay, 401, 'replayed_signature');
    expect(replay.body.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
    expect(await sessionCount(op)).to.equal(1);
    expect(walletCalls(op)).to.equal(1);
  });

  describe('randomized requests', () => {
    const SEED = 0x5eed_2024;
    it(`~300 random requests: never 5xx, D3 bodies, a 200 only for a valid body (seed ${SEED})`, async function () {
      this.timeout(60_000);
      const g = new Gen(SEED);
      const stats = { total: 0, byStatus: new Map<number, number>() };
      const seenTriples = new Set<string>();
      let op = await h.onboard();
      let predicted = 0; // answers the oracle could predict exactly
      let ok = 0;
      let okReal = 0;
      const operators: { op: TestOperator; ok: number; okReal: number }[] = [];
      const flush = () => operators.push({ op, ok, okReal });

      for (let i = 0; i < 300; i++) {
        if (i > 0 && i % 8 === 0) {
          flush();
          op = await h.onboard();
          ok = 0;
          okReal = 0;
        }
        const request = generateRequest(g, op, i);
        const bytes = typeof request.raw === 'string' ? Buffer.from(request.raw, 'utf8') : request.raw;
        const key = request.key ?? op.key;
        const timestamp = String(request.options.timestamp ?? nowSeconds());
        let signature = request.options.signature ?? sign(key.secret, 'POST', PATH, timestamp, request.options.signBody ?? bytes);
        if (request.corrupt) signature = `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
        const options: SignedRequestOptions = { ...request.options, rawBody: bytes, timestamp, signature };
        const res = await signedRequest(h.baseUrl, key, 'POST', PATH, undefined, options);
        const where = `request #${i} (${request.description}): ${bytes.toString('utf8').slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;

        stats.total++;
        stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
        expect(res.status, where).to.be.below(500);
        expect([200, 400, 401, 403, 404, 409, 413, 422, 429], where).to.include(res.status);
        if (res.status !== 200) {
          expect(res.body, where).to.be.an('object').and.not.be.an('array');
          expect(res.body.error, where).to.be.a('string').and.not.equal('');
          expect(res.body.message, where).to.be.a('string');
          expectNoInternals(res.text);
        }
        if (res.status === 400) {
          expect(['RS_ERROR_WRONG_SYNTAX', 'RS_ERROR_WRONG_TYPES'], where).to.include(res.body.status);
          expect400(res, res.body.status, []);
        }

        // the oracle: what an independent reading of 2.2 / D3 / D9 expects
        const triple = `${key.kid}|${timestamp}|${signature}`;
        const expected = expectedOutcome(bytes, request, op, seenTriples.has(triple));
        if (request.signatureIntact && bytes.length <= MAX_BODY) seenTriples.add(triple);
        if (expected.status !== undefined) predicted++;
        if (expected.status === 200) {
          expect(res.status, where).to.equal(200);
        } else if (expected.status !== undefined) {
          expect(res.status, where).to.equal(expected.status);
          if (expected.error) expect(res.body.error, where).to.equal(expected.error);
          if (expected.rs) expect(res.body.status, where).to.equal(expected.rs);
        }
        if (res.status === 200) {
          expect(expected.valid, `a 200 for a body the oracle does not accept: ${where}`).not.to.equal(false);
          ok++;
          if ((JSON.parse(bytes.toString('utf8')) as { mode?: string }).mode !== 'demo') okReal++;
        }
      }
      flush();

      for (const entry of operators) {
        expect(await sessionCount(entry.op), `sessions of ${entry.op.operatorId}`).to.equal(entry.ok);
        expect(walletCalls(entry.op), `wallet calls of ${entry.op.operatorId}`).to.equal(entry.okReal);
      }
      // nothing the service forwarded was refused by the (strict) wallet
      expect(h.wallet.violations).to.deep.equal([]);
      // the oracle is not vacuous, and the generator covers the interesting outcomes
      expect(predicted, 'requests whose answer was predicted exactly').to.be.at.least(stats.total - 10);
      for (const status of [200, 400, 401, 403, 413, 422]) {
        expect(stats.byStatus.get(status) ?? 0, `responses with ${status}: ${JSON.stringify([...stats.byStatus])}`).to.be.above(0);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------
// A tiny seeded generator (mulberry32) and an independent oracle.

class Gen {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  hex(n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += '0123456789abcdef'[this.int(16)];
    return out;
  }
  uuid(): string {
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${this.pick(['8', '9', 'a', 'b'])}${this.hex(3)}-${this.hex(12)}`;
  }
}

const VALID_URL = 'https://casino.example/lobby?from=game';
const CODE_POINTS = [0x0, 0x1f, 0x7f, 0x20, 0x3a, 0x40, 0x2b, 0xe9, 0x202e, 0xfeff, 0xd800, 0xdfff, 0x1f600, 0x4e2d, 0x41, 0x7a, 0x31];

function randomString(g: Gen): string {
  switch (g.int(6)) {
    case 0: {
      let out = '';
      for (let i = 0, n = 1 + g.int(20); i < n; i++) out += String.fromCharCode(0x20 + g.int(95));
      return out;
    }
    case 1:
      return g.pick(['x', 'EUR', 'P', '\u{1F600}', '\u00e9']).repeat(g.pick([2, 3, 10, 11, 16, 17, 35, 36, 63, 64, 65, 127, 128, 129, 2048, 2049, 5000]));
    case 2: {
      let out = '';
      for (let i = 0, n = 1 + g.int(12); i < n; i++) out += String.fromCodePoint(g.pick(CODE_POINTS));
      return out;
    }
    case 3:
      return g.pick(['NaN', 'Infinity', '-Infinity', '1e309', '-0', '0x10', '100.00', '-5', '0', '600', '60.5', '12345678901234567890', '123456789012345678901', '9223372036854775807', '9223372036854775808']);
    case 4:
      return g.pick(['EUR', 'USD', 'eur', 'dice', 'crash', 'en', 'en-GB', 'e', 'MT', 'real', 'demo', 'live', VALID_URL, 'ftp://x', 'javascript:alert(1)', 'a@b.co', '+44 20 7946 0958', 'seed:1', g.uuid()]);
    default:
      return '';
  }
}

function randomNumber(g: Gen): number {
  return g.pick([0, -1, 1, 59, 60, 600, 3600, 3601, 60.5, 1e308, -1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, 1e-7, g.int(1e6), -g.int(1e6)]);
}

function randomValue(g: Gen, depth = 0): unknown {
  switch (g.int(depth > 2 ? 4 : 7)) {
    case 0:
      return randomString(g);
    case 1:
      return randomNumber(g);
    case 2:
      return g.chance(0.5);
    case 3:
      return null;
    case 4: {
      const out: Record<string, unknown> = {};
      for (let i = 0, n = g.int(4); i < n; i++) out[g.pick([...FIELDS, 'x', 'dailyLossMicro', 'sessionTimeSeconds'])] = randomValue(g, depth + 1);
      return out;
    }
    case 5:
      return Array.from({ length: g.int(4) }, () => randomValue(g, depth + 1));
    default: {
      // deep nesting
      let value: unknown = randomString(g);
      for (let i = 0, n = 10 + g.int(300); i < n; i++) value = g.chance(0.5) ? [value] : { a: value };
      return value;
    }
  }
}

const FIELDS = [
  'operatorId',
  'playerRef',
  'gameCode',
  'currency',
  'lang',
  'jurisdiction',
  'mode',
  'returnUrl',
  'clientSeed',
  'rgLimits',
  'requestUuid',
  'botChallengeToken',
];
const RG_FIELDS = ['dailyLossMicro', 'dailyWagerMicro', 'sessionTimeSeconds'];

type HeaderProblem = 'invalid_signature' | 'stale_timestamp' | 'unknown_key' | undefined;
type Generated = {
  description: string;
  raw: string | Buffer;
  options: SignedRequestOptions;
  key?: ApiKey;
  signatureIntact: boolean;
  headerProblem: HeaderProblem;
  corrupt: boolean; // flip the first character of the correct signature
};

function generateRequest(g: Gen, op: TestOperator, index: number): Generated {
  let raw: string | Buffer;
  let description: string;
  const roll = g.next();
  if (roll < 0.12) {
    // raw bytes
    const valid = JSON.stringify(validBody(g, op, index));
    switch (g.int(3)) {
      case 0:
        raw = Buffer.from(Array.from({ length: g.int(120) }, () => g.int(256)));
        description = 'random bytes';
        break;
      case 1:
        raw = valid.slice(0, g.int(valid.length));
        description = 'truncated JSON';
        break;
      default: {
        const at = g.int(valid.length);
        raw = Buffer.concat([Buffer.from(valid.slice(0, at)), Buffer.from([g.int(256)]), Buffer.from(valid.slice(at))]);
        description = 'JSON with a byte inserted';
      }
    }
  } else if (roll < 0.16) {
    raw = JSON.stringify(randomValue(g));
    description = 'a random JSON value';
  } else if (roll < 0.18) {
    raw = JSON.stringify(validBody(g, op, index)) + 'x'.repeat(MAX_BODY);
    description = 'an oversized body';
  } else {
    const body = validBody(g, op, index);
    const mutations: string[] = [];
    for (let m = 0, n = g.pick([0, 0, 1, 1, 1, 2, 2, 3]); m < n; m++) mutations.push(mutate(g, body));
    raw = JSON.stringify(body);
    description = mutations.length ? mutations.join(', ') : 'valid';
  }

  const options: SignedRequestOptions = {};
  let key: ApiKey | undefined;
  let headerProblem: HeaderProblem;
  let signatureIntact = true;
  let corrupt = false;
  if (g.chance(0.2)) {
    const kind = g.pick(['omit', 'corrupt', 'stale', 'shift', 'unknownKid', 'walletKid', 'otherBody', 'badTimestamp'] as const);
    switch (kind) {
      case 'omit':
        options.omit = [g.pick(['keyId', 'timestamp', 'signature'] as const)];
        headerProblem = 'invalid_signature';
        break;
      case 'corrupt':
        corrupt = true;
        headerProblem = 'invalid_signature';
        break;
      case 'stale':
        options.timestamp = nowSeconds() + g.pick([-86_400, -3600, -120, -45, 45, 120, 3600]);
        headerProblem = 'stale_timestamp';
        break;
      case 'shift':
        // within the 30 s window: still a valid request
        options.timestamp = nowSeconds() + g.pick([-10, -3, -1, 1, 3, 10]);
        break;
      case 'unknownKid':
        key = { kid: `ak_${g.hex(24)}`, secret: op.apiSecret };
        headerProblem = 'unknown_key';
        break;
      case 'walletKid':
        key = { kid: op.walletKeyId, secret: op.walletSignatureSecret };
        headerProblem = 'unknown_key';
        break;
      case 'otherBody':
        options.signBody = `${typeof raw === 'string' ? raw : raw.toString('latin1')} `;
        headerProblem = 'invalid_signature';
        break;
      case 'badTimestamp':
        options.timestamp = g.pick(['abc', '1.5', '', ' ', '0x10', `${nowSeconds()}s`]);
        headerProblem = 'invalid_signature';
        break;
    }
    description += ` [headers: ${kind}]`;
    signatureIntact = headerProblem === undefined;
  }
  return { description, raw, options, key, signatureIntact, headerProblem, corrupt };
}

function validBody(g: Gen, op: TestOperator, index: number): Record<string, unknown> {
  const body: Record<string, unknown> = {
    operatorId: op.operatorId,
    playerRef: `player-${index}-${g.hex(6)}`,
    gameCode: 'dice',
    currency: 'EUR',
    lang: g.pick(['en', 'de-AT', 'mt']),
    jurisdiction: 'MT',
  };
  if (g.chance(0.4)) body.mode = g.pick(['real', 'demo']);
  if (g.chance(0.3)) body.returnUrl = VALID_URL;
  if (g.chance(0.3)) body.clientSeed = `seed-${g.hex(8)}`;
  if (g.chance(0.4)) body.rgLimits = { sessionTimeSeconds: 600, dailyLossMicro: '1000000', dailyWagerMicro: '5000000' };
  if (g.chance(0.3)) body.requestUuid = g.uuid();
  return body;
}

function mutate(g: Gen, body: Record<string, unknown>): string {
  const rgLimits = body.rgLimits;
  const hasRg = rgLimits !== null && typeof rgLimits === 'object' && !Array.isArray(rgLimits);
  switch (g.int(hasRg ? 6 : 5)) {
    case 4: {
      // well-formed, but another operator, an unknown game or a currency not permitted
      const [field, value] = g.pick([
        ['operatorId', `op-${g.hex(12)}`],
        ['gameCode', g.pick(['crash', 'multi', 'DICE', 'dice '])],
        ['currency', g.pick(['USD', 'GBP', 'BTC', 'EUR2'])],
      ] as const);
      body[field] = value;
      return `plausible ${field}`;
    }
    case 0: {
      const keys = Object.keys(body);
      const field = g.pick(keys.length ? keys : FIELDS);
      delete body[field];
      return `drop ${field}`;
    }
    case 1:
    case 2: {
      const field = g.pick(FIELDS);
      body[field] = randomValue(g);
      return `replace ${field}`;
    }
    case 3: {
      const field = g.pick(['extra', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'x'.repeat(100), '']);
      body[field] = randomValue(g);
      return `add ${field || '""'}`;
    }
    default: {
      const field = g.pick([...RG_FIELDS, 'unknownLimit']);
      if (g.chance(0.3)) delete (rgLimits as Record<string, unknown>)[field];
      else (rgLimits as Record<string, unknown>)[field] = randomValue(g);
      return `rgLimits.${field}`;
    }
  }
}

type Expected = {
  status?: number; // undefined: the oracle is unsure of the exact answer
  error?: string;
  rs?: RsStatus;
  valid?: boolean; // schema-valid per 2.2 / D9 (undefined: unsure)
};

// What the answer must be, reading contract 2.2 and DECISIONS D3, D7, D9, D17 directly.
function expectedOutcome(bytes: Buffer, request: Generated, op: TestOperator, replayed: boolean): Expected {
  let parsed: unknown;
  let json = true;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = false;
  }
  const validity = json ? checkBody(parsed) : ('RS_ERROR_WRONG_SYNTAX' as const);
  const valid = validity === 'ok' ? true : validity === 'unsure' ? undefined : false;

  if (bytes.length > MAX_BODY) return { status: 413, error: 'payload_too_large', valid };
  if (request.headerProblem) return { status: 401, error: request.headerProblem, valid };
  if (replayed) return { status: 401, error: 'replayed_signature', valid };
  if (validity === 'unsure') return { valid };
  if (validity !== 'ok') return { status: 400, error: 'invalid_request', rs: validity, valid };
  const body = parsed as Record<string, unknown>;
  if (body.operatorId !== op.operatorId) return { status: 403, error: 'operator_mismatch', valid };
  if (body.gameCode !== 'dice') return { status: 422, error: 'game_not_available', valid };
  if (body.currency !== 'EUR') return { status: 422, error: 'session_rejected', valid };
  return { status: 200, valid };
}

// D9 bounds count characters (code points), as JSON Schema does
const codePoints = (text: string) => [...text].length;
const isString = (value: unknown, min: number, max: number): value is string =>
  typeof value === 'string' && codePoints(value) >= min && codePoints(value) <= max;
const hasBadUnicode = (text: string) => /[\u0000\ud800-\udfff]/u.test(text);

function checkBody(body: unknown): 'ok' | 'unsure' | RsStatus {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'RS_ERROR_WRONG_TYPES';
  const fields = body as Record<string, unknown>;
  const present = (name: string) => Object.prototype.hasOwnProperty.call(fields, name);
  if (['operatorId', 'playerRef', 'gameCode', 'currency', 'lang', 'jurisdiction'].some((name) => !present(name))) {
    return 'RS_ERROR_WRONG_SYNTAX';
  }
  let unsure = false;
  const checks: boolean[] = [
    isString(fields.operatorId, 1, 64) && !hasBadUnicode(fields.operatorId),
    isString(fields.playerRef, 1, 128) &&
      !/^[^@\s]+@[^@\s]+\.[^@\s]+$/u.test(fields.playerRef) &&
      !/^\+?[0-9 ()-]{7,}$/u.test(fields.playerRef) &&
      !hasBadUnicode(fields.playerRef),
    isString(fields.gameCode, 1, 64) && !hasBadUnicode(fields.gameCode),
    typeof fields.currency === 'string' && /^[A-Z0-9]{3,10}$/.test(fields.currency),
    isString(fields.lang, 2, 35) && /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(fields.lang),
    isString(fields.jurisdiction, 1, 16) && /^[A-Za-z0-9-]+$/.test(fields.jurisdiction),
  ];
  if (present('mode')) checks.push(fields.mode === 'real' || fields.mode === 'demo');
  if (present('returnUrl')) {
    const url = fields.returnUrl;
    if (url === VALID_URL) checks.push(true);
    else if (typeof url === 'string' && /^https?:/i.test(url) && url.length <= 2048) unsure = true;
    else checks.push(false);
  }
  if (present('clientSeed')) checks.push(typeof fields.clientSeed === 'string' && /^[\x20-\x39\x3b-\x7e]{1,64}$/.test(fields.clientSeed));
  if (present('requestUuid')) {
    checks.push(typeof fields.requestUuid === 'string' && /^(urn:uuid:)?[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(fields.requestUuid));
  }
  if (present('botChallengeToken')) checks.push(isString(fields.botChallengeToken, 1, 4096) && !hasBadUnicode(fields.botChallengeToken));
  if (present('rgLimits')) {
    const limits = fields.rgLimits;
    if (limits === null || typeof limits !== 'object' || Array.isArray(limits)) checks.push(false);
    else {
      const rgFields = limits as Record<string, unknown>;
      const has = (name: string) => Object.prototype.hasOwnProperty.call(rgFields, name);
      for (const name of ['dailyLossMicro', 'dailyWagerMicro']) {
        if (!has(name)) continue;
        const value = rgFields[name];
        checks.push(typeof value === 'string' && /^[0-9]{1,20}$/.test(value) && BigInt(value) <= INT64_MAX);
      }
      if (has('sessionTimeSeconds')) {
        const value = rgFields.sessionTimeSeconds;
        checks.push(typeof value === 'number' && Number.isInteger(value) && value >= 60 && value <= 3600);
      }
    }
  }
  if (checks.includes(false)) return 'RS_ERROR_WRONG_TYPES';
  return unsure ? 'unsure' : 'ok';
}
