import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createOperatorClient, type OperatorClient } from '../../../clients/typescript/index.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { roundFixtures, type RoundFixture } from '../../support/round-fixtures.js';

// The typed operator client (clients/typescript, docs/clients.md) against the running API:
// each route it types answers what its types say, signed by the client's own middleware
// (contract 5.1), and a wrong secret is refused as the service refuses any (contract 5.2).
describe('the typed operator client against the API (clients/typescript)', function () {
  this.timeout(60_000);
  let h: Harness;
  let operator: TestOperator;
  let rgs: OperatorClient;
  let settled: RoundFixture;

  before(async () => {
    h = await startHarness();
    operator = await h.onboard();
    rgs = createOperatorClient({ baseUrl: h.baseUrl, keyId: operator.apiKeyId, secret: operator.apiSecret });
    // a finished real-mode round of the operator, written as the engine leaves one
    const fixtures = roundFixtures(h.svc);
    settled = await fixtures.round(await fixtures.session(operator.operatorId), { bet: { amountMicro: 2_000_000n, payoutMicro: 3_880_000n } });
  });
  after(() => h?.close());

  // a demo launch, spelled out: the client's types check every field
  const launchBody = (requestUuid = randomUUID()) => ({
    operatorId: operator.operatorId,
    playerRef: uniqueId('player'),
    gameCode: 'dice',
    currency: 'EUR',
    lang: 'en',
    jurisdiction: 'MT',
    mode: 'demo' as const,
    requestUuid,
  });

  it('launches a session, and terminates it', async () => {
    const launched = await rgs.POST('/v1/session', { body: launchBody() });
    expect(launched.response.status).to.equal(200);
    expect(launched.data!.sessionToken).to.be.a('string').and.not.equal('');
    const sessionId = launched.data!.sessionId;

    const ended = await rgs.POST('/v1/session/{sessionId}/terminate', { params: { path: { sessionId } }, body: { reason: 'player logged out' } });
    expect(ended.response.status).to.equal(200);
    expect(ended.data!.sessionId).to.equal(sessionId);
    expect(ended.data!.voidedRoundIds).to.deep.equal([]);

    const again = await rgs.POST('/v1/session/{sessionId}/terminate', { params: { path: { sessionId } }, body: {} });
    expect(again.response.status).to.equal(409);
    expect(again.error!.error).to.equal('session_not_active');
  });

  it('lists rounds (the query sent, not signed) and reads one', async () => {
    const from = new Date(Date.now() - 60 * 60_000).toISOString();
    const listed = await rgs.GET('/v1/rounds', { params: { query: { from, limit: '10' } } });
    expect(listed.response.status).to.equal(200);
    expect(listed.data!.nextCursor).to.equal(null);
    expect(listed.data!.rounds.map((round) => [round.roundId, round.state, round.totalBetsMicro, round.totalPayoutsMicro])).to.deep.equal([
      [settled.roundId, 'SETTLED', '2000000', '3880000'],
    ]);

    const one = await rgs.GET('/v1/rounds/{roundId}', { params: { path: { roundId: settled.roundId } } });
    expect(one.response.status).to.equal(200);
    expect(one.data!.roundId).to.equal(settled.roundId);
  });

  it('reads the proof (404 seed_not_revealed while the seed is in use), the replay link and the dispute pack as bytes', async () => {
    const proof = await rgs.GET('/v1/rounds/{roundId}/proof', { params: { path: { roundId: settled.roundId } } });
    expect(proof.response.status).to.equal(404);
    expect(proof.error!.error).to.equal('seed_not_revealed');

    const replay = await rgs.GET('/v1/rounds/{roundId}/replay-url', { params: { path: { roundId: settled.roundId } } });
    expect(replay.response.status).to.equal(200);
    expect(new URL(replay.data!.url).pathname).to.equal(`/replay/${settled.roundId}`);

    const pack = await rgs.GET('/v1/rounds/{roundId}/dispute-pack', { params: { path: { roundId: settled.roundId } }, parseAs: 'arrayBuffer' });
    expect(pack.response.status).to.equal(200);
    expect(pack.response.headers.get('content-type')).to.equal('application/zip');
    // a ZIP's local file header
    expect(Buffer.from(pack.data!).subarray(0, 4)).to.deep.equal(Buffer.from('PK\x03\x04', 'latin1'));
  });

  it('reads the reports and the webhook deliveries', async () => {
    const ggr = await rgs.GET('/v1/reports/ggr');
    expect(ggr.response.status).to.equal(200);
    expect(ggr.data!.games.find((game) => game.currency === 'EUR')).to.include({ stakesMicro: '2000000', payoutsMicro: '3880000' });

    const deliveries = await rgs.GET('/v1/webhooks/deliveries', { params: { query: { limit: '10' } } });
    expect(deliveries.response.status).to.equal(200);
    expect(deliveries.data).to.deep.equal({ deliveries: [], nextCursor: null });
  });

  it('a wrong secret: 401 invalid_signature, the error typed', async () => {
    const wrong = createOperatorClient({ baseUrl: h.baseUrl, keyId: operator.apiKeyId, secret: 'f'.repeat(128) });
    const requestUuid = randomUUID();
    const launched = await wrong.POST('/v1/session', { body: launchBody(requestUuid) });
    expect(launched.response.status).to.equal(401);
    expect(launched.error).to.deep.equal({
      error: 'invalid_signature',
      message: 'signature does not match',
      status: 'RS_ERROR_INVALID_SIGNATURE',
      requestUuid,
    });
    const listed = await wrong.GET('/v1/rounds');
    expect(listed.response.status).to.equal(401);
    expect(listed.error!.error).to.equal('invalid_signature');
  });
});
