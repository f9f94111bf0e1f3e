import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { signedHeaders } from '../../../src/shared/wallet/signer.js';
import { REQUEST_LOG_LIMITS, WalletSimulator, type RequestLogLimits, type WalletEndpoint } from '../../../src/simulator/wallet-simulator.js';
import { adminHandler } from '../../../src/simulator/admin.js';

const KID = 'wallet-kid-1';
const SECRET = 'ab'.repeat(64);
const PLAYER = 'player-1';
const CURRENCY = 'EUR';

type Reply = { httpStatus: number; text: string; json: Record<string, unknown> | undefined };

type CallOptions = {
  kid?: string;
  secret?: string;
  nowSeconds?: number;
  signedPath?: string; // the path put into the canonical string, when it should differ
  headers?: Record<string, string>; // replaces the signature headers entirely
  signal?: AbortSignal;
};

const common = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  requestUuid: randomUUID(),
  operatorId: 'op-1',
  playerRef: PLAYER,
  currency: CURRENCY,
  gameCode: 'dice',
  ...overrides,
});

const betBody = (amountMicro: string, overrides: Record<string, unknown> = {}): Record<string, unknown> =>
  common({ transactionUuid: randomUUID(), amountMicro, roundId: randomUUID(), ...overrides });

const winBody = (bet: Record<string, unknown>, amountMicro: string, overrides: Record<string, unknown> = {}) =>
  common({
    transactionUuid: randomUUID(),
    referenceTransactionUuid: bet.transactionUuid,
    amountMicro,
    roundId: bet.roundId,
    ...overrides,
  });

const rollbackBody = (referenceTransactionUuid: unknown, overrides: Record<string, unknown> = {}) =>
  common({ transactionUuid: randomUUID(), referenceTransactionUuid, ...overrides });

async function call(
  sim: WalletSimulator,
  endpoint: WalletEndpoint,
  body: Record<string, unknown> | string,
  options: CallOptions = {},
): Promise<Reply> {
  const url = `${sim.url}/wallet/${endpoint}`;
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const path = options.signedPath ?? new URL(url).pathname;
  const headers =
    options.headers ?? signedHeaders(options.kid ?? KID, options.secret ?? SECRET, 'POST', path, raw, options.nowSeconds);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { httpStatus: response.status, text, json };
}

describe('wallet simulator (contract 4.2, 4.3, 5.1, 5.2)', () => {
  let sim: WalletSimulator;

  before(async () => {
    sim = await WalletSimulator.start();
    sim.addCredential(KID, SECRET);
  });

  after(async () => {
    await sim.close();
  });

  beforeEach(() => {
    sim.reset();
    sim.setBalance(PLAYER, CURRENCY, 1_000_000n);
  });

  describe('signature verification (5.2)', () => {
    it('rejects a request without the signature headers with 401, echoing the requestUuid', async () => {
      const body = common();
      const reply = await call(sim, 'balance', body, { headers: {} });
      expect(reply.httpStatus).to.equal(401);
      expect(reply.json).to.deep.equal({ status: 'RS_ERROR_INVALID_SIGNATURE', requestUuid: body.requestUuid });
      expect(sim.requests[0]?.signatureValid).to.equal(false);
      expect(sim.violations).to.have.length(1);
    });

    it('rejects a bad signature without booking anything', async () => {
      const reply = await call(sim, 'bet', betBody('100'), { secret: 'cd'.repeat(64) });
      expect(reply.httpStatus).to.equal(401);
      expect(reply.json?.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
      expect(sim.transactions).to.deep.equal([]);
    });

    it('rejects a timestamp beyond ±30 s and accepts one inside the window', async () => {
      const now = Math.floor(Date.now() / 1000);
      expect((await call(sim, 'balance', common(), { nowSeconds: now - 31 })).httpStatus).to.equal(401);
      expect((await call(sim, 'balance', common(), { nowSeconds: now + 31 })).httpStatus).to.equal(401);
      expect((await call(sim, 'balance', common(), { nowSeconds: now - 29 })).json?.status).to.equal('RS_OK');
    });

    it('rejects an unknown kid and a signature over another path', async () => {
      expect((await call(sim, 'balance', common(), { kid: 'other' })).httpStatus).to.equal(401);
      expect((await call(sim, 'balance', common(), { signedPath: '/balance' })).httpStatus).to.equal(401);
    });

    it('answers an empty requestUuid when none can be read', async () => {
      const reply = await call(sim, 'bet', 'not json', { headers: {} });
      expect(reply.json).to.deep.equal({ status: 'RS_ERROR_INVALID_SIGNATURE', requestUuid: '' });
    });

    it('reads the headers case-insensitively and accepts every active credential (rotation)', async () => {
      sim.addCredential('wallet-kid-2', 'ef'.repeat(64));
      const body = JSON.stringify(common());
      const lower = signedHeaders('wallet-kid-2', 'ef'.repeat(64), 'POST', '/wallet/balance', body);
      const upper = Object.fromEntries(Object.entries(lower).map(([name, value]) => [name.toUpperCase(), value]));
      expect((await call(sim, 'balance', body, { headers: upper })).json?.status).to.equal('RS_OK');
      expect((await call(sim, 'balance', common())).json?.status).to.equal('RS_OK');
      sim.removeCredential('wallet-kid-2');
      expect((await call(sim, 'balance', common(), { kid: 'wallet-kid-2', secret: 'ef'.repeat(64) })).httpStatus).to.equal(401);
      sim.addCredential(KID, SECRET);
    });
  });

  describe('balance and bet (4.2)', () => {
    it('answers the balance as a MicroAmount string, 0 for an unknown player', async () => {
      const body = common();
      expect((await call(sim, 'balance', body)).json).to.deep.equal({
        status: 'RS_OK',
        requestUuid: body.requestUuid,
        balanceMicro: '1000000',
        currency: CURRENCY,
      });
      expect((await call(sim, 'balance', common({ playerRef: 'nobody' }))).json?.balanceMicro).to.equal('0');
      expect((await call(sim, 'balance', common({ currency: 'USD' }))).json?.balanceMicro).to.equal('0');
    });

    it('debits a bet and books it', async () => {
      const bet = betBody('250000');
      const reply = await call(sim, 'bet', bet);
      expect(reply.httpStatus).to.equal(200);
      expect(reply.json).to.deep.equal({
        status: 'RS_OK',
        requestUuid: bet.requestUuid,
        balanceMicro: '750000',
        currency: CURRENCY,
      });
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(750_000n);
      expect(sim.transactions).to.have.length(1);
      expect(sim.transactions[0]).to.include({
        type: 'bet',
        transactionUuid: bet.transactionUuid,
        requestUuid: bet.requestUuid,
        playerRef: PLAYER,
        currency: CURRENCY,
        amountMicro: 250_000n,
        balanceAfterMicro: 750_000n,
      });
      expect(sim.violations).to.deep.equal([]);
    });

    it('refuses a bet above the balance with RS_ERROR_NOT_ENOUGH_MONEY and does not debit', async () => {
      const reply = await call(sim, 'bet', betBody('1000001'));
      expect(reply.json).to.include({ status: 'RS_ERROR_NOT_ENOUGH_MONEY', balanceMicro: '1000000' });
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
      expect(sim.transactions).to.deep.equal([]);
      expect((await call(sim, 'bet', betBody('1000000'))).json).to.include({ status: 'RS_OK', balanceMicro: '0' });
    });

    it('handles amounts beyond the safe-integer range exactly', async () => {
      sim.setBalance(PLAYER, CURRENCY, 90_071_992_547_409_930n);
      const reply = await call(sim, 'bet', betBody('9007199254740993'));
      expect(reply.json?.balanceMicro).to.equal('81064793292668937');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(81_064_793_292_668_937n);
    });

    it('answers RS_ERROR_USER_DISABLED on balance and bet for a disabled player, still crediting wins', async () => {
      const bet = betBody('100');
      await call(sim, 'bet', bet);
      sim.disablePlayer(PLAYER, 'self-excluded');
      expect((await call(sim, 'balance', common())).json).to.include({
        status: 'RS_ERROR_USER_DISABLED',
        message: 'self-excluded',
      });
      expect((await call(sim, 'bet', betBody('100'))).json?.status).to.equal('RS_ERROR_USER_DISABLED');
      expect((await call(sim, 'win', winBody(bet, '300'))).json?.status).to.equal('RS_OK');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_200n);
    });
  });

  describe('idempotency (4.3)', () => {
    it('returns the cached response for a known requestUuid without debiting again', async () => {
      const raw = JSON.stringify(betBody('100000'));
      const first = await call(sim, 'bet', raw);
      sim.setBalance('someone-else', CURRENCY, 5n); // unrelated change; the cached answer stays
      const second = await call(sim, 'bet', raw);
      expect(second.text).to.equal(first.text);
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(900_000n);
      expect(sim.transactions).to.have.length(1);
      expect(sim.violations).to.deep.equal([]);
    });

    it('keeps the cached response even after the balance changed', async () => {
      const balance = JSON.stringify(common());
      const before = await call(sim, 'balance', balance);
      await call(sim, 'bet', betBody('1'));
      expect((await call(sim, 'balance', balance)).json?.balanceMicro).to.equal(before.json?.balanceMicro);
    });

    it('records a violation when a requestUuid comes back with a different body', async () => {
      const bet = betBody('100000');
      const first = await call(sim, 'bet', bet);
      const second = await call(sim, 'bet', { ...bet, amountMicro: '200000' });
      expect(second.json).to.deep.equal(first.json);
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(900_000n);
      expect(sim.violations).to.have.length(1);
      expect(sim.violations[0]).to.contain('reused with a different body');
    });

    it('answers RS_ERROR_DUPLICATE_TRANSACTION for a booked transactionUuid under a new requestUuid', async () => {
      const bet = betBody('100000');
      await call(sim, 'bet', bet);
      const retry = await call(sim, 'bet', { ...bet, requestUuid: randomUUID() });
      expect(retry.json).to.include({ status: 'RS_ERROR_DUPLICATE_TRANSACTION', balanceMicro: '900000' });
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(900_000n);
      expect(sim.transactions).to.have.length(1);
      expect(sim.violations).to.deep.equal([]);
    });

    it('records a violation when a booked transactionUuid returns with another amount', async () => {
      const bet = betBody('100000');
      await call(sim, 'bet', bet);
      const retry = await call(sim, 'bet', { ...bet, requestUuid: randomUUID(), amountMicro: '100001' });
      expect(retry.json?.status).to.equal('RS_ERROR_DUPLICATE_TRANSACTION');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(900_000n);
      expect(sim.violations).to.have.length(1);
      expect(sim.violations[0]).to.contain('amountMicro 100000 vs 100001');
    });

    it('scopes the requestUuid cache per endpoint', async () => {
      const requestUuid = randomUUID();
      await call(sim, 'balance', common({ requestUuid }));
      expect((await call(sim, 'bet', betBody('5', { requestUuid }))).json?.balanceMicro).to.equal('999995');
    });
  });

  describe('win (4.2)', () => {
    it('credits a win for a booked bet, including a zero win', async () => {
      const bet = betBody('100000');
      await call(sim, 'bet', bet);
      const win = winBody(bet, '196000');
      expect((await call(sim, 'win', win)).json).to.deep.equal({
        status: 'RS_OK',
        requestUuid: win.requestUuid,
        balanceMicro: '1096000',
        currency: CURRENCY,
      });
      expect(sim.transactions[1]).to.include({
        type: 'win',
        transactionUuid: win.transactionUuid,
        referenceTransactionUuid: bet.transactionUuid,
        amountMicro: 196_000n,
      });

      // contract 2.6, 8.4 (D42): a free bet debits no cash, and its win of "0" credits nothing
      const freeBet = betBody('100', { isFree: true });
      expect((await call(sim, 'bet', freeBet)).json).to.include({ status: 'RS_OK', balanceMicro: '1096000' });
      expect((await call(sim, 'win', winBody(freeBet, '0'))).json).to.include({ status: 'RS_OK', balanceMicro: '1096000' });
      expect(sim.violations).to.deep.equal([]);
    });

    it('answers RS_ERROR_TRANSACTION_DOES_NOT_EXIST for an unknown bet', async () => {
      const reply = await call(sim, 'win', winBody(betBody('1'), '500'));
      expect(reply.json).to.include({ status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', balanceMicro: '1000000' });
      expect(sim.transactions).to.deep.equal([]);
    });

    it('refuses a second win for the same bet and records a violation', async () => {
      const bet = betBody('100000');
      await call(sim, 'bet', bet);
      await call(sim, 'win', winBody(bet, '200000'));
      const second = await call(sim, 'win', winBody(bet, '200000'));
      expect(second.json).to.include({ status: 'RS_ERROR_DUPLICATE_TRANSACTION', balanceMicro: '1100000' });
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_100_000n);
      expect(sim.violations).to.have.length(1);
      expect(sim.violations[0]).to.contain('second win');
    });

    it('refuses a win for a rolled-back bet and records a violation', async () => {
      const bet = betBody('100000');
      await call(sim, 'bet', bet);
      await call(sim, 'rollback', rollbackBody(bet.transactionUuid));
      const win = await call(sim, 'win', winBody(bet, '200000'));
      expect(win.json?.status).to.equal('RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
      expect(sim.violations).to.have.length(1);
      expect(sim.violations[0]).to.contain('already rolled back');
    });

    it("refuses a win referencing another player's bet and records a violation", async () => {
      sim.setBalance('player-2', CURRENCY, 1000n);
      const bet = betBody('1000', { playerRef: 'player-2' });
      await call(sim, 'bet', bet);
      const win = await call(sim, 'win', winBody(bet, '5000'));
      expect(win.json?.status).to.equal('RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
      expect(sim.violations[0]).to.contain('another account');
    });
  });

  describe('rollback (4.2 rules 1-4)', () => {
    it('rule 1: credits the stake of a booked bet back', async () => {
      const bet = betBody('300000');
      await call(sim, 'bet', bet);
      const rollback = rollbackBody(bet.transactionUuid);
      expect((await call(sim, 'rollback', rollback)).json).to.deep.equal({
        status: 'RS_OK',
        requestUuid: rollback.requestUuid,
        balanceMicro: '1000000',
        currency: CURRENCY,
      });
      expect(sim.transactions[1]).to.include({
        type: 'rollback',
        transactionUuid: rollback.transactionUuid,
        referenceTransactionUuid: bet.transactionUuid,
        amountMicro: 300_000n,
        balanceAfterMicro: 1_000_000n,
      });
    });

    it('rule 2: debits the payout of a booked win back', async () => {
      const bet = betBody('100000');
      await call(sim, 'bet', bet);
      const win = winBody(bet, '250000');
      await call(sim, 'win', win);
      expect((await call(sim, 'rollback', rollbackBody(win.transactionUuid))).json).to.include({
        status: 'RS_OK',
        balanceMicro: '900000',
      });
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(900_000n);
    });

    it('rule 3: answers RS_OK with the current balance for an already rolled-back transaction', async () => {
      const bet = betBody('100000');
      await call(sim, 'bet', bet);
      await call(sim, 'rollback', rollbackBody(bet.transactionUuid));
      const again = await call(sim, 'rollback', rollbackBody(bet.transactionUuid));
      expect(again.json).to.include({ status: 'RS_OK', balanceMicro: '1000000' });
      expect(sim.transactions).to.have.length(2);
      expect(sim.violations).to.deep.equal([]);
    });

    it('rule 4: answers RS_ERROR_TRANSACTION_DOES_NOT_EXIST when nothing is referenced', async () => {
      const reply = await call(sim, 'rollback', rollbackBody(randomUUID()));
      expect(reply.json).to.include({ status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', balanceMicro: '1000000' });
      expect(sim.transactions).to.deep.equal([]);
      expect(sim.violations).to.deep.equal([]);
    });

    it('answers a retried rollback (same transactionUuid, new requestUuid) as a duplicate', async () => {
      const bet = betBody('100000');
      await call(sim, 'bet', bet);
      const rollback = rollbackBody(bet.transactionUuid);
      await call(sim, 'rollback', rollback);
      const retry = await call(sim, 'rollback', { ...rollback, requestUuid: randomUUID() });
      expect(retry.json?.status).to.equal('RS_ERROR_DUPLICATE_TRANSACTION');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
    });
  });

  describe('validation (2.1, 2.5-2.9)', () => {
    const expectRejected = async (endpoint: WalletEndpoint, body: Record<string, unknown> | string, status: string) => {
      const reply = await call(sim, endpoint, body);
      expect(reply.httpStatus).to.equal(200);
      expect(reply.json?.status).to.equal(status);
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
      expect(sim.transactions).to.deep.equal([]);
      expect(sim.violations).to.have.length(1);
      sim.violations = [];
    };

    it('answers RS_ERROR_WRONG_SYNTAX for a missing field or a body that is not JSON', async () => {
      const { roundId: _roundId, ...withoutRound } = betBody('100');
      await expectRejected('bet', withoutRound, 'RS_ERROR_WRONG_SYNTAX');
      const { gameCode: _gameCode, ...withoutGame } = common();
      await expectRejected('balance', withoutGame, 'RS_ERROR_WRONG_SYNTAX');
      await expectRejected('bet', '{"requestUuid":', 'RS_ERROR_WRONG_SYNTAX');
      await expectRejected('bet', '[]', 'RS_ERROR_WRONG_SYNTAX');
    });

    it('answers RS_ERROR_WRONG_TYPES for major-unit strings and JSON numbers', async () => {
      await expectRejected('bet', betBody('100.00'), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('bet', { ...betBody('1'), amountMicro: 100 }, 'RS_ERROR_WRONG_TYPES');
      await expectRejected('bet', `{${JSON.stringify(betBody('1')).slice(1, -1)},"amountMicro":100}`, 'RS_ERROR_WRONG_TYPES');
    });

    it('answers RS_ERROR_WRONG_TYPES for a non-positive stake, a negative win and malformed ids', async () => {
      await expectRejected('bet', betBody('0'), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('bet', betBody('-5'), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('win', winBody(betBody('1'), '-1'), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('bet', betBody('1', { requestUuid: 'not-a-uuid' }), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('bet', betBody('1', { roundId: 42 }), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('rollback', rollbackBody('nope'), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('balance', common({ playerRef: '' }), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('bet', betBody('1', { isFree: 'yes' }), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('bet', betBody('1', { fxRate: '1,5' }), 'RS_ERROR_WRONG_TYPES');
    });

    it('answers RS_ERROR_WRONG_TYPES beyond the D9 bounds', async () => {
      await expectRejected('bet', betBody('1'.repeat(21)), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('balance', common({ currency: 'eur' }), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('balance', common({ playerRef: 'p'.repeat(129) }), 'RS_ERROR_WRONG_TYPES');
      await expectRejected('balance', common({ gameCode: 'g'.repeat(65) }), 'RS_ERROR_WRONG_TYPES');
    });

    it('echoes the requestUuid on a validation error', async () => {
      const bet = betBody('1.5');
      expect((await call(sim, 'bet', bet)).json?.requestUuid).to.equal(bet.requestUuid);
    });
  });

  describe('faults', () => {
    it('status: answers the given status without effect, for the given number of calls', async () => {
      sim.setFault('bet', { kind: 'status', status: 'RS_ERROR_LIMIT_REACHED', message: 'daily cap' }, 2);
      const bet = betBody('100');
      const first = await call(sim, 'bet', bet);
      expect(first.httpStatus).to.equal(200);
      expect(first.json).to.deep.equal({ status: 'RS_ERROR_LIMIT_REACHED', requestUuid: bet.requestUuid, message: 'daily cap' });
      expect((await call(sim, 'bet', betBody('100'))).json?.status).to.equal('RS_ERROR_LIMIT_REACHED');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
      // The fault was used up; the same request is now processed normally.
      expect((await call(sim, 'bet', bet)).json).to.include({ status: 'RS_OK', balanceMicro: '999900' });
    });

    it('status with httpStatus: answers that HTTP status with the status in a JSON body, no effect', async () => {
      sim.setFault('bet', { kind: 'status', status: 'RS_ERROR_INVALID_SIGNATURE', httpStatus: 401 }, 1);
      const bet = betBody('100');
      const reply = await call(sim, 'bet', bet);
      expect(reply.httpStatus).to.equal(401);
      expect(reply.json).to.deep.equal({ status: 'RS_ERROR_INVALID_SIGNATURE', requestUuid: bet.requestUuid });
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
    });

    it('applies only to its endpoint and lasts until cleared when no count is given', async () => {
      sim.setFault('win', { kind: 'http', httpStatus: 503 });
      expect((await call(sim, 'balance', common())).json?.status).to.equal('RS_OK');
      const bet = betBody('100');
      expect((await call(sim, 'bet', bet)).json?.status).to.equal('RS_OK');
      expect((await call(sim, 'win', winBody(bet, '1'))).httpStatus).to.equal(503);
      expect((await call(sim, 'win', winBody(bet, '1'))).httpStatus).to.equal(503);
      sim.setFault('win', null);
      expect((await call(sim, 'win', winBody(bet, '1'))).json?.status).to.equal('RS_OK');
    });

    it('http: answers the HTTP status with an HTML error page and no effect', async () => {
      sim.setFault('bet', { kind: 'http', httpStatus: 500 }, 1);
      const reply = await call(sim, 'bet', betBody('100'));
      expect(reply.httpStatus).to.equal(500);
      expect(reply.json).to.equal(undefined);
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
      expect(sim.requests[0]?.response).to.deep.equal({ httpStatus: 500, body: '<html><body><h1>HTTP 500</h1></body></html>' });
    });

    it('invalid_json: answers 200 with a body that is not JSON, no effect', async () => {
      sim.setFault('bet', { kind: 'invalid_json' }, 1);
      const reply = await call(sim, 'bet', betBody('100'));
      expect(reply.httpStatus).to.equal(200);
      expect(reply.json).to.equal(undefined);
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
    });

    it('delay: applies at once and answers after the delay', async () => {
      sim.setFault('bet', { kind: 'delay', ms: 300 }, 1);
      const started = Date.now();
      const pending = call(sim, 'bet', betBody('100'));
      // until the bet is booked (bounded by the test's timeout), not a fixed wait: a loaded box
      // may not have delivered the request within one; the answer is due 300 ms after that
      while (sim.balanceOf(PLAYER, CURRENCY) === 1_000_000n) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(999_900n);
      expect(sim.requests[0]?.response).to.equal('pending');
      const reply = await pending;
      expect(Date.now() - started).to.be.at.least(290);
      expect(reply.json).to.include({ status: 'RS_OK', balanceMicro: '999900' });
    });

    it('hang: never answers', async () => {
      sim.setFault('bet', { kind: 'hang' }, 1);
      let error: unknown;
      try {
        await call(sim, 'bet', betBody('100'), { signal: AbortSignal.timeout(200) });
      } catch (caught) {
        error = caught;
      }
      expect((error as Error | undefined)?.name).to.equal('TimeoutError');
      expect(sim.requests[0]?.response).to.equal('no_response');
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
    });

    it('drop_after_apply: debits, then drops the connection; a retry gets the cached answer', async () => {
      sim.setFault('bet', { kind: 'drop_after_apply' }, 1);
      const bet = JSON.stringify(betBody('100'));
      let error: unknown;
      try {
        await call(sim, 'bet', bet);
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(TypeError); // fetch's network error
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(999_900n);
      expect(sim.requests[0]?.response).to.equal('no_response');
      const retry = await call(sim, 'bet', bet);
      expect(retry.json).to.include({ status: 'RS_OK', balanceMicro: '999900' });
      expect(sim.transactions).to.have.length(1);
    });

    it('wrong_request_uuid: applies normally but echoes another requestUuid', async () => {
      sim.setFault('bet', { kind: 'wrong_request_uuid' }, 1);
      const bet = betBody('100');
      const reply = await call(sim, 'bet', bet);
      expect(reply.json?.status).to.equal('RS_OK');
      expect(reply.json?.requestUuid).to.be.a('string').and.not.equal(bet.requestUuid);
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(999_900n);
    });

    it('oversize: applies, then answers valid JSON of at least the given size with its content-length', async () => {
      sim.setFault('bet', { kind: 'oversize', bytes: 200_000 }, 1);
      const bet = betBody('100');
      const reply = await call(sim, 'bet', bet);
      expect(Buffer.byteLength(reply.text)).to.be.within(200_000, 200_100);
      expect(reply.json).to.include({ status: 'RS_OK', requestUuid: bet.requestUuid, balanceMicro: '999900' });
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(999_900n);
    });

    it('endless: applies, then streams an answer without end until the reader goes away, counting what it wrote', async () => {
      sim.setFault('bet', { kind: 'endless' }, 1);
      const bet = betBody('100');
      const raw = JSON.stringify(bet);
      const response = await fetch(`${sim.url}/wallet/bet`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signedHeaders(KID, SECRET, 'POST', '/wallet/bet', raw) },
        body: raw,
      });
      expect(response.headers.get('content-length')).to.equal(null);
      const reader = response.body!.getReader();
      let read = 0;
      let start = '';
      while (read < 1024 * 1024) {
        const { value } = await reader.read();
        if (start.length < 100) start += Buffer.from(value!).toString('utf8');
        read += value!.length;
      }
      await reader.cancel();
      expect(start).to.match(new RegExp(`^\\{"status":"RS_OK","requestUuid":"${bet.requestUuid}".*"message":"x+`));
      const sent = sim.requests[0]?.response as { bytesSent: number; body: string };
      expect(sent.bytesSent).to.be.at.least(read);
      expect(sent.body).to.have.length(1024);
      expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(999_900n);
    });

    it('trickle: applies, then answers one byte at a time', async () => {
      sim.setFault('bet', { kind: 'trickle', intervalMs: 1 }, 1);
      const bet = betBody('100');
      const reply = await call(sim, 'bet', bet);
      expect(reply.json).to.include({ status: 'RS_OK', requestUuid: bet.requestUuid, balanceMicro: '999900' });
      expect(sim.requests[0]?.response).to.include({ httpStatus: 200, status: 'RS_OK', body: reply.text, bytesSent: reply.text.length });
    });

    it('rejects a non-positive count', () => {
      expect(() => sim.setFault('bet', { kind: 'hang' }, 0)).to.throw(RangeError);
    });
  });

  describe('recording', () => {
    it('records each request with its raw body, parsed body, signature verdict and answer', async () => {
      const raw = JSON.stringify(common());
      await call(sim, 'balance', raw);
      expect(sim.requests).to.have.length(1);
      const [record] = sim.requests;
      expect(record).to.include({ method: 'POST', path: '/wallet/balance', endpoint: 'balance', rawBody: raw, signatureValid: true });
      expect(record?.body).to.deep.equal(JSON.parse(raw));
      expect(record?.headers['x-rgs-key-id']).to.equal(KID);
      expect(record?.response).to.include({ httpStatus: 200, status: 'RS_OK' });
    });

    it('answers 404 outside the wallet paths and 405 for other methods, as violations', async () => {
      expect((await fetch(`${sim.url}/wallet/deposit`, { method: 'POST', body: '{}' })).status).to.equal(404);
      expect((await fetch(`${sim.url}/wallet/bet`)).status).to.equal(405);
      expect(sim.requests.map((r) => r.endpoint)).to.deep.equal([null, 'bet']);
      expect(sim.violations.some((v) => v.includes('not a wallet endpoint'))).to.equal(true);
      expect(sim.violations.some((v) => v.includes('POST only'))).to.equal(true);
    });
  });
});

// The switches `rgs wallet-check` is tested with (D38): each breaks one rule, a wallet wrong in
// exactly one way; test/system/cli/wallet-check.test.ts shows the check catches each.
describe('wallet simulator broken rules (D38)', () => {
  let sim: WalletSimulator;

  before(async () => {
    sim = await WalletSimulator.start({ brokenRules: ['overdraws', 'numeric_amounts'] });
    sim.addCredential(KID, SECRET);
  });
  after(() => sim.close());

  it('starts with the rules it is given, breaks and keeps one on demand, and keeps every rule again after reset()', async () => {
    expect(sim.brokenRules).to.have.members(['overdraws', 'numeric_amounts']);
    sim.setBalance(PLAYER, CURRENCY, 100n);
    const overdrawn = await call(sim, 'bet', betBody('150'));
    // the digits moved out of their quotes, exactly
    expect(overdrawn.text).to.include('"balanceMicro":-50,');
    expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(-50n);

    sim.breakRule('overdraws', false);
    sim.breakRule('no_request_uuid_echo');
    const refused = await call(sim, 'bet', betBody('150'));
    expect(refused.json).to.deep.equal({ status: 'RS_ERROR_NOT_ENOUGH_MONEY', balanceMicro: -50, currency: CURRENCY });

    sim.reset();
    expect(sim.brokenRules).to.deep.equal([]);
    sim.setBalance(PLAYER, CURRENCY, 100n);
    const body = betBody('150');
    expect((await call(sim, 'bet', body)).json).to.deep.equal({
      status: 'RS_ERROR_NOT_ENOUGH_MONEY',
      requestUuid: body.requestUuid,
      balanceMicro: '100',
      currency: CURRENCY,
    });
  });

  it('accepts_bad_signature processes a call signed with a wrong secret, still recorded as a bad signature', async () => {
    sim.reset();
    sim.setBalance(PLAYER, CURRENCY, 100n);
    sim.breakRule('accepts_bad_signature');
    const reply = await call(sim, 'bet', betBody('40'), { secret: 'not-the-secret' });
    expect(reply.json).to.include({ status: 'RS_OK', balanceMicro: '60' });
    expect(sim.requests[0]?.signatureValid).to.equal(false);
  });
});

// D27: a debit that arrives after its own rollback (a network delay, a retransmission) must
// move no money, so every rollback leaves a tombstone for the transactionUuid it references.
describe('wallet simulator rollback tombstones (D27)', () => {
  let sim: WalletSimulator;
  // the simulator's ledger clock, moved by the tests (signatures keep the real clock)
  let now = new Date('2025-01-31T12:00:00Z');

  before(async () => {
    sim = await WalletSimulator.start({ now: () => now });
    sim.addCredential(KID, SECRET);
  });

  after(async () => {
    await sim.close();
  });

  beforeEach(() => {
    sim.reset();
    now = new Date('2025-01-31T12:00:00Z');
    sim.setBalance(PLAYER, CURRENCY, 1_000_000n);
  });

  it('refuses a debit whose transactionUuid was rolled back before it arrived, moving no money', async () => {
    const bet = betBody('300000');
    // the rollback overtakes its debit: nothing is booked yet (4.2 rule 4)
    const rollback = await call(sim, 'rollback', rollbackBody(bet.transactionUuid));
    expect(rollback.json).to.include({ status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', balanceMicro: '1000000' });
    const late = await call(sim, 'bet', bet);
    expect(late.json).to.deep.equal({
      status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST',
      requestUuid: bet.requestUuid,
      balanceMicro: '1000000',
      currency: CURRENCY,
      message: 'transaction was rolled back',
    });
    // a retry under a new requestUuid is refused alike; a win for it finds no bet
    expect((await call(sim, 'bet', { ...bet, requestUuid: randomUUID() })).json?.status).to.equal('RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
    expect((await call(sim, 'win', winBody(bet, '100'))).json?.status).to.equal('RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
    expect(sim.transactions).to.deep.equal([]);
    expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
    // a race of the network, not something a correct service never sends
    expect(sim.violations).to.deep.equal([]);
  });

  it('keeps the tombstone of a booked bet it rolled back: the debit is answered as a duplicate, never booked again', async () => {
    const bet = betBody('300000');
    await call(sim, 'bet', bet);
    await call(sim, 'rollback', rollbackBody(bet.transactionUuid));
    expect((await call(sim, 'bet', { ...bet, requestUuid: randomUUID() })).json?.status).to.equal('RS_ERROR_DUPLICATE_TRANSACTION');
    expect(sim.transactions.map((t) => t.type)).to.deep.equal(['bet', 'rollback']);
    expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(1_000_000n);
  });

  it('leaves other transactionUuids alone', async () => {
    await call(sim, 'rollback', rollbackBody(randomUUID()));
    expect((await call(sim, 'bet', betBody('300000'))).json).to.include({ status: 'RS_OK', balanceMicro: '700000' });
  });

  it('keeps a tombstone for 4 months, then forgets it', async () => {
    const bet = betBody('300000');
    await call(sim, 'rollback', rollbackBody(bet.transactionUuid));
    // 4 calendar months after 31 January is 31 May
    now = new Date('2025-05-31T11:59:59.999Z');
    expect((await call(sim, 'bet', bet)).json?.status).to.equal('RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
    now = new Date('2025-05-31T12:00:00Z');
    expect((await call(sim, 'bet', { ...bet, requestUuid: randomUUID() })).json).to.include({ status: 'RS_OK', balanceMicro: '700000' });
  });
});

describe('wallet simulator with a path prefix', () => {
  let sim: WalletSimulator;

  before(async () => {
    sim = await WalletSimulator.start({ pathPrefix: '/op1' });
    sim.addCredential(KID, SECRET);
    sim.setBalance(PLAYER, CURRENCY, 1000n);
  });

  after(async () => {
    await sim.close();
  });

  it('serves under the prefix and verifies the signature over the full path (4.2)', async () => {
    expect(sim.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/op1$/);
    expect((await call(sim, 'bet', betBody('10'))).json).to.include({ status: 'RS_OK', balanceMicro: '990' });
    expect(sim.requests[0]?.path).to.equal('/op1/wallet/bet');
    expect((await call(sim, 'bet', betBody('10'), { signedPath: '/wallet/bet' })).httpStatus).to.equal(401);
    const origin = new URL(sim.url).origin;
    expect((await fetch(`${origin}/wallet/bet`, { method: 'POST', body: '{}' })).status).to.equal(404);
    expect(sim.balanceOf(PLAYER, CURRENCY)).to.equal(990n);
  });
});

describe('wallet simulator close()', () => {
  it('ends hung and delayed exchanges', async () => {
    const sim = await WalletSimulator.start();
    sim.addCredential(KID, SECRET);
    sim.setBalance(PLAYER, CURRENCY, 1000n);
    sim.setFault('bet', { kind: 'hang' });
    sim.setFault('win', { kind: 'delay', ms: 60_000 });
    const hung = call(sim, 'bet', betBody('10')).then(
      () => 'answered',
      () => 'failed',
    );
    const delayed = call(sim, 'win', winBody(betBody('10'), '1')).then(
      () => 'answered',
      () => 'failed',
    );
    while (sim.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const started = Date.now();
    await sim.close();
    expect(Date.now() - started).to.be.below(1000);
    expect(await hung).to.equal('failed');
    expect(await delayed).to.equal('failed');
    expect(sim.requests.map((r) => r.response)).to.deep.equal(['no_response', 'no_response']);
  });
});

// D24, D35: the sandbox is a long-lived process anyone who reaches its port can send requests
// to. What it keeps of them is bounded by count and by bytes, the oldest dropped first; of a
// request whose signature does not verify only the start of the body is kept. The admin API
// (src/simulator/admin.ts) lists the latest and says what the log holds.
describe('wallet simulator request log (D24, D35)', () => {
  const TOKEN = 'request-log-admin-token';
  const LARGE = 256 * 1024;
  let sim: WalletSimulator;

  async function start(requestLog: Partial<RequestLogLimits>): Promise<WalletSimulator> {
    let started: WalletSimulator | undefined;
    const admin = adminHandler(() => started!, { token: TOKEN });
    started = await WalletSimulator.start({ intercept: admin, requestLog });
    started.addCredential(KID, SECRET);
    return started;
  }
  afterEach(() => sim?.close());

  const listed = async (query = '') => {
    const response = await fetch(`${sim.url}/admin/requests${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: response.status, body: (await response.json()) as any };
  };
  // a large body nobody signed; its first bytes name it
  const unsigned = (marker: string) =>
    fetch(`${sim.url}/wallet/bet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-rgs-key-id': KID, 'x-rgs-timestamp': String(Math.floor(Date.now() / 1000)), 'x-rgs-signature': 'AAAA' },
      body: `{"marker":"${marker}","pad":"${'x'.repeat(LARGE)}"}`,
    }).then((response) => response.status);

  it('keeps at most maxEntries requests: the latest, oldest first, each unsigned body cut', async () => {
    sim = await start({ maxEntries: 20 });
    for (let i = 0; i < 60; i++) expect(await unsigned(`m${i}`)).to.equal(401);
    const { status, body } = await listed('?last=1000');
    expect(status).to.equal(200);
    expect(body).to.include({ received: 60, kept: 20, dropped: 40 });
    expect(body.requests.map((r: { body: string }) => /"marker":"(m\d+)"/.exec(r.body)?.[1])).to.deep.equal(
      Array.from({ length: 20 }, (_, i) => `m${40 + i}`),
    );
    for (const request of body.requests) {
      expect(request).to.include({ method: 'POST', path: '/wallet/bet', endpoint: 'bet', signatureValid: false, bodyBytes: LARGE + 25, bodyCut: true });
      expect(Buffer.byteLength(request.body)).to.equal(REQUEST_LOG_LIMITS.unauthenticatedBodyBytes);
      expect(request.response).to.deep.equal({ httpStatus: 401, status: 'RS_ERROR_INVALID_SIGNATURE' });
    }
    expect(body.keptBytes).to.be.below(20 * 4 * 1024);
    expect(sim.requests).to.have.length(20);
    // the findings are bounded the same way
    expect(sim.violations).to.have.length(20);
  });

  it('keeps at most maxBytes, however many requests would fit the count', async () => {
    sim = await start({ maxBytes: 32 * 1024, unauthenticatedBodyBytes: 4096 });
    for (let i = 0; i < 60; i++) expect(await unsigned(`m${i}`)).to.equal(401);
    const { body } = await listed('?last=1000');
    expect(body.limits).to.deep.equal({ ...REQUEST_LOG_LIMITS, maxBytes: 32 * 1024, unauthenticatedBodyBytes: 4096 });
    expect(body.received).to.equal(60);
    expect(body.keptBytes).to.be.at.most(32 * 1024);
    expect(body.kept).to.be.above(0).and.below(10);
    expect(body.kept + body.dropped).to.equal(60);
    expect(/"marker":"(m\d+)"/.exec(body.requests.at(-1).body)?.[1], 'the latest is kept').to.equal('m59');
  });

  it('keeps a signed request whole; lists the latest 100 unless asked; refuses a bad count', async () => {
    sim = await start({});
    const raw = JSON.stringify(common());
    expect((await call(sim, 'balance', raw)).httpStatus).to.equal(200);
    for (let i = 0; i < 120; i++) await unsigned(`m${i}`);
    const { body } = await listed();
    expect(body).to.include({ received: 121, kept: 121, dropped: 0 });
    expect(body.requests).to.have.length(100);
    expect(sim.requests[0]).to.include({ rawBody: raw, bodyBytes: Buffer.byteLength(raw), signatureValid: true });
    expect((await listed('?last=1')).body.requests[0].body).to.match(/"marker":"m119"/);
    const first = (await listed('?last=121')).body.requests[0];
    expect(first).to.include({ body: raw, bodyCut: false, signatureValid: true });
    expect(first.response).to.deep.equal({ httpStatus: 200, status: 'RS_OK' });
    for (const bad of ['?last=0', '?last=1001', '?last=x']) {
      const refused = await listed(bad);
      expect(refused.status, bad).to.equal(400);
      expect(refused.body.error).to.equal('invalid_request');
    }
  });
});
