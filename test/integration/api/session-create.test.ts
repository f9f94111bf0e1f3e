import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openServerSeed } from '../../../src/shared/game/fairness/seed-vault.js';
import type { WalletFault } from '../../../src/simulator/wallet-simulator.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import type { ApiResponse } from '../../support/signed-client.js';

// POST /v1/session: contract 4.1, 2.2-2.4, 5.6, 5.7; DECISIONS D2, D7, D8, D13, D20.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const HOUR_MS = 60 * 60 * 1000;
const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

type Claims = jwt.JwtPayload & Record<string, unknown>;

function walletRequestsOf(h: Harness, operator: TestOperator) {
  return h.wallet.requests.filter((r) => (r.body as { operatorId?: unknown } | undefined)?.operatorId === operator.operatorId);
}

async function sessionsOf(h: Harness, operator: TestOperator) {
  return h.svc.db.session.findMany({ where: { operatorId: operator.operatorId } });
}

async function walletCallsOf(h: Harness, operator: TestOperator) {
  return h.svc.db.walletCall.findMany({ where: { operatorId: operator.operatorId } });
}

function expectRejected(response: ApiResponse, reason: string) {
  expect(response.status, response.text).to.equal(422);
  expect(response.body).to.include({ status: 'RS_ERROR_USER_DISABLED', reason });
  expect(response.body.error).to.be.a('string').and.match(/^[a-z][a-z0-9_]*$/);
  expect(response.body.message).to.be.a('string').and.not.equal('');
}

function expectError(response: ApiResponse, status: number, error: string) {
  expect(response.status, response.text).to.equal(status);
  expect(response.body).to.be.an('object');
  expect(response.body.error, response.text).to.equal(error);
  expect(response.body.message).to.be.a('string').and.not.equal('');
}

describe('POST /v1/session (contract 4.1, 2.2-2.4; D2, D7, D8, D13)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());
  afterEach(() => h.wallet.setFault('balance', null));

  describe('happy path', () => {
    it('answers 200 with exactly the 2.3 fields, a 60-minute HS256 token and launch URL, and stores the session and seed', async () => {
      const operator = await h.onboard();
      const rgLimits = { dailyLossMicro: '5000000', dailyWagerMicro: '20000000', sessionTimeSeconds: 1800 };
      const body = operator.sessionBody({ clientSeed: 'my lucky seed!', rgLimits, lang: 'en-GB', returnUrl: 'https://casino.example/lobby' });
      h.wallet.setBalance(body.playerRef as string, 'EUR', 5_000_000n);

      const before = Date.now();
      const response = await operator.request('POST', '/v1/session', body);
      const after = Date.now();

      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.have.all.keys('sessionId', 'sessionToken', 'launchUrl', 'expiresAt', 'serverSeedHash', 'sandbox');
      const { sessionId, sessionToken, launchUrl, expiresAt, serverSeedHash } = response.body as Record<string, string>;
      expect(sessionId).to.match(UUID);
      expect(serverSeedHash).to.match(/^[0-9a-f]{64}$/);
      expect(launchUrl).to.equal(`${h.svc.config.publicUrl}/play/dice?token=${sessionToken}`);
      expect(new URL(launchUrl!).searchParams.get('token')).to.equal(sessionToken);
      expect(expiresAt).to.match(ISO);
      const expiresMs = Date.parse(expiresAt!);
      expect(expiresMs).to.be.within(before + HOUR_MS - 2000, after + HOUR_MS + 2000);

      // contract 5.6: HS256 under the service's JWT secret
      const decoded = jwt.decode(sessionToken!, { complete: true });
      expect(decoded?.header.alg).to.equal('HS256');
      const claims = jwt.verify(sessionToken!, h.svc.config.jwtSecret, { algorithms: ['HS256'] }) as Claims;
      expect(claims).to.include({
        sub: body.playerRef,
        operatorId: operator.operatorId,
        sessionId,
        currency: 'EUR',
        jurisdiction: 'MT',
        lang: 'en-GB',
        mode: 'real',
      });
      expect(claims.rgLimits).to.deep.equal(rgLimits);
      expect(claims.exp! - claims.iat!).to.equal(3600);
      expect(claims.exp! * 1000).to.be.closeTo(expiresMs, 1000);
      expect(claims.iat! * 1000).to.be.within(before - 2000, after + 2000);
      // the token is not signed with an operator secret
      expect(() => jwt.verify(sessionToken!, operator.apiSecret, { algorithms: ['HS256'] })).to.throw();

      const session = await h.svc.db.session.findUniqueOrThrow({ where: { id: sessionId! } });
      expect(session).to.include({
        operatorId: operator.operatorId,
        playerRef: body.playerRef,
        gameCode: 'dice',
        currency: 'EUR',
        lang: 'en-GB',
        jurisdiction: 'MT',
        mode: 'REAL',
        state: 'ACTIVE',
        returnUrl: 'https://casino.example/lobby',
        sessionTimeSeconds: 1800,
        dailyLossMicro: 5_000_000n,
        dailyWagerMicro: 20_000_000n,
        demoBalanceMicro: null,
        terminatedAt: null,
      });
      expect(session.expiresAt.toISOString()).to.equal(new Date(expiresMs).toISOString());

      // D2: the committed hash is sha256_hex of the 64-hex-character seed text, stored encrypted
      const seeds = await h.svc.db.seed.findMany({ where: { sessionId: sessionId! } });
      expect(seeds).to.have.length(1);
      const seed = seeds[0]!;
      expect(seed).to.include({ serverSeedHash, clientSeed: 'my lucky seed!', current: true, retiredAt: null, nextNonce: 0 });
      const serverSeed = openServerSeed(h.svc.config.masterKey, seed.id, seed.encryptedServerSeed);
      expect(serverSeed).to.match(/^[0-9a-f]{64}$/);
      expect(sha256Hex(serverSeed)).to.equal(serverSeedHash);
      expect(Buffer.from(seed.encryptedServerSeed).toString('utf8')).to.not.include(serverSeed);
    });

    it('generates a 32 lower-case hex clientSeed when none is supplied (D2), a fresh server seed per session, and an rgLimits claim', async () => {
      const operator = await h.onboard();
      const first = await operator.launch();
      const second = await operator.launch();
      expect(first.status, first.text).to.equal(200);
      expect(second.status, second.text).to.equal(200);
      expect(first.body.serverSeedHash).to.not.equal(second.body.serverSeedHash);

      const seeds = await h.svc.db.seed.findMany({ where: { sessionId: { in: [first.body.sessionId, second.body.sessionId] } } });
      expect(seeds).to.have.length(2);
      for (const seed of seeds) expect(seed.clientSeed).to.match(/^[0-9a-f]{32}$/);
      expect(seeds[0]!.clientSeed).to.not.equal(seeds[1]!.clientSeed);

      const claims = jwt.verify(first.body.sessionToken, h.svc.config.jwtSecret, { algorithms: ['HS256'] }) as Claims;
      expect(claims.mode).to.equal('real');
      expect(claims.rgLimits).to.be.an('object');
      expect(claims.exp! - claims.iat!).to.equal(3600);
    });

    it('asks the wallet for the balance exactly once, signed, with only the 2.9 fields, and audits the call', async () => {
      const operator = await h.onboard();
      const body = operator.sessionBody();
      h.wallet.setBalance(body.playerRef as string, 'EUR', 7_000_000n);
      const violationsBefore = h.wallet.violations.length;

      const response = await operator.request('POST', '/v1/session', body);
      expect(response.status, response.text).to.equal(200);

      const requests = walletRequestsOf(h, operator);
      expect(requests).to.have.length(1);
      const request = requests[0]!;
      expect(request.method).to.equal('POST');
      expect(request.endpoint).to.equal('balance');
      expect(request.path).to.equal('/wallet/balance');
      expect(request.signatureValid).to.equal(true);
      expect(request.headers['x-rgs-key-id']).to.equal(operator.walletKeyId);
      const sent = request.body as Record<string, unknown>;
      expect(sent).to.have.all.keys('requestUuid', 'operatorId', 'playerRef', 'currency', 'gameCode');
      expect(sent).to.include({ operatorId: operator.operatorId, playerRef: body.playerRef, currency: 'EUR', gameCode: 'dice' });
      expect(sent.requestUuid).to.be.a('string').and.match(UUID);
      expect(request.response).to.deep.include({ httpStatus: 200, status: 'RS_OK' });
      expect(h.wallet.violations.slice(violationsBefore)).to.deep.equal([]);
      // nothing money-moving
      expect(h.wallet.transactions.filter((t) => t.playerRef === body.playerRef)).to.deep.equal([]);
      expect(h.wallet.balanceOf(body.playerRef as string, 'EUR')).to.equal(7_000_000n);

      const calls = await walletCallsOf(h, operator);
      expect(calls).to.have.length(1);
      const call = calls[0]!;
      expect(call).to.include({
        direction: 'OUT',
        endpoint: 'balance',
        requestUuid: sent.requestUuid,
        attempt: 1,
        status: 'RS_OK',
        httpStatus: 200,
        transactionUuid: null,
        requestBody: request.rawBody,
      });
      expect(call.latencyMs).to.be.a('number').and.at.least(0);
      expect(call.respondedAt).to.be.an.instanceOf(Date);
    });

    it('mode demo (D8): no wallet call at all, a DEMO session with 1,000 major units, token mode demo', async () => {
      const operator = await h.onboard();
      const response = await operator.launch({ mode: 'demo' });
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.have.all.keys('sessionId', 'sessionToken', 'launchUrl', 'expiresAt', 'serverSeedHash', 'sandbox');

      expect(walletRequestsOf(h, operator)).to.deep.equal([]);
      expect(await walletCallsOf(h, operator)).to.deep.equal([]);
      const session = await h.svc.db.session.findUniqueOrThrow({ where: { id: response.body.sessionId } });
      expect(session).to.include({ mode: 'DEMO', state: 'ACTIVE', demoBalanceMicro: 100_000_000n });
      const claims = jwt.verify(response.body.sessionToken, h.svc.config.jwtSecret, { algorithms: ['HS256'] }) as Claims;
      expect(claims.mode).to.equal('demo');
    });
  });

  describe('422 rejections (contract 2.4, D7)', () => {
    it('self_excluded when the wallet answers RS_ERROR_USER_DISABLED with a generic message; no session', async () => {
      const operator = await h.onboard();
      const body = operator.sessionBody();
      h.wallet.disablePlayer(body.playerRef as string, 'player is disabled by the operator');

      const response = await operator.request('POST', '/v1/session', body);
      expectRejected(response, 'self_excluded');
      expect(await sessionsOf(h, operator)).to.deep.equal([]);
      const requests = walletRequestsOf(h, operator);
      expect(requests).to.have.length(1);
      expect(requests[0]!.endpoint).to.equal('balance');
      const calls = await walletCallsOf(h, operator);
      expect(calls.map((c) => c.status)).to.deep.equal(['RS_ERROR_USER_DISABLED']);
    });

    it('uses the wallet message as the reason only when it is exactly a 2.4 reason (kyc_required)', async () => {
      const operator = await h.onboard();
      const kyc = operator.sessionBody();
      h.wallet.disablePlayer(kyc.playerRef as string, 'kyc_required');
      expectRejected(await operator.request('POST', '/v1/session', kyc), 'kyc_required');

      const almost = operator.sessionBody();
      h.wallet.disablePlayer(almost.playerRef as string, 'kyc_required: documents expired');
      expectRejected(await operator.request('POST', '/v1/session', almost), 'self_excluded');

      expect(await sessionsOf(h, operator)).to.deep.equal([]);
    });

    it('jurisdiction_blocked for a jurisdiction on the operator block list, without a wallet call', async () => {
      const operator = await h.onboard({ jurisdictionsBlocked: ['US', 'FR'] });
      expectRejected(await operator.launch({ jurisdiction: 'US' }), 'jurisdiction_blocked');
      expect(await sessionsOf(h, operator)).to.deep.equal([]);
      expect(walletRequestsOf(h, operator)).to.deep.equal([]);

      // control: an unblocked jurisdiction launches
      const allowed = await operator.launch({ jurisdiction: 'MT' });
      expect(allowed.status, allowed.text).to.equal(200);
    });

    it('currency_not_permitted for a currency outside the operator list, without a wallet call', async () => {
      const operator = await h.onboard({ currencies: ['EUR', 'GBP'] });
      expectRejected(await operator.launch({ currency: 'USD' }), 'currency_not_permitted');
      expect(await sessionsOf(h, operator)).to.deep.equal([]);
      expect(walletRequestsOf(h, operator)).to.deep.equal([]);

      const allowed = await operator.launch({ currency: 'GBP' });
      expect(allowed.status, allowed.text).to.equal(200);
    });

    it('operator_suspended for a suspended operator, without a wallet call', async () => {
      const operator = await h.onboard({ suspended: true });
      expectRejected(await operator.launch(), 'operator_suspended');
      expect(await sessionsOf(h, operator)).to.deep.equal([]);
      expect(walletRequestsOf(h, operator)).to.deep.equal([]);
    });

    it('rg_limit_set_too_loose for a missing required limit or one above the jurisdiction maximum; a compliant one passes', async () => {
      const operator = await h.onboard({
        rgMax: [{ jurisdiction: 'MT', maxima: { sessionTimeSeconds: '1800', dailyLossMicro: '10000000' } }],
      });
      const cases: Record<string, unknown>[] = [
        {}, // no rgLimits at all
        { rgLimits: { sessionTimeSeconds: 1800 } }, // dailyLossMicro missing
        { rgLimits: { dailyLossMicro: '10000000' } }, // sessionTimeSeconds missing
        { rgLimits: { sessionTimeSeconds: 1801, dailyLossMicro: '10000000' } },
        { rgLimits: { sessionTimeSeconds: 1800, dailyLossMicro: '10000001' } },
      ];
      for (const overrides of cases) {
        expectRejected(await operator.launch(overrides), 'rg_limit_set_too_loose');
      }
      expect(await sessionsOf(h, operator)).to.deep.equal([]);
      expect(walletRequestsOf(h, operator)).to.deep.equal([]);

      // at the maxima (and a field the operator does not limit) is compliant
      const compliant = await operator.launch({
        rgLimits: { sessionTimeSeconds: 1800, dailyLossMicro: '10000000', dailyWagerMicro: '999999999' },
      });
      expect(compliant.status, compliant.text).to.equal(200);
      // the maxima are per jurisdiction: none are set for GB
      const otherJurisdiction = await operator.launch({ jurisdiction: 'GB' });
      expect(otherJurisdiction.status, otherJurisdiction.text).to.equal(200);
      expect(await sessionsOf(h, operator)).to.have.length(2);
    });
  });

  describe('other refusals', () => {
    it('422 game_not_available for a gameCode outside the catalogue, or a game the service does not play yet (D39); no session, no wallet call', async () => {
      const operator = await h.onboard();
      expectError(await operator.launch({ gameCode: 'roulette' }), 422, 'game_not_available');
      expectError(await operator.launch({ gameCode: 'crash' }), 422, 'game_not_available');
      expect(await sessionsOf(h, operator)).to.deep.equal([]);
      expect(walletRequestsOf(h, operator)).to.deep.equal([]);
    });

    it('403 operator_mismatch when the body names another operator; no session for either, no wallet call', async () => {
      const signer = await h.onboard();
      const other = await h.onboard();
      const response = await signer.request('POST', '/v1/session', other.sessionBody());
      expectError(response, 403, 'operator_mismatch');
      expect(await sessionsOf(h, signer)).to.deep.equal([]);
      expect(await sessionsOf(h, other)).to.deep.equal([]);
      expect(walletRequestsOf(h, signer)).to.deep.equal([]);
      expect(walletRequestsOf(h, other)).to.deep.equal([]);
    });
  });

  describe('wallet failures on the balance call (D13)', () => {
    const uncertain: { name: string; fault: WalletFault; status: string; httpStatus: number | null }[] = [
      { name: 'no answer (hang)', fault: { kind: 'hang' }, status: 'RS_ERROR_TIMEOUT', httpStatus: null },
      { name: 'an answer after the 1000 ms timeout', fault: { kind: 'delay', ms: 1500 }, status: 'RS_ERROR_TIMEOUT', httpStatus: null },
      { name: 'HTTP 500', fault: { kind: 'http', httpStatus: 500 }, status: 'RS_ERROR_UNKNOWN', httpStatus: 500 },
      { name: 'a body that is not JSON', fault: { kind: 'invalid_json' }, status: 'RS_ERROR_UNKNOWN', httpStatus: 200 },
      { name: 'an unknown status string', fault: { kind: 'status', status: 'RS_ERROR_SOMETHING_NEW' }, status: 'RS_ERROR_UNKNOWN', httpStatus: 200 },
      { name: 'a requestUuid that does not echo', fault: { kind: 'wrong_request_uuid' }, status: 'RS_ERROR_UNKNOWN', httpStatus: 200 },
    ];
    for (const { name, fault, status, httpStatus } of uncertain) {
      it(`${name}: 502 wallet_unavailable, no session, audit status ${status}`, async () => {
        const operator = await h.onboard();
        const body = operator.sessionBody();
        h.wallet.setBalance(body.playerRef as string, 'EUR', 1_000_000n);
        h.wallet.setFault('balance', fault);

        const response = await operator.request('POST', '/v1/session', body);
        expectError(response, 502, 'wallet_unavailable');
        expect(await sessionsOf(h, operator)).to.deep.equal([]);
        expect(await h.svc.db.seed.count({ where: { session: { operatorId: operator.operatorId } } })).to.equal(0);
        const requests = walletRequestsOf(h, operator);
        expect(requests).to.have.length(1);
        const calls = await walletCallsOf(h, operator);
        expect(calls).to.have.length(1);
        expect(calls[0]).to.include({ endpoint: 'balance', attempt: 1, status, httpStatus, requestUuid: (requests[0]!.body as { requestUuid: string }).requestUuid });
        expect(calls[0]!.latencyMs).to.be.a('number');
      });
    }

    it('a fatal status (RS_ERROR_INVALID_PARTNER): 502 wallet_rejected, no session', async () => {
      const operator = await h.onboard();
      h.wallet.setFault('balance', { kind: 'status', status: 'RS_ERROR_INVALID_PARTNER' });
      const response = await operator.launch();
      expectError(response, 502, 'wallet_rejected');
      expect(await sessionsOf(h, operator)).to.deep.equal([]);
      const calls = await walletCallsOf(h, operator);
      expect(calls.map((c) => [c.status, c.httpStatus])).to.deep.equal([['RS_ERROR_INVALID_PARTNER', 200]]);
    });
  });
});

// contract 5.7, D20: a siteverify-style verifier run by the test.
describe('POST /v1/session bot challenge (contract 5.7, D20)', () => {
  const SECRET = 'bot-challenge-secret-for-tests';
  const GOOD = 'good-token';
  let verifier: Server;
  let verifierUrl: string;
  let closedUrl: string;
  const forms: URLSearchParams[] = [];
  let withChallenge: Harness;
  let failOpen: Harness;
  let failClosed: Harness;
  let plain: Harness;

  before(async () => {
    verifier = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        forms.push(form);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: form.get('secret') === SECRET && form.get('response') === GOOD }));
      });
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    verifierUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;

    // a port that nothing listens on
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/siteverify`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    [withChallenge, failOpen, failClosed, plain] = await Promise.all([
      startHarness({ BOT_CHALLENGE_SECRET: SECRET, BOT_CHALLENGE_VERIFY_URL: verifierUrl }),
      startHarness({ BOT_CHALLENGE_SECRET: SECRET, BOT_CHALLENGE_VERIFY_URL: closedUrl }),
      startHarness({ BOT_CHALLENGE_SECRET: SECRET, BOT_CHALLENGE_VERIFY_URL: closedUrl, BOT_CHALLENGE_FAIL_CLOSED: 'true' }),
      startHarness(),
    ]);
  });
  after(async () => {
    await Promise.all([withChallenge, failOpen, failClosed, plain].filter(Boolean).map((h) => h.close()));
    await new Promise<void>((resolve) => verifier.close(() => resolve()));
  });
  beforeEach(() => {
    forms.length = 0;
  });

  const expectRefused = async (h: Harness, operator: TestOperator, response: ApiResponse) => {
    expectError(response, 401, 'bot_challenge_verification_failed');
    expect(await sessionsOf(h, operator)).to.deep.equal([]);
    expect(walletRequestsOf(h, operator)).to.deep.equal([]);
  };

  it('401 bot_challenge_verification_failed without a token (the verifier is not asked)', async () => {
    const operator = await withChallenge.onboard();
    await expectRefused(withChallenge, operator, await operator.launch());
    expect(forms).to.have.length(0);
  });

  it('401 for a token the verifier refuses; it receives secret, response and remoteip as form fields', async () => {
    const operator = await withChallenge.onboard();
    await expectRefused(withChallenge, operator, await operator.launch({ botChallengeToken: 'bad-token' }));
    expect(forms).to.have.length(1);
    expect(forms[0]!.get('secret')).to.equal(SECRET);
    expect(forms[0]!.get('response')).to.equal('bad-token');
    expect(forms[0]!.get('remoteip')).to.be.a('string').and.match(/127\.0\.0\.1$/);
  });

  it('200 for a good token in the body field botChallengeToken', async () => {
    const operator = await withChallenge.onboard();
    const response = await operator.launch({ botChallengeToken: GOOD });
    expect(response.status, response.text).to.equal(200);
    expect(forms.map((f) => f.get('response'))).to.deep.equal([GOOD]);
    expect(await sessionsOf(withChallenge, operator)).to.have.length(1);
  });

  it('200 for a good token in the header bot-challenge-response', async () => {
    const operator = await withChallenge.onboard();
    const response = await operator.launch({}, { headers: { 'bot-challenge-response': GOOD } });
    expect(response.status, response.text).to.equal(200);
    expect(forms.map((f) => f.get('response'))).to.deep.equal([GOOD]);
    expect(await sessionsOf(withChallenge, operator)).to.have.length(1);
  });

  it('a refused challenge is not stored under the requestUuid: a retry with a passing token launches', async () => {
    const operator = await withChallenge.onboard();
    const body = operator.sessionBody({ requestUuid: randomUUID() });
    await expectRefused(withChallenge, operator, await operator.request('POST', '/v1/session', body));
    const retry = await operator.request('POST', '/v1/session', body, {
      headers: { 'bot-challenge-response': GOOD },
      timestamp: Math.floor(Date.now() / 1000) + 1,
    });
    expect(retry.status, retry.text).to.equal(200);
    expect(retry.headers.get('idempotent-replayed')).to.equal(null);
    expect(await sessionsOf(withChallenge, operator)).to.have.length(1);
  });

  it('an unreachable verifier lets the request through by default (fail-open)', async () => {
    const operator = await failOpen.onboard();
    const response = await operator.launch({ botChallengeToken: 'any-token' });
    expect(response.status, response.text).to.equal(200);
    expect(await sessionsOf(failOpen, operator)).to.have.length(1);
    // the token is still required
    const another = await failOpen.onboard();
    await expectRefused(failOpen, another, await another.launch());
  });

  it('an unreachable verifier refuses with 401 when BOT_CHALLENGE_FAIL_CLOSED=true', async () => {
    const operator = await failClosed.onboard();
    await expectRefused(failClosed, operator, await operator.launch({ botChallengeToken: GOOD }));
  });

  it('no secret configured: no check at all', async () => {
    const operator = await plain.onboard();
    const response = await operator.launch();
    expect(response.status, response.text).to.equal(200);
    expect(forms).to.have.length(0);
  });
});
