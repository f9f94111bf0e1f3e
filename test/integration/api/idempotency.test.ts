import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import type { ApiResponse } from '../../support/signed-client.js';

// Inbound idempotency: DECISIONS D17, contract 4.1 rule 2 and 4.3. A retry is freshly signed
// (new timestamp) and reuses the requestUuid; a replay of the same signature is a different
// thing (401), so every retry here carries its own timestamp.

const nowSeconds = () => Math.floor(Date.now() / 1000);
const REPLAYED = 'idempotent-replayed';

function walletRequestsOf(h: Harness, operator: TestOperator) {
  return h.wallet.requests.filter((r) => (r.body as { operatorId?: unknown } | undefined)?.operatorId === operator.operatorId);
}

const sessionsOf = (h: Harness, operator: TestOperator) =>
  h.svc.db.session.findMany({ where: { operatorId: operator.operatorId } });

function expectSame(retry: ApiResponse, original: ApiResponse) {
  expect(retry.status, retry.text).to.equal(original.status);
  expect(retry.body).to.deep.equal(original.body);
}

describe('inbound idempotency (D17, contract 4.1 rule 2)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());
  afterEach(() => h.wallet.setFault('balance', null));

  it('a freshly signed retry with the same requestUuid and body returns the stored answer: one session, one balance call', async () => {
    const operator = await h.onboard();
    const body = operator.sessionBody({ requestUuid: randomUUID() });
    const t = nowSeconds();

    const first = await operator.request('POST', '/v1/session', body, { timestamp: t });
    expect(first.status, first.text).to.equal(200);
    expect(first.headers.get(REPLAYED)).to.equal(null);
    // the statement that created the session stored the answer with it
    const entry = await h.svc.db.idempotencyEntry.findFirst({ where: { operatorId: operator.operatorId, requestUuid: body.requestUuid as string } });
    expect(entry).to.include({ state: 'COMPLETED', responseStatus: 200, endpoint: 'POST /v1/session' });
    expect(entry!.responseBody).to.include({ sessionId: first.body.sessionId, serverSeedHash: first.body.serverSeedHash, expiresAt: first.body.expiresAt });

    const retry = await operator.request('POST', '/v1/session', body, { timestamp: t + 1 });
    expectSame(retry, first);
    expect(retry.body.sessionId).to.equal(first.body.sessionId);
    expect(retry.headers.get(REPLAYED)).to.equal('true');

    const third = await operator.request('POST', '/v1/session', body, { timestamp: t - 1 });
    expectSame(third, first);

    expect(await sessionsOf(h, operator)).to.have.length(1);
    expect(walletRequestsOf(h, operator)).to.have.length(1);
    expect(await h.svc.db.walletCall.count({ where: { operatorId: operator.operatorId } })).to.equal(1);
  });

  it('the same requestUuid with a different body is 409 idempotency_key_reused and creates nothing', async () => {
    const operator = await h.onboard();
    const requestUuid = randomUUID();
    const t = nowSeconds();
    const first = await operator.request('POST', '/v1/session', operator.sessionBody({ requestUuid }), { timestamp: t });
    expect(first.status, first.text).to.equal(200);

    const other = await operator.request('POST', '/v1/session', operator.sessionBody({ requestUuid }), { timestamp: t + 1 });
    expect(other.status, other.text).to.equal(409);
    expect(other.body).to.include({ error: 'idempotency_key_reused' });
    expect(other.body.message).to.be.a('string').and.not.equal('');

    expect(await sessionsOf(h, operator)).to.have.length(1);
    expect(walletRequestsOf(h, operator)).to.have.length(1);
  });

  it('8 concurrent identical requests produce one session and one wallet call, and all answer 200 with it', async () => {
    const operator = await h.onboard();
    const body = operator.sessionBody({ requestUuid: randomUUID() });
    // the first request is held at the wallet a moment so the others really overlap it
    h.wallet.setFault('balance', { kind: 'delay', ms: 200 }, 1);
    const t = nowSeconds();
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => operator.request('POST', '/v1/session', body, { timestamp: t - 4 + i })),
    );

    for (const response of responses) expect(response.status, response.text).to.equal(200);
    const sessionIds = new Set(responses.map((r) => r.body.sessionId));
    expect(sessionIds.size).to.equal(1);
    expect(responses.every((r) => r.body.sessionToken === responses[0]!.body.sessionToken)).to.equal(true);
    expect(responses.filter((r) => r.headers.get(REPLAYED) === 'true')).to.have.length(7);

    const sessions = await sessionsOf(h, operator);
    expect(sessions.map((s) => s.id)).to.deep.equal([...sessionIds]);
    expect(walletRequestsOf(h, operator)).to.have.length(1);
    expect(await h.svc.db.walletCall.count({ where: { operatorId: operator.operatorId } })).to.equal(1);
  });

  it('a 422 rejection is stored and replayed without asking the wallet again', async () => {
    const operator = await h.onboard();
    const body = operator.sessionBody({ requestUuid: randomUUID() });
    h.wallet.disablePlayer(body.playerRef as string, 'excluded');
    const t = nowSeconds();

    const first = await operator.request('POST', '/v1/session', body, { timestamp: t });
    expect(first.status, first.text).to.equal(422);
    expect(first.body).to.include({ status: 'RS_ERROR_USER_DISABLED', reason: 'self_excluded' });

    const retry = await operator.request('POST', '/v1/session', body, { timestamp: t + 1 });
    expectSame(retry, first);
    expect(retry.headers.get(REPLAYED)).to.equal('true');
    expect(walletRequestsOf(h, operator)).to.have.length(1);
    expect(await sessionsOf(h, operator)).to.deep.equal([]);
  });

  it('a 502 (wallet timeout) is not stored: once the wallet answers, a retry with the same requestUuid creates the session', async () => {
    const operator = await h.onboard();
    const body = operator.sessionBody({ requestUuid: randomUUID() });
    h.wallet.setFault('balance', { kind: 'hang' });
    const t = nowSeconds();

    const first = await operator.request('POST', '/v1/session', body, { timestamp: t });
    expect(first.status, first.text).to.equal(502);
    expect(first.body).to.include({ error: 'wallet_unavailable' });
    expect(await sessionsOf(h, operator)).to.deep.equal([]);

    h.wallet.setFault('balance', null);
    const retry = await operator.request('POST', '/v1/session', body, { timestamp: t + 1 });
    expect(retry.status, retry.text).to.equal(200);
    expect(retry.headers.get(REPLAYED)).to.equal(null);
    const sessions = await sessionsOf(h, operator);
    expect(sessions.map((s) => s.id)).to.deep.equal([retry.body.sessionId]);
    expect(walletRequestsOf(h, operator)).to.have.length(2);

    // and from now on the success is what is replayed
    const again = await operator.request('POST', '/v1/session', body, { timestamp: t + 2 });
    expectSame(again, retry);
    expect(again.headers.get(REPLAYED)).to.equal('true');
    expect(await sessionsOf(h, operator)).to.have.length(1);
  });

  it('keys are per operator: the same requestUuid used by two operators creates two sessions', async () => {
    const a = await h.onboard();
    const b = await h.onboard();
    const requestUuid = randomUUID();
    const fromA = await a.request('POST', '/v1/session', a.sessionBody({ requestUuid }));
    const fromB = await b.request('POST', '/v1/session', b.sessionBody({ requestUuid }));
    expect(fromA.status, fromA.text).to.equal(200);
    expect(fromB.status, fromB.text).to.equal(200);
    expect(fromB.headers.get(REPLAYED)).to.equal(null);
    expect(fromA.body.sessionId).to.not.equal(fromB.body.sessionId);
    expect((await sessionsOf(h, a)).map((s) => s.id)).to.deep.equal([fromA.body.sessionId]);
    expect((await sessionsOf(h, b)).map((s) => s.id)).to.deep.equal([fromB.body.sessionId]);
    expect(walletRequestsOf(h, a)).to.have.length(1);
    expect(walletRequestsOf(h, b)).to.have.length(1);
  });

  it('the endpoint is part of the key, and a retried terminate returns the same 200 (not 409)', async () => {
    const operator = await h.onboard();
    const requestUuid = randomUUID();
    const t = nowSeconds();
    const launchBody = operator.sessionBody({ requestUuid });
    const launched = await operator.request('POST', '/v1/session', launchBody, { timestamp: t });
    expect(launched.status, launched.text).to.equal(200);
    const path = `/v1/session/${launched.body.sessionId}/terminate`;

    // the launch's requestUuid on terminate is a different key: the terminate really runs
    const terminated = await operator.request('POST', path, { requestUuid, reason: 'operator_close' }, { timestamp: t + 1 });
    expect(terminated.status, terminated.text).to.equal(200);
    expect(terminated.headers.get(REPLAYED)).to.equal(null);
    expect(terminated.body).to.have.all.keys('sessionId', 'terminatedAt', 'voidedRoundIds');
    expect(terminated.body.sessionId).to.equal(launched.body.sessionId);
    const row = await h.svc.db.session.findUniqueOrThrow({ where: { id: launched.body.sessionId } });
    expect(row.state).to.equal('TERMINATED');

    // retried: the stored 200, although the session is no longer active
    const retried = await operator.request('POST', path, { requestUuid, reason: 'operator_close' }, { timestamp: t + 2 });
    expectSame(retried, terminated);
    expect(retried.headers.get(REPLAYED)).to.equal('true');

    // a new requestUuid is a new terminate, which finds the session ended
    const fresh = await operator.request('POST', path, { requestUuid: randomUUID(), reason: 'operator_close' }, { timestamp: t + 3 });
    expect(fresh.status, fresh.text).to.equal(409);
    expect(fresh.body).to.include({ error: 'session_not_active' });

    // and the launch key still replays the launch
    const relaunch = await operator.request('POST', '/v1/session', launchBody, { timestamp: t + 4 });
    expectSame(relaunch, launched);
    expect(relaunch.headers.get(REPLAYED)).to.equal('true');
    expect(await sessionsOf(h, operator)).to.have.length(1);
  });

  it('the key is the matched route, not the raw path (D26): /v1/session, /V1/session and /v1/session/ make one session', async () => {
    const operator = await h.onboard();
    const body = operator.sessionBody({ requestUuid: randomUUID() });
    const t = nowSeconds();
    const spellings = ['/v1/session', '/V1/session', '/v1/session/'];
    const responses: ApiResponse[] = [];
    for (const [i, path] of spellings.entries()) responses.push(await operator.request('POST', path, body, { timestamp: t + i }));

    for (const response of responses) expectSame(response, responses[0]!);
    expect(responses[0]!.status, responses[0]!.text).to.equal(200);
    expect(responses.map((r) => r.headers.get(REPLAYED))).to.deep.equal([null, 'true', 'true']);
    expect(await sessionsOf(h, operator)).to.have.length(1);
    expect(walletRequestsOf(h, operator)).to.have.length(1);
    const entries = await h.svc.db.idempotencyEntry.findMany({ where: { operatorId: operator.operatorId } });
    expect(entries.map((e) => e.endpoint)).to.deep.equal(['POST /v1/session']);
  });

  it('a terminate retried with another spelling of its path (case, trailing slash) gets the stored 200 (D26)', async () => {
    const operator = await h.onboard();
    const launched = await operator.launch();
    expect(launched.status, launched.text).to.equal(200);
    const sessionId = launched.body.sessionId as string;
    const body = { requestUuid: randomUUID(), reason: 'operator_close' };
    const t = nowSeconds();
    const first = await operator.request('POST', `/v1/session/${sessionId}/terminate`, body, { timestamp: t });
    expect(first.status, first.text).to.equal(200);
    const spellings = [`/V1/Session/${sessionId.toUpperCase()}/terminate`, `/v1/session/${sessionId}/terminate/`];
    for (const [i, path] of spellings.entries()) {
      const retry = await operator.request('POST', path, body, { timestamp: t + 1 + i });
      expectSame(retry, first);
      expect(retry.headers.get(REPLAYED), path).to.equal('true');
    }
    const entries = await h.svc.db.idempotencyEntry.findMany({ where: { operatorId: operator.operatorId, requestUuid: body.requestUuid } });
    expect(entries.map((e) => e.endpoint)).to.deep.equal([`POST /v1/session/${sessionId}/terminate`]);
  });

  it('the stored launch holds no session token; a retry re-mints the very same one (D25)', async () => {
    const operator = await h.onboard();
    // leading zeros: the token carries the limits as sent, so a re-mint must keep them so
    const body = operator.sessionBody({ requestUuid: randomUUID(), rgLimits: { dailyLossMicro: '0005000000', sessionTimeSeconds: 900 } });
    const t = nowSeconds();
    const first = await operator.request('POST', '/v1/session', body, { timestamp: t });
    expect(first.status, first.text).to.equal(200);
    const token = first.body.sessionToken as string;
    expect(first.body.launchUrl).to.equal(`${h.svc.config.publicUrl}/play/dice?token=${token}`);

    // what the database holds, as text: neither the token nor any part that makes it usable
    const [row] = await h.svc.sql.query<{ stored: string }>(
      'SELECT response_body::text AS stored FROM idempotency_entries WHERE operator_id = $1 AND request_uuid = $2',
      [operator.operatorId, body.requestUuid],
    );
    expect(row, 'the idempotency row').to.not.equal(undefined);
    const stored = row!.stored;
    expect(stored).to.include(first.body.sessionId);
    expect(stored).not.to.include(token);
    expect(stored, 'the token signature').not.to.include(token.split('.')[2]);
    expect(stored, 'the token payload').not.to.include(token.split('.')[1]);
    expect(stored).not.to.include('token=');
    expect(stored).not.to.include('sessionToken');

    // the retries answer byte for byte what the first request answered
    for (const offset of [1, 2]) {
      const retry = await operator.request('POST', '/v1/session', body, { timestamp: t + offset });
      expect(retry.headers.get(REPLAYED)).to.equal('true');
      expect(retry.text).to.equal(first.text);
    }
    expect(await sessionsOf(h, operator)).to.have.length(1);
  });
});
