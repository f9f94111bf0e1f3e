import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WalletSimulator } from '../../../src/simulator/wallet-simulator.js';
import { createSessions, retryAfterSeconds, SESSION_ATTEMPTS } from '../../../bench/sessions.js';

// The bench's session creates against a stand-in for the service on loopback: a create
// refused 503 service_busy (D37) is sent again after Retry-After, with the same requestUuid
// (D17), a few times at most; the refusals are counted, and only a create refused every
// time is a failure. Retry-After is 0 here so that nothing waits; nothing is timed.

type Answer = { status: number; body: Record<string, unknown>; retryAfter?: string };

const busy = (retryAfter = '0'): Answer => ({
  status: 503,
  body: { error: 'service_busy', message: 'over the intake bound', retryAfterSeconds: Number(retryAfter) },
  retryAfter,
});
const created = (playerRef: string): Answer => ({ status: 200, body: { sessionToken: `token-${playerRef}` } });

const wallet = { setBalance: () => undefined } as unknown as WalletSimulator;
const operators = [{ operatorId: 'bench-op-0', key: { kid: 'kid-0', secret: 'secret-0' } }];

describe('bench session creates', () => {
  let server: http.Server;
  let baseUrl: string;
  // each player's answers in turn, the last one repeated; and the requestUuids it sent
  let script: (playerRef: string, attempt: number) => Answer;
  let sent: Map<string, string[]>;

  before(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { playerRef, requestUuid } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { playerRef: string; requestUuid: string };
        const uuids = sent.get(playerRef) ?? [];
        uuids.push(requestUuid);
        sent.set(playerRef, uuids);
        const answer = script(playerRef, uuids.length);
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
        response.writeHead(answer.status, headers).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  beforeEach(() => {
    sent = new Map();
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends a refused create again with the same requestUuid and counts the refusals, not as failures', async () => {
    script = (playerRef, attempt) => (playerRef.endsWith('-1') && attempt < SESSION_ATTEMPTS ? busy() : created(playerRef));
    const phase = await createSessions(baseUrl, wallet, operators, 3, 1000);
    expect(phase.failures).to.deep.equal([]);
    expect(phase.sessions.map((session) => session.token)).to.deep.equal(['token-bench-player-0', 'token-bench-player-1', 'token-bench-player-2']);
    expect(phase.refusals).to.equal(SESSION_ATTEMPTS - 1);
    const retried = sent.get('bench-player-1')!;
    expect(retried).to.have.length(SESSION_ATTEMPTS);
    expect(new Set(retried).size, 'one requestUuid for every attempt').to.equal(1);
    // one latency per create: the last attempt's
    expect(phase.latenciesMs).to.have.length(3);
  });

  it('a create refused on every attempt is a failure, session:service_busy, with no latency', async () => {
    script = (playerRef) => (playerRef.endsWith('-0') ? busy() : created(playerRef));
    const phase = await createSessions(baseUrl, wallet, operators, 2, 1000);
    expect(phase.failures).to.deep.equal(['session:service_busy']);
    expect(phase.sessions.map((session) => session.playerRef)).to.deep.equal(['bench-player-1']);
    expect(phase.refusals).to.equal(SESSION_ATTEMPTS);
    expect(sent.get('bench-player-0')).to.have.length(SESSION_ATTEMPTS);
    expect(phase.latenciesMs).to.have.length(1);
  });

  it('waits for no Retry-After longer than a run allows, and retries no other 503', async () => {
    script = (playerRef) =>
      playerRef.endsWith('-0')
        ? busy('60')
        : { status: 503, body: { error: 'service_unavailable', message: 'Postgres is away' }, retryAfter: '0' };
    const phase = await createSessions(baseUrl, wallet, operators, 2, 1000);
    expect(phase.failures.sort()).to.deep.equal(['session:service_busy', 'session_create:503:service_unavailable']);
    expect(phase.refusals).to.equal(1);
    expect(sent.get('bench-player-0')).to.have.length(1);
    expect(sent.get('bench-player-1')).to.have.length(1);
  });

  it('reads Retry-After in whole seconds, else the body\'s retryAfterSeconds, else 1', () => {
    expect(retryAfterSeconds('3', 7)).to.equal(3);
    expect(retryAfterSeconds(undefined, 2)).to.equal(2);
    expect(retryAfterSeconds('Wed, 21 Oct 2015 07:28:00 GMT', 4)).to.equal(4);
    expect(retryAfterSeconds(undefined, '2')).to.equal(1);
    expect(retryAfterSeconds(undefined, undefined)).to.equal(1);
  });
});
