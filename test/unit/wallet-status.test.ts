import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { parseWalletResponse } from '../../src/shared/wallet/client.js';
import {
  RS_STATUSES,
  classifyStatus,
  isRsStatus,
  type RsStatus,
  type StatusClass,
  type WalletEndpoint,
} from '../../src/shared/domain/wallet-status.js';

// contract 7.1 (every RS_ status and the service's reaction) and DECISIONS D13 (what counts
// as RS_ERROR_UNKNOWN; balanceMicro is never a float).

const ENDPOINTS: WalletEndpoint[] = ['balance', 'bet', 'win', 'rollback'];

// 7.1, per status: the class on every endpoint, or per endpoint where it differs.
const EXPECTED: Record<RsStatus, StatusClass | Record<WalletEndpoint, StatusClass>> = {
  RS_OK: 'success',
  RS_ERROR_DUPLICATE_TRANSACTION: 'success',
  RS_ERROR_NOT_ENOUGH_MONEY: 'clean_reject',
  RS_ERROR_LIMIT_REACHED: 'clean_reject',
  // clean reject that also ends the session (no rollback of the current call)
  RS_ERROR_USER_DISABLED: 'terminate',
  RS_ERROR_TOKEN_EXPIRED: 'terminate',
  // fatal, and the session is terminated
  RS_ERROR_INVALID_TOKEN: 'terminate',
  RS_ERROR_INVALID_SIGNATURE: 'fatal',
  RS_ERROR_INVALID_PARTNER: 'fatal',
  RS_ERROR_WRONG_CURRENCY: 'fatal',
  RS_ERROR_WRONG_SYNTAX: 'fatal',
  RS_ERROR_WRONG_TYPES: 'fatal',
  // on win or rollback: alert and treat as settled; otherwise fatal
  RS_ERROR_TRANSACTION_DOES_NOT_EXIST: { balance: 'fatal', bet: 'fatal', win: 'treat_as_settled', rollback: 'treat_as_settled' },
  RS_ERROR_TIMEOUT: 'uncertain',
  RS_ERROR_UNKNOWN: 'uncertain',
};

describe('wallet statuses (contract 7.1, D13)', () => {
  it('knows exactly the 15 RS_ statuses of 7.1', () => {
    expect([...RS_STATUSES].sort()).to.deep.equal(Object.keys(EXPECTED).sort());
    expect(RS_STATUSES).to.have.length(15);
  });

  for (const status of RS_STATUSES) {
    it(`classifies ${status} on every endpoint`, () => {
      const expected = EXPECTED[status];
      for (const endpoint of ENDPOINTS) {
        const want = typeof expected === 'string' ? expected : expected[endpoint];
        expect(classifyStatus(status, endpoint), `${status} on ${endpoint}`).to.equal(want);
      }
    });
  }

  it('recognises RS_ statuses exactly', () => {
    for (const status of RS_STATUSES) expect(isRsStatus(status)).to.equal(true);
    for (const other of ['RS_ERROR_SOMETHING_NEW', 'rs_ok', 'RS_OK ', 'OK', '', null, undefined, 0, ['RS_OK'], { status: 'RS_OK' }]) {
      expect(isRsStatus(other), String(other)).to.equal(false);
    }
  });
});

describe('parseWalletResponse (D13)', () => {
  const uuid = randomUUID();
  const body = (fields: Record<string, unknown>) => JSON.stringify({ requestUuid: uuid, ...fields });

  it('takes an HTTP 200 with a known status at its word', () => {
    for (const status of RS_STATUSES) {
      expect(parseWalletResponse(200, body({ status }), uuid).status, status).to.equal(status);
    }
    const refused = parseWalletResponse(200, body({ status: 'RS_ERROR_USER_DISABLED', message: 'kyc_required' }), uuid);
    expect(refused).to.include({ status: 'RS_ERROR_USER_DISABLED', message: 'kyc_required' });
    expect(refused.problem).to.equal(undefined);
  });

  // docs/wallet-api.md asks for 401 RS_ERROR_INVALID_SIGNATURE: a 4xx that refuses is taken
  // at its word, with its fields read as a 200's (contract 2.10, 7.1, D13)
  it('takes a 4xx with a well-formed refusal at its word', () => {
    const refusals = RS_STATUSES.filter((status) => status !== 'RS_OK' && status !== 'RS_ERROR_DUPLICATE_TRANSACTION');
    for (const httpStatus of [400, 401, 402, 403, 404, 409, 422, 429, 499]) {
      for (const status of refusals) {
        const parsed = parseWalletResponse(httpStatus, body({ status, message: 'no' }), uuid);
        expect(parsed, `${status} with HTTP ${httpStatus}`).to.deep.equal({ status, balanceMicro: undefined, currency: undefined, message: 'no' });
      }
    }
    expect(parseWalletResponse(401, body({ status: 'RS_ERROR_INVALID_SIGNATURE', message: 'x'.repeat(300) }), uuid).message).to.have.length(256);
    expect(parseWalletResponse(402, body({ status: 'RS_ERROR_NOT_ENOUGH_MONEY', balanceMicro: '5' }), uuid).balanceMicro).to.equal(5n);
  });

  const unknown: [string, number, string][] = [
    ['HTTP 500 even with an RS_OK body', 500, body({ status: 'RS_OK', balanceMicro: '100' })],
    ['HTTP 502', 502, body({ status: 'RS_OK' })],
    ['HTTP 404', 404, body({ status: 'RS_OK' })],
    ['HTTP 401 claiming success', 401, body({ status: 'RS_OK' })],
    ['HTTP 409 with RS_ERROR_DUPLICATE_TRANSACTION', 409, body({ status: 'RS_ERROR_DUPLICATE_TRANSACTION' })],
    ['HTTP 500 with a refusal', 500, body({ status: 'RS_ERROR_INVALID_SIGNATURE' })],
    ['HTTP 503 with RS_ERROR_NOT_ENOUGH_MONEY', 503, body({ status: 'RS_ERROR_NOT_ENOUGH_MONEY' })],
    ['HTTP 401 with an HTML page', 401, '<html><body>Unauthorized</body></html>'],
    ['HTTP 401 with another requestUuid', 401, JSON.stringify({ status: 'RS_ERROR_INVALID_SIGNATURE', requestUuid: randomUUID() })],
    ['HTTP 301 with a refusal', 301, body({ status: 'RS_ERROR_INVALID_SIGNATURE' })],
    ['HTTP 302', 302, body({ status: 'RS_OK' })],
    ['HTTP 199', 199, body({ status: 'RS_OK' })],
    ['a body that is not JSON', 200, 'OK'],
    ['an empty body', 200, ''],
    ['truncated JSON', 200, body({ status: 'RS_OK' }).slice(0, -1)],
    ['a JSON array', 200, JSON.stringify([{ status: 'RS_OK', requestUuid: uuid }])],
    ['JSON null', 200, 'null'],
    ['a JSON string', 200, '"RS_OK"'],
    ['a JSON number', 200, '1'],
    ['a missing status', 200, body({ balanceMicro: '100' })],
    ['a null status', 200, body({ status: null })],
    ['an unknown RS_ status', 200, body({ status: 'RS_ERROR_SOMETHING_NEW' })],
    ['a lower-case status', 200, body({ status: 'rs_ok' })],
    ['a missing requestUuid', 200, JSON.stringify({ status: 'RS_OK' })],
    ['another requestUuid', 200, JSON.stringify({ status: 'RS_OK', requestUuid: randomUUID() })],
    ['an empty requestUuid', 200, JSON.stringify({ status: 'RS_OK', requestUuid: '' })],
    ['a numeric requestUuid', 200, JSON.stringify({ status: 'RS_OK', requestUuid: 1 })],
  ];
  for (const [name, httpStatus, text] of unknown) {
    it(`is RS_ERROR_UNKNOWN for ${name}`, () => {
      const parsed = parseWalletResponse(httpStatus, text, uuid);
      expect(parsed.status).to.equal('RS_ERROR_UNKNOWN');
      expect(parsed.problem, 'the reason is recorded for the audit row').to.be.a('string').and.not.equal('');
      expect(parsed.balanceMicro).to.equal(undefined);
    });
  }

  it('reads a MicroAmount balance exactly as bigint', () => {
    expect(parseWalletResponse(200, body({ status: 'RS_OK', balanceMicro: '5000000', currency: 'EUR' }), uuid)).to.deep.include({
      status: 'RS_OK',
      balanceMicro: 5000000n,
      currency: 'EUR',
    });
    expect(parseWalletResponse(200, body({ status: 'RS_OK', balanceMicro: '12345678901234567890' }), uuid).balanceMicro).to.equal(
      12345678901234567890n,
    );
    expect(parseWalletResponse(200, body({ status: 'RS_OK', balanceMicro: '0' }), uuid).balanceMicro).to.equal(0n);
  });

  it('never parses a numeric or decimal balanceMicro as money', () => {
    const cases: string[] = [
      body({ status: 'RS_OK', balanceMicro: 5000000 }),
      body({ status: 'RS_OK', balanceMicro: 50.5 }),
      `{"status":"RS_OK","requestUuid":"${uuid}","balanceMicro":12345678901234567890}`, // would lose precision as a Number
      body({ status: 'RS_OK', balanceMicro: '50.00' }),
      body({ status: 'RS_OK', balanceMicro: '1e6' }),
      body({ status: 'RS_OK', balanceMicro: '' }),
      body({ status: 'RS_OK', balanceMicro: null }),
      body({ status: 'RS_OK', balanceMicro: '123456789012345678901' }),
    ];
    for (const text of cases) {
      const parsed = parseWalletResponse(200, text, uuid);
      expect(parsed.status, text).to.equal('RS_OK');
      expect(parsed.balanceMicro, text).to.equal(undefined);
    }
  });

  it('ignores non-string currency and message', () => {
    const parsed = parseWalletResponse(200, body({ status: 'RS_OK', currency: 978, message: { text: 'x' } }), uuid);
    expect(parsed.currency).to.equal(undefined);
    expect(parsed.message).to.equal(undefined);
  });

  it('truncates the strings it hands on, and what it says of an unknown status, to 256 characters (D24)', () => {
    const long = (char: string) => char.repeat(10_000);
    const parsed = parseWalletResponse(200, body({ status: 'RS_OK', currency: long('C'), message: long('m') }), uuid);
    // (lengths compared first: a failure's diff of 10,000 characters helps nobody)
    expect([parsed.currency?.length, parsed.message?.length]).to.deep.equal([256, 256]);
    expect([parsed.currency, parsed.message]).to.deep.equal([long('C').slice(0, 256), long('m').slice(0, 256)]);
    // characters, not UTF-16 units: an emoji is not cut in half
    const emoji = parseWalletResponse(200, body({ status: 'RS_OK', message: long('😀') }), uuid).message!;
    expect([...emoji].length).to.equal(256);
    expect(emoji).to.equal('😀'.repeat(256));
    const unknown = parseWalletResponse(200, body({ status: long('S') }), uuid).problem!;
    expect(unknown.length).to.equal('unknown status ""'.length + 256);
    expect(unknown).to.equal(`unknown status "${long('S').slice(0, 256)}"`);
    const shape = parseWalletResponse(200, body({ status: { nested: long('n') } }), uuid).problem!;
    expect(shape.length).to.equal('unknown status '.length + 256);
    expect(shape).to.equal(`unknown status ${JSON.stringify({ nested: long('n') }).slice(0, 256)}`);
  });
});
