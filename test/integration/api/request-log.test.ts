import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { send } from '../../support/signed-client.js';

// One access line per REST request, under a request id that the answer names in
// X-Request-Id and that every line logged for the request carries: the caller's own id when
// it is a bounded token of safe characters, a fresh one otherwise (D24). The line names the
// method, the route pattern, the status, the duration and the verified operator, never the
// body, a signature or a token (D25). Probes and scrapes log at debug (D15).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BOT_TOKEN = 'bot-challenge-token-not-for-logs-0123456789';

type Line = Record<string, any>;

describe('request ids and access lines', () => {
  let h: Harness;
  let operator: TestOperator;
  const raw: string[] = [];
  const lines = (): Line[] => raw.map((line) => JSON.parse(line) as Line);
  const linesOf = (reqId: string) => lines().filter((line) => line.reqId === reqId);
  const accessLineOf = (reqId: string) => {
    const access = linesOf(reqId).filter((line) => line.msg === 'request');
    expect(access, `access lines of ${reqId}`).to.have.length(1);
    return access[0]!;
  };

  before(async () => {
    // an unreachable bot challenge verifier, fail-open (contract 5.7): its warning is a line
    // logged while a launch is handled
    h = await startHarness({ BOT_CHALLENGE_SECRET: 'bot-secret', BOT_CHALLENGE_VERIFY_URL: 'http://127.0.0.1:1/siteverify' }, ['api'], {
      logLines: raw,
    });
    operator = await h.onboard();
  });
  after(() => h.close());

  it('a launch: a fresh id in X-Request-Id, one access line, and every line of the request carries the id', async () => {
    const launch = await operator.launch({ botChallengeToken: BOT_TOKEN });
    expect(launch.status, launch.text).to.equal(200);
    const reqId = launch.headers.get('x-request-id')!;
    expect(reqId).to.match(UUID);

    const access = accessLineOf(reqId);
    expect(access).to.include({ level: 30, method: 'POST', route: '/v1/session', status: 200, operatorId: operator.operatorId });
    expect(access.durationMs).to.be.a('number').and.at.least(0);
    expect(Object.keys(access).sort()).to.deep.equal(['durationMs', 'level', 'method', 'msg', 'name', 'operatorId', 'pid', 'reqId', 'route', 'status', 'time'].sort());
    // the verifier's warning, logged while the launch was handled, names the same request
    expect(linesOf(reqId).map((line) => line.msg)).to.include('bot challenge verifier unreachable');

    // nothing of the body, the signature or the answer's token
    const all = raw.join('');
    for (const secret of [BOT_TOKEN, launch.body.sessionToken, launch.body.launchUrl, operator.key.secret]) expect(all).not.to.include(secret);
    expect(all).not.to.include('playerRef');
    expect(all).not.to.include('x-rgs-signature');
  });

  it("keeps the caller's X-Request-Id when it is a bounded token of safe characters", async () => {
    for (const presented of ['trace-7f3a.b2:c9_x', randomUUID(), 'a'.repeat(128)]) {
      const response = await operator.request('GET', `/v1/rounds/${randomUUID()}/proof`, undefined, { headers: { 'x-request-id': presented } });
      expect(response.status, response.text).to.equal(404);
      expect(response.headers.get('x-request-id')).to.equal(presented);
      expect(accessLineOf(presented)).to.include({ method: 'GET', route: '/v1/rounds/:roundId/proof', status: 404, operatorId: operator.operatorId });
    }
  });

  it('replaces any other X-Request-Id with a fresh one, and never echoes or logs it', async () => {
    for (const presented of ['a'.repeat(129), 'two words', '<script>', '-leading-dash', 'id;drop', 'ünïcode', '"quoted"']) {
      const response = await send(`${h.baseUrl}/healthz`, { headers: { 'x-request-id': presented } });
      expect(response.status).to.equal(200);
      const reqId = response.headers.get('x-request-id')!;
      expect(reqId, presented).to.match(UUID);
      expect(accessLineOf(reqId)).to.include({ level: 20, route: '/healthz', status: 200 });
      expect(raw.join(''), presented).not.to.include(JSON.stringify(presented).slice(1, -1));
    }
  });

  it('a request the signed stage refuses is logged under the route it was meant for, without its ids or an operator', async () => {
    const sessionId = randomUUID();
    const response = await send(`${h.baseUrl}/v1/session/${sessionId}/terminate`, { method: 'POST', body: '{}' });
    expect(response.status).to.equal(401);
    const access = accessLineOf(response.headers.get('x-request-id')!);
    expect(access).to.include({ method: 'POST', route: '/v1/session/:sessionId/terminate', status: 401 });
    expect(access).not.to.have.property('operatorId');
    expect(raw.join('')).not.to.include(sessionId);
    // and so is its latency (D15)
    const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text();
    expect(metrics).to.match(/^rgs_http_request_duration_seconds_count\{method="POST",route="\/v1\/session\/:sessionId\/terminate",status="401"\} [1-9]/m);
    // a path no route knows stays unmatched
    const unknown = await operator.request('GET', `/v1/nope/${sessionId}`);
    expect(unknown.status).to.equal(404);
    expect(accessLineOf(unknown.headers.get('x-request-id')!)).to.include({ route: 'unmatched', status: 404 });
  });

  it('probes and scrapes log at debug, everything else at info', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const response = await send(`${h.baseUrl}${path}`, {});
      expect(accessLineOf(response.headers.get('x-request-id')!), path).to.include({ level: 20, route: path, method: 'GET', status: 200 });
    }
    const missing = await send(`${h.baseUrl}/nope`, {});
    expect(accessLineOf(missing.headers.get('x-request-id')!)).to.include({ level: 30, route: 'unmatched', status: 404 });
  });
});
