import { expect } from 'chai';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { randomUUID } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { send, signedRequest, type ApiResponse, type SignedRequestOptions } from '../../support/signed-client.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tableWithBets, tick } from '../../support/game.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { committedDocument, operationOf, schemaCompiler } from '../../support/openapi.js';
import { openRouters, signedRouters } from '../../../src/api/app.js';
import { setWebhookEndpoint } from '../../../src/shared/game/webhooks/endpoints.js';
import { WebhookDeliverer } from '../../../src/shared/game/webhooks/delivery.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

// The service, run in process, answers as docs/openapi.json says: every answer below (the
// successes and the refusals of every route) has a status the document lists for its
// operation, a body its schema accepts with no field it does not describe, and the headers it
// requires; every request the service sent to the wallet is one the document's wallet
// webhooks describe, field for field. The schemas are compiled by a strict Ajv2020, not by
// the service's own validation.

const FUNDS = 10_000_000n;

describe('the API answers as docs/openapi.json describes it', function () {
  this.timeout(90_000);
  const document = committedDocument();
  const compileSchema = schemaCompiler(document, { closed: true });
  // "METHOD /template" -> the statuses seen
  const seen = new Map<string, Set<number>>();
  let h: Harness;
  let operator: TestOperator;

  before(async () => {
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
    operator = await h.onboard();
  });
  after(() => h.close());

  function valid(validate: ValidateFunction, value: unknown, what: string) {
    expect(validate(value), `${what}: ${JSON.stringify(validate.errors, null, 1)}\n${JSON.stringify(value)}`).to.equal(true);
  }

  // the response against its operation in the document
  function conforms(method: string, path: string, response: ApiResponse): ApiResponse {
    const { template, operation } = operationOf(document, method, path);
    const what = `${method} ${template} ${response.status}`;
    const documented = operation.responses[String(response.status)];
    expect(documented, `${what} is not in the document: ${response.text}`).to.not.equal(undefined);
    if (documented.content) {
      const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
      const media = documented.content[mediaType];
      expect(media, `${what}: content type ${mediaType} is not in the document`).to.not.equal(undefined);
      valid(compileSchema(media.schema), mediaType === 'application/json' ? response.body : response.text, what);
    }
    for (const [name, header] of Object.entries<any>(documented.headers ?? {})) {
      const value = response.headers.get(name);
      if (header.required) expect(value, `${what}: header ${name}`).to.be.a('string');
      if (value !== null) valid(compileSchema(header.schema), value, `${what} header ${name}`);
    }
    const key = `${method} ${template}`;
    seen.set(key, (seen.get(key) ?? new Set()).add(response.status));
    return response;
  }

  const call = async (op: TestOperator, method: string, path: string, body?: unknown, options?: SignedRequestOptions) =>
    conforms(method, path, await op.request(method, path, body, options));
  const open = async (path: string, init: RequestInit = {}) => conforms('GET', path, await send(`${h.baseUrl}${path}`, init));
  const statusOf = async (response: Promise<ApiResponse>, status: number, error?: string) => {
    const answered = await response;
    expect(answered.status, answered.text).to.equal(status);
    if (error) expect(answered.body.error, answered.text).to.equal(error);
    return answered;
  };

  describe('the open routes', () => {
    it('GET /v1/openapi.json: unsigned, the committed document', async () => {
      const response = await statusOf(open('/v1/openapi.json'), 200);
      expect(response.body).to.deep.equal(document);
    });

    it('GET /v1/keys: unsigned, the JWKS of the pack keys (D32)', async () => {
      const keys = await statusOf(open('/v1/keys'), 200);
      expect(keys.body.keys).to.not.be.empty;
    });

    it('GET /.well-known/jwks.json: unsigned, the JWKS of the session-token keys (D34)', async () => {
      const keys = await statusOf(open('/.well-known/jwks.json'), 200);
      expect(keys.body.keys).to.be.an('array');
    });

    it('GET /healthz, /readyz, /metrics', async () => {
      await statusOf(open('/healthz'), 200);
      await statusOf(open('/readyz'), 200);
      const metrics = await statusOf(open('/metrics'), 200);
      expect(metrics.text).to.include('# TYPE');
    });
  });

  describe('POST /v1/session', () => {
    const launch = (overrides: Record<string, unknown> = {}, options?: SignedRequestOptions) =>
      call(operator, 'POST', '/v1/session', operator.sessionBody(overrides), options);

    it('200, and the stored answer to a retry', async () => {
      const requestUuid = randomUUID();
      const first = await statusOf(launch({ requestUuid, playerRef: 'player-contract-1' }), 200);
      // a retry is signed afresh (D17): another timestamp
      const retry = await statusOf(launch({ requestUuid, playerRef: 'player-contract-1' }, { timestamp: Math.floor(Date.now() / 1000) + 1 }), 200);
      expect(retry.headers.get('idempotent-replayed')).to.equal('true');
      expect(retry.body.sessionId).to.equal(first.body.sessionId);
      await statusOf(launch({ mode: 'demo' }), 200);
    });

    it('400, 401, 403, 404, 409, 413, 422 and 502 refusals', async () => {
      // an operator of its own for the second half: the refusals that pass the signature
      // take tokens from the session bucket (burst 10, contract 8.1)
      const other = await h.onboard();
      const launchAsOther = (overrides: Record<string, unknown> = {}, options?: SignedRequestOptions) =>
        call(other, 'POST', '/v1/session', other.sessionBody(overrides), options);
      await statusOf(launch({ currency: 'eur' }), 400, 'invalid_request');
      await statusOf(call(operator, 'POST', '/v1/session', undefined, { rawBody: '{"operatorId":' }), 400, 'invalid_request');
      await statusOf(launch({}, { signature: 'AAAA' }), 401, 'invalid_signature');
      await statusOf(launch({}, { omit: ['timestamp'] }), 401, 'invalid_signature');
      await statusOf(launch({}, { timestamp: Math.floor(Date.now() / 1000) - 3600 }), 401, 'stale_timestamp');
      const stranger = { kid: 'no-such-key', secret: 'x' };
      await statusOf(
        signedRequest(h.baseUrl, stranger, 'POST', '/v1/session', operator.sessionBody()).then((r) => conforms('POST', '/v1/session', r)),
        401,
        'unknown_key',
      );
      // the same signed request twice: the second is a replay (D17), whatever the first answered
      const timestamp = Math.floor(Date.now() / 1000);
      const replayed = operator.sessionBody({ currency: 'not valid' });
      await statusOf(call(operator, 'POST', '/v1/session', replayed, { timestamp }), 400, 'invalid_request');
      await statusOf(call(operator, 'POST', '/v1/session', replayed, { timestamp }), 401, 'replayed_signature');
      await statusOf(launchAsOther({ operatorId: 'another-operator' }), 403, 'operator_mismatch');
      await statusOf(launchAsOther({ gameCode: 'roulette' }), 422, 'game_not_available');
      const requestUuid = randomUUID();
      await statusOf(launchAsOther({ requestUuid, gameCode: 'roulette' }), 422, 'game_not_available');
      await statusOf(launchAsOther({ requestUuid, gameCode: 'dice' }), 409, 'idempotency_key_reused');
      await statusOf(launchAsOther({}, { rawBody: JSON.stringify({ padding: 'x'.repeat(70 * 1024) }) }), 413, 'payload_too_large');
      const rejected = await statusOf(launchAsOther({ currency: 'USD' }), 422, 'session_rejected');
      expect(rejected.body.reason).to.equal('currency_not_permitted');
      h.wallet.setFault('balance', { kind: 'http', httpStatus: 500 }, 1);
      await statusOf(launchAsOther(), 502, 'wallet_unavailable');
      h.wallet.setFault('balance', { kind: 'status', status: 'RS_ERROR_INVALID_PARTNER' }, 1);
      await statusOf(launchAsOther(), 502, 'wallet_rejected');
    });

    it('403 ip_not_allowed, 401 key_not_valid_now', async () => {
      const walled = await h.onboard({ ipAllowList: ['203.0.113.7/32'] });
      await statusOf(call(walled, 'POST', '/v1/session', walled.sessionBody()), 403, 'ip_not_allowed');
      const expired = await h.onboard();
      await h.svc.db.credential.update({ where: { kid: expired.apiKeyId }, data: { notAfter: new Date(Date.now() - 1000) } });
      await statusOf(call(expired, 'POST', '/v1/session', expired.sessionBody()), 401, 'key_not_valid_now');
    });

    it('429 rate_limited, with Retry-After', async () => {
      const busy = await h.onboard();
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => call(busy, 'POST', '/v1/session', busy.sessionBody({ currency: 'not valid' }))),
      );
      expect(answers.map((a) => a.status)).to.include(429);
      expect(answers.every((a) => a.status === 400 || a.status === 429), answers.map((a) => a.text).join('\n')).to.equal(true);
    });
  });

  describe('a played table: terminate, the reads, the proof, and the wallet calls behind them', () => {
    let table: Awaited<ReturnType<typeof tableWithBets>>;
    let player: TestOperator;
    const won = () => table.roundIds[0]!;
    const voided = () => table.roundIds[1]!;

    before(async () => {
      // LOW always wins; two players bet LOW; the second one's session is terminated while
      // betting is open (its round is voided and its bet rolled back), the first one's round
      // settles and is paid
      player = await operatorWith(h, { bettingWindowMs: 60_000, lowWeight: 1n, highWeight: 0n });
      table = await tableWithBets(h, player, 2, FUNDS);
    });

    it('POST /v1/session/{sessionId}/terminate: 200, 404, 409', async () => {
      const [, second] = table.seats;
      const ended = await statusOf(call(player, 'POST', `/v1/session/${second!.sessionId}/terminate`, { reason: 'contract test' }), 200);
      expect(ended.body.voidedRoundIds).to.deep.equal([voided()]);
      await statusOf(call(player, 'POST', `/v1/session/${second!.sessionId}/terminate`), 409, 'session_not_active');
      await statusOf(call(player, 'POST', `/v1/session/${randomUUID()}/terminate`), 404, 'not_found');
      await statusOf(call(player, 'POST', '/v1/session/not-a-uuid/terminate', { reason: 5 }), 400, 'invalid_request');

      // D33: no recall link for a round still in play
      await statusOf(call(player, 'GET', `/v1/rounds/${won()}/replay-url`), 409, 'round_not_settled');
      await tick(h, { cycleId: table.cycleId, from: 'BETTING_OPEN' });
      await tick(h, { cycleId: table.cycleId, from: 'ROLLING' });
      await waitForQuiescence(h.svc.db, { operatorIds: [player.operatorId], timeoutMs: 20_000 });
    });

    it('GET /v1/rounds/{roundId}/proof: 404 seed_not_revealed, round_not_settled, round_not_found; 200 once the session ends', async () => {
      await statusOf(call(player, 'GET', `/v1/rounds/${won()}/proof`), 404, 'seed_not_revealed');
      await statusOf(call(player, 'GET', `/v1/rounds/${voided()}/proof`), 404, 'round_not_settled');
      await statusOf(call(player, 'GET', `/v1/rounds/${randomUUID()}/proof`), 404, 'round_not_found');
      await statusOf(call(player, 'POST', `/v1/session/${table.seats[0]!.sessionId}/terminate`), 200);
      const proof = await statusOf(call(player, 'GET', `/v1/rounds/${won()}/proof`), 200);
      expect(proof.body.outcome.outcomeSide).to.equal('LOW');
      await statusOf(call(player, 'GET', `/v1/rounds/${won()}/dispute-pack`), 200);
      await statusOf(call(player, 'GET', `/v1/rounds/${randomUUID()}/dispute-pack`), 404, 'round_not_found');
    });

    it('GET /v1/rounds/{roundId}/replay-url: 200 for a settled and a voided round, 404 round_not_found (D33)', async () => {
      for (const roundId of [won(), voided()]) {
        const link = await statusOf(call(player, 'GET', `/v1/rounds/${roundId}/replay-url`), 200);
        expect(link.body.url).to.include(`/replay/${roundId}?t=`);
      }
      await statusOf(call(player, 'GET', `/v1/rounds/${randomUUID()}/replay-url`), 404, 'round_not_found');
    });

    it('GET /v1/rounds and /v1/rounds/{roundId}: 200, 400, 403, 404', async () => {
      const list = await statusOf(call(player, 'GET', '/v1/rounds?limit=1'), 200);
      expect(list.body.nextCursor).to.be.a('string');
      const next = await statusOf(call(player, 'GET', `/v1/rounds?limit=1&cursor=${list.body.nextCursor}`), 200);
      expect([...list.body.rounds, ...next.body.rounds].map((r: { roundId: string }) => r.roundId)).to.have.members([won(), voided()]);
      await statusOf(call(player, 'GET', '/v1/rounds?limit=0'), 400, 'invalid_request');
      await statusOf(call(player, 'GET', '/v1/rounds?operatorId=someone-else'), 403, 'operator_mismatch');
      const settled = await statusOf(call(player, 'GET', `/v1/rounds/${won()}`), 200);
      expect(settled.body.bets[0].winCall.state).to.equal('completed');
      const refunded = await statusOf(call(player, 'GET', `/v1/rounds/${voided()}`), 200);
      expect(refunded.body.state).to.equal('VOIDED');
      await statusOf(call(player, 'GET', `/v1/rounds/${randomUUID()}`), 404, 'not_found');
    });

    it('GET /v1/reports/ggr and /v1/reports/wallet-calls: 200, 400, 403', async () => {
      const ggr = await statusOf(call(player, 'GET', '/v1/reports/ggr'), 200);
      expect(ggr.body.games).to.have.length(1);
      await statusOf(call(player, 'GET', '/v1/reports/ggr?from=yesterday'), 400, 'invalid_request');
      const calls = await statusOf(call(player, 'GET', '/v1/reports/wallet-calls'), 200);
      expect(calls.body.endpoints.map((e: { endpoint: string; calls: number }) => e.calls > 0)).to.deep.equal([true, true, true, true]);
      await statusOf(call(player, 'GET', '/v1/reports/wallet-calls?operatorId=someone-else'), 403, 'operator_mismatch');
    });

    it('every wallet call the service made is a documented webhook request, signed, with its exact fields', () => {
      const endpoints = new Set<string>();
      for (const request of h.wallet.requests) {
        expect(request.endpoint, request.path).to.not.equal(null);
        const webhook = document.webhooks[`wallet.${request.endpoint}`].post;
        valid(compileSchema(webhook.requestBody.content['application/json'].schema), request.body, `request to ${request.path}`);
        for (const scheme of Object.keys(webhook.security[0])) {
          const header = document.components.securitySchemes[scheme].name.toLowerCase();
          expect(request.headers[header], `${request.path}: ${header}`).to.be.a('string');
        }
        expect(request.signatureValid, request.path).to.equal(true);
        endpoints.add(request.endpoint!);
        // the simulator's own answers are ones the document says the service accepts
        const answer = request.response;
        if (typeof answer === 'object' && answer.httpStatus === 200) {
          valid(compileSchema(webhook.responses['200'].content['application/json'].schema), JSON.parse(answer.body), `answer to ${request.path}`);
        }
      }
      expect([...endpoints]).to.have.members(['balance', 'bet', 'win', 'rollback']);
    });
  });

  describe('webhooks (D31)', () => {
    let receiver: WebhookReceiver;
    let hooked: TestOperator;
    before(async () => {
      receiver = await WebhookReceiver.start();
      hooked = await h.onboard();
      receiver.addCredential(hooked.walletKeyId, hooked.walletSignatureSecret);
    });
    after(() => receiver.close());

    it('POST /v1/webhooks/test, GET /v1/webhooks/deliveries, POST .../redeliver: 202, 200, 400, 404, 409; the event as documented', async () => {
      await statusOf(call(hooked, 'POST', '/v1/webhooks/test'), 409, 'webhook_not_configured');
      await setWebhookEndpoint(h.svc.db, hooked.operatorId, { url: receiver.url });
      const { eventId } = (await statusOf(call(hooked, 'POST', '/v1/webhooks/test', { requestUuid: randomUUID() }), 202)).body;
      await statusOf(call(hooked, 'GET', '/v1/webhooks/deliveries?status=delivered&limit=5'), 200);
      await statusOf(call(hooked, 'GET', '/v1/webhooks/deliveries?status=sent'), 400, 'invalid_request');
      await statusOf(call(hooked, 'POST', `/v1/webhooks/deliveries/${eventId}/redeliver`), 202);
      await statusOf(call(hooked, 'POST', `/v1/webhooks/deliveries/${randomUUID()}/redeliver`), 404, 'not_found');
      // this process runs no webhooks role: the attempt is made here
      const deliverer = new WebhookDeliverer(h.svc);
      try {
        expect(await deliverer.deliver(eventId)).to.equal('delivered');
      } finally {
        deliverer.close();
      }
      const webhook = document.webhooks['event.webhook.test'].post;
      const [delivery] = receiver.of(eventId);
      valid(compileSchema(webhook.requestBody.content['application/json'].schema), delivery!.envelope, 'the webhook.test event');
      expect(receiver.violations).to.deep.equal([]);
    });
  });

  describe('games (D39)', () => {
    it('GET /v1/games: 200, and 401 with a broken signature; the catalogue as documented', async () => {
      const operator = await h.onboard();
      await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {}, { stakeStepMicro: '5000' });
      const { body } = await statusOf(call(operator, 'GET', '/v1/games'), 200);
      expect(body.games.map((game: { gameCode: string }) => game.gameCode)).to.deep.equal(['dice']);
      await statusOf(call(operator, 'GET', '/v1/games', undefined, { signature: 'v1=0' }), 401);
    });
  });

  describe('free bets (D42)', () => {
    it('POST, GET /v1/freebets, GET and DELETE /v1/freebets/{campaignId}: 201, 200, 400, 404, 409, 422; the bodies as documented', async () => {
      const operator = await h.onboard();
      const terms = {
        campaignRef: 'contract-1',
        gameCode: 'dice',
        currency: 'EUR',
        stakeMicro: '100000',
        rounds: 5,
        playerRefs: ['p-1', 'p-2'],
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      };
      const { campaignId } = (await statusOf(call(operator, 'POST', '/v1/freebets', terms), 201)).body;
      await statusOf(call(operator, 'POST', '/v1/freebets', { ...terms, rounds: 6 }), 409, 'campaign_conflict');
      await statusOf(call(operator, 'POST', '/v1/freebets', { ...terms, campaignRef: 'contract-2', gameCode: 'crash' }), 422, 'game_not_available');
      await statusOf(call(operator, 'POST', '/v1/freebets', { ...terms, campaignRef: 'contract-2', stakeMicro: '100001' }), 422, 'bet_out_of_range');
      await statusOf(call(operator, 'POST', '/v1/freebets', { ...terms, campaignRef: 'contract-2', featureBuy: true }), 422, 'feature_buy_not_available');
      await statusOf(call(operator, 'POST', '/v1/freebets', { ...terms, rounds: 0 }), 400, 'invalid_request');
      await statusOf(call(operator, 'GET', '/v1/freebets?limit=1'), 200);
      await statusOf(call(operator, 'GET', '/v1/freebets?status=nope'), 400, 'invalid_request');
      await statusOf(call(operator, 'GET', `/v1/freebets/${campaignId}`), 200);
      await statusOf(call(operator, 'GET', `/v1/freebets/${randomUUID()}`), 404, 'campaign_not_found');
      await statusOf(call(operator, 'DELETE', `/v1/freebets/${campaignId}`), 200);
      await statusOf(call(operator, 'DELETE', `/v1/freebets/${randomUUID()}`), 404, 'campaign_not_found');
    });
  });

  describe('every route', () => {
    it('documents exactly the routes the api role serves', () => {
      const served = [...openRouters(h.svc), ...signedRouters(h.svc)].flatMap((router) =>
        router.stack.flatMap((layer) =>
          layer.methods.filter((method) => method !== 'HEAD').map((method) => `${method} ${String(layer.path).replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`),
        ),
      );
      const documented = Object.entries<any>(document.paths).flatMap(([template, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${template}`),
      );
      expect(documented).to.have.members(served);
    });

    it('every signed route refuses an unsigned request: 401 invalid_signature', async () => {
      for (const [template, item] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(item)) {
          if (operation.security !== undefined) continue;
          const path = template.replace(/\{[^}]+\}/g, randomUUID());
          const response = await send(`${h.baseUrl}${path}`, { method: method.toUpperCase() });
          await statusOf(Promise.resolve(conforms(method.toUpperCase(), path, response)), 401, 'invalid_signature');
        }
      }
    });

    it('saw every operation of the document answer: each signed one a success and a refusal', () => {
      for (const [template, item] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(item)) {
          const statuses = [...(seen.get(`${method.toUpperCase()} ${template}`) ?? [])];
          const successes = Object.keys(operation.responses).filter((status) => /^2/.test(status));
          expect(statuses, `${method} ${template}`).to.not.have.length(0);
          if (successes.length > 0) expect(statuses.some((s) => s < 300), `${method} ${template}: a success`).to.equal(true);
          if (operation.security === undefined) expect(statuses.some((s) => s >= 400 && s < 500), `${method} ${template}: a refusal`).to.equal(true);
        }
      }
    });
  });
});
