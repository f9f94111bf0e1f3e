import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { signedHeaders } from '../src/wallet/signer.js';
import type { WalletSimulator } from '../src/simulator/wallet-simulator.js';
import { CURRENCY, type BenchOperator } from './setup.js';
import { epochMs } from '../src/platform/clock.js';

// Players arrive at a fixed rate: each one's operator launches a real-mode session over
// the signed REST API (contract 2.2, 5.1). Sends follow a schedule and never wait for
// earlier answers (an open loop), so a slow service shows as latency rather than as a
// quietly lower rate.

export type BenchSession = { index: number; operator: BenchOperator; playerRef: string; token: string };

export type SessionPhase = {
  sessions: BenchSession[];
  latenciesMs: number[];
  failures: string[];
  achievedRate: number; // sends per second, as scheduled by this process's event loop
};

// plenty for every round of a run: 1,000,000.00 EUR
const PLAYER_BALANCE_MICRO = 100_000_000_000n;
// an answer this late is a failure: the run has a time budget
const CREATE_TIMEOUT_MS = 10_000;
// The operators' HTTP client. node:http with kept-alive connections rather than fetch:
// the generator shares the box with the service, and fetch (undici, web streams, an abort
// signal per request) cost it about 1 ms of CPU per session create, as much as a third of
// the service's own cost; node:http costs a fraction of that.
const operatorAgent = new http.Agent({ keepAlive: true, maxSockets: 512 });

export async function createSessions(
  baseUrl: string,
  wallet: WalletSimulator,
  operators: BenchOperator[],
  players: number,
  ratePerSecond: number,
  playerRefPrefix = 'bench-player',
): Promise<SessionPhase> {
  const intervalMs = 1000 / ratePerSecond;
  const latenciesMs: number[] = [];
  const failures: string[] = [];
  const sessions: BenchSession[] = [];
  const pending: Promise<void>[] = [];
  const start = epochMs();
  let firstSent = 0;
  let lastSent = 0;
  for (let index = 0; index < players; index++) {
    const due = start + index * intervalMs;
    const wait = due - epochMs();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // players are dealt to the operators in turn, so every operator stays under its own limit
    const operator = operators[index % operators.length]!;
    const playerRef = `${playerRefPrefix}-${index}`;
    wallet.setBalance(playerRef, CURRENCY, PLAYER_BALANCE_MICRO);
    const sent = epochMs();
    if (index === 0) firstSent = sent;
    lastSent = sent;
    pending.push(
      launchSession(baseUrl, operator, playerRef).then((launch) => {
        // a request that got no answer has no latency, only a failure
        if (!('failure' in launch) || launch.answered) latenciesMs.push(epochMs() - sent);
        if ('failure' in launch) failures.push(launch.failure);
        else sessions.push({ index, operator, playerRef, token: launch.token });
      }),
    );
  }
  await Promise.all(pending);
  const spanS = (lastSent - firstSent) / 1000;
  return {
    sessions: sessions.sort((a, b) => a.index - b.index),
    latenciesMs,
    failures,
    achievedRate: spanS > 0 ? (players - 1) / spanS : players,
  };
}

// One signed session create (contract 2.2, 5.1) with a requestUuid, as an operator that can
// retry safely sends it; the failure names the HTTP status and error code.
async function launchSession(
  baseUrl: string,
  operator: BenchOperator,
  playerRef: string,
): Promise<{ token: string } | { failure: string; answered: boolean }> {
  const body = JSON.stringify({
    operatorId: operator.operatorId,
    playerRef,
    gameCode: 'dice',
    currency: CURRENCY,
    lang: 'en',
    jurisdiction: 'MT',
    requestUuid: randomUUID(),
  });
  try {
    const headers = { 'content-type': 'application/json', ...signedHeaders(operator.key.kid, operator.key.secret, 'POST', '/v1/session', body) };
    const response = await post(`${baseUrl}/v1/session`, headers, body);
    const answer = parseAnswer(response.text);
    if (response.status === 200 && answer.sessionToken) return { token: answer.sessionToken };
    return { failure: `session_create:${response.status}${answer.error ? `:${answer.error}` : ''}`, answered: true };
  } catch (err) {
    const name = (err as Error).name;
    return { failure: `session_create:${name === 'TimeoutError' ? 'timeout' : (err as Error).message}`, answered: false };
  }
}

function parseAnswer(text: string): { sessionToken?: string; error?: string } {
  try {
    return JSON.parse(text) as { sessionToken?: string; error?: string };
  } catch {
    return {};
  }
}

function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', agent: operatorAgent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } };
    const request = http.request(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', fail);
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    const timer = setTimeout(() => request.destroy(Object.assign(new Error('no answer in time'), { name: 'TimeoutError' })), CREATE_TIMEOUT_MS);
    function fail(err: Error) {
      clearTimeout(timer);
      reject(err);
    }
    request.on('error', fail);
    request.end(body);
  });
}
