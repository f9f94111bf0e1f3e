import { expect } from 'chai';
import fc from 'fast-check';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { signedRequest, type ApiResponse } from '../../support/signed-client.js';

// A property of POST /v1/session (contract 2.2, 4.1; DECISIONS D3, D9, D24): whatever a
// correctly signed body holds (any JSON, hostile strings, NUL, lone surrogates, huge numbers,
// wrong types, extra fields, a valid body with fields mutated), the answer is a success or a
// contract error (4xx with error and message), never a 5xx nor a stack trace; and the wallet
// is called only for a body that was accepted (one balance call for a real session, none for
// a demo one, none for any refusal the service makes itself).

const FIELDS = ['operatorId', 'playerRef', 'gameCode', 'currency', 'lang', 'jurisdiction', 'mode', 'returnUrl', 'clientSeed', 'rgLimits', 'requestUuid', 'botChallengeToken'];

// a string with a NUL or a lone surrogate somewhere in it
const unstorable = fc
  .tuple(fc.string({ maxLength: 8 }), fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00'), fc.string({ maxLength: 8 }))
  .map((parts) => parts.join(''));
const hostileString = fc.oneof(
  fc.string(),
  unstorable,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    'di\u0000ce',
    '\u0000',
    'player\ud800',
    '\udfff-half',
    '\u202e\ufeff',
    '__proto__',
    'constructor',
    '9'.repeat(400),
    '99999999999999999999',
    '-1',
    '1e309',
    'x'.repeat(70 * 1024),
    '${jndi:ldap://x}',
    "'; DROP TABLE sessions; --",
  ),
);
const hugeNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 63, -(2 ** 63), Number.MAX_SAFE_INTEGER + 2, 5e-324, 0, -0),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map((n) => n.toString()),
);
const anyValue = fc.oneof({ maxDepth: 3 }, hostileString, hugeNumber, fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 3 }), fc.anything({ maxDepth: 2 }));

type Mutation = { kind: 'keep' } | { kind: 'drop' } | { kind: 'set'; value: unknown };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'keep' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'drop' } as const) },
  { weight: 2, arbitrary: anyValue.map((value) => ({ kind: 'set', value }) as const) },
);

// what is sent: the exact bytes, built from the operator the request runs under
type Sent = (op: TestOperator) => string;

const validLooking: fc.Arbitrary<Sent> = fc
  .record({
    mutations: fc.dictionary(fc.constantFrom(...FIELDS, 'dailyLossMicro', 'sessionTimeSeconds'), mutation, { maxKeys: 4 }),
    extra: fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'toString', '')), anyValue, { maxKeys: 3 }),
    mode: fc.constantFrom(undefined, 'real', 'demo'),
    rg: fc.boolean(),
    requestUuid: fc.option(fc.uuid(), { nil: undefined }),
  })
  .map(({ mutations, extra, mode, rg, requestUuid }) => (op: TestOperator) => {
    const body: Record<string, unknown> = { ...op.sessionBody(), ...(mode ? { mode } : {}), ...(requestUuid ? { requestUuid } : {}) };
    const limits: Record<string, unknown> = { dailyLossMicro: '5000000', sessionTimeSeconds: 900 };
    if (rg) body.rgLimits = limits;
    for (const [field, change] of Object.entries(mutations)) {
      const target = field === 'dailyLossMicro' || field === 'sessionTimeSeconds' ? limits : body;
      if (change.kind === 'drop') delete target[field];
      else if (change.kind === 'set') target[field] = change.value;
    }
    // extra fields are written as JSON text, so that "__proto__" is a real key
    const text = JSON.stringify(body);
    const extras = Object.entries(extra).map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}`);
    return extras.length === 0 ? text : `${text.slice(0, -1)},${extras.join(',')}}`;
  });

// a valid body (with or without a requestUuid) but for one field, which holds a hostile string
const oneFieldHostile: fc.Arbitrary<Sent> = fc
  .record({ field: fc.constantFrom(...FIELDS), value: fc.oneof(unstorable, hostileString), requestUuid: fc.option(fc.uuid(), { nil: undefined }) })
  .map(({ field, value, requestUuid }) => (op: TestOperator) => JSON.stringify({ ...op.sessionBody(), ...(requestUuid ? { requestUuid } : {}), [field]: value }));

const anyJson: fc.Arbitrary<Sent> = fc.jsonValue().map((value) => () => JSON.stringify(value) ?? 'null');
const rawText: fc.Arbitrary<Sent> = fc.oneof(fc.string(), fc.constantFrom('{', '{"operatorId":', 'null', '[]', '{"a":1}{"b":2}')).map((text) => () => text);

const request: fc.Arbitrary<Sent> = fc.oneof(
  { weight: 5, arbitrary: validLooking },
  { weight: 3, arbitrary: oneFieldHostile },
  { weight: 2, arbitrary: anyJson },
  { weight: 1, arbitrary: rawText },
);

// every string value in a JSON value (keys are field names, which D3 details do name)
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((item) => strings(item, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((item) => strings(item, out));
  return out;
}

function expectAnswer(res: ApiResponse, raw: string, where: string): void {
  expect(res.status, where).to.be.below(500);
  expect(res.headers.get('content-type') ?? '', where).to.match(/^application\/json/);
  expect(res.text, where).not.to.match(/\bat \S+ \(|\\n\s+at |\.ts:\d+|\.[cm]?js:\d+|node_modules|Prisma|TypeError|RangeError|SyntaxError/);
  expect(res.body, where).to.be.an('object').and.not.be.an('array');
  if (res.status === 200) {
    expect(res.body, where).to.have.all.keys('sessionId', 'sessionToken', 'launchUrl', 'expiresAt', 'serverSeedHash', 'sandbox');
  } else {
    expect(res.status, where).to.be.at.least(400);
    expect(res.body.error, where).to.be.a('string').and.not.equal('');
    expect(res.body.message, where).to.be.a('string').and.not.equal('');
    // D3: an error body names fields, never the values sent
    let sent: unknown;
    try {
      sent = JSON.parse(raw);
    } catch {
      sent = undefined;
    }
    const answered = [...strings(res.body), ...Object.keys(res.body)].join('\n');
    for (const value of strings(sent)) {
      if (value.trim().length >= 8) expect(answered, `echoes ${JSON.stringify(value.slice(0, 40))}: ${where}`).not.to.include(value);
    }
  }
}

describe('POST /v1/session, property-based (fast-check): any signed body gets a success or a contract error (D3, D24)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const walletCallsOf = (op: TestOperator) =>
    h.wallet.requests.filter((r) => (r.body as { operatorId?: unknown } | undefined)?.operatorId === op.operatorId).length;

  it('never a 5xx, never a stack trace, the wallet called only for an accepted real session', async function () {
    this.timeout(120_000);
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (sent) => {
        // an operator per run: its own rate-limit bucket (contract 8.1) and its own wallet calls
        const op = await h.onboard();
        const raw = sent(op);
        const res = await signedRequest(h.baseUrl, op.key, 'POST', '/v1/session', undefined, { rawBody: raw });
        const where = `${raw.slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expectAnswer(res, raw, where);

        const accepted = res.status === 200;
        const demo = accepted && (JSON.parse(raw) as { mode?: unknown }).mode === 'demo';
        expect(walletCallsOf(op), `wallet calls: ${where}`).to.equal(accepted && !demo ? 1 : 0);
        expect(await h.svc.db.session.count({ where: { operatorId: op.operatorId } }), `sessions: ${where}`).to.equal(accepted ? 1 : 0);
      }),
      { numRuns: 150, seed: 0x21_5e55 },
    );
    // the generator reaches both sides: successes and the service's own refusals
    expect(statuses.get(200) ?? 0, JSON.stringify([...statuses])).to.be.above(0);
    expect(statuses.get(400) ?? 0, JSON.stringify([...statuses])).to.be.above(0);
  });
});
