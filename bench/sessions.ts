import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { signedHeaders } from '../src/shared/wallet/signer.js';
import type { WalletSimulator } from '../src/simulator/wallet-simulator.js';
import { CURRENCY, type BenchOperator } from './setup.js';
import type { BenchGame } from './options.js';
import { epochMs } from '../src/shared/platform/clock.js';

// Players arrive at a fixed rate: each one's operator launches a real-mode session over
// the signed REST API (contract 2.2, 5.1). Sends follow a schedule and never wait for
// earlier answers (an open loop), so a slow service shows as latency rather than as a
// quietly lower rate.

export type BenchSession = { index: number; operator: BenchOperator; playerRef: string; token: string };

export type SessionPhase = {
  sessions: BenchSession[];
  // each create's last attempt, sent to answered: a refusal and the wait it asks for are
  // not the service's latency
  latenciesMs: number[];
  failures: string[];
  achievedRate: number; // sends per second, as scheduled by this process's event loop
  // 503 service_busy answers (D37), every attempt's: not failures, the create is sent
  // again; one refused on every attempt is also a failure, session:service_busy
  refusals: number;
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
// D37: a node past its intake bound answers 503 service_busy with Retry-After, and an
// operator waits that long and sends the same create again (D17: a 5xx is not stored, so the
// same requestUuid is new to it). A few attempts, then the player counts as a failure; a
// wait longer than the run's time budget allows is not waited for. A retry spends the
// operator's session bucket like any create (contract 8.1), beside the ones on schedule.
export const SESSION_ATTEMPTS = 3;
const MAX_RETRY_AFTER_S = 5;
// D3: Retry-After in whole seconds; 1 where a refusal names none
const DEFAULT_RETRY_AFTER_S = 1;

export async function createSessions(
  baseUrl: string,
  wallet: WalletSimulator,
  operators: BenchOperator[],
  players: number,
  ratePerSecond: number,
  playerRefPrefix = 'bench-player',
  gameCode: BenchGame = 'dice',
): Promise<SessionPhase> {
  const intervalMs = 1000 / ratePerSecond;
  const latenciesMs: number[] = [];
  const failures: string[] = [];
  const sessions: BenchSession[] = [];
  const pending: Promise<void>[] = [];
  let refusals = 0;
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
      createSession(baseUrl, operator, playerRef, gameCode).then(({ launch, latencyMs, refused }) => {
        refusals += refused;
        if (latencyMs !== undefined) latenciesMs.push(latencyMs);
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
    refusals,
  };
}

type Launch = { token: string } | { failure: string; answered: boolean; retryAfterS?: number };

// One player's session create, sent again after each service_busy refusal (D37) as long
// as attempts remain and the wait it asks for fits the run. Its latency is its last
// attempt's, sent to answered; a request that got no answer has none, only a failure, and
// neither has a create the service refused every time.
async function createSession(
  baseUrl: string,
  operator: BenchOperator,
  playerRef: string,
  gameCode: BenchGame,
): Promise<{ launch: Launch; latencyMs: number | undefined; refused: number }> {
  const requestUuid = randomUUID();
  for (let attempt = 1; ; attempt++) {
    const sent = epochMs();
    const launch = await launchSession(baseUrl, operator, playerRef, requestUuid, gameCode);
    const refused = attempt - 1;
    if ('failure' in launch && !launch.answered) return { launch, latencyMs: undefined, refused };
    if (!('failure' in launch) || launch.retryAfterS === undefined) return { launch, latencyMs: epochMs() - sent, refused };
    if (attempt === SESSION_ATTEMPTS || launch.retryAfterS > MAX_RETRY_AFTER_S) {
      return { launch: { failure: 'session:service_busy', answered: true }, latencyMs: undefined, refused: attempt };
    }
    await new Promise((resolve) => setTimeout(resolve, launch.retryAfterS! * 1000));
  }
}

// One signed session create (contract 2.2, 5.1) with a requestUuid, as an operator that can
// retry safely sends it, signed afresh for each attempt; the failure names the HTTP status
// and error code, and a service_busy refusal (D37) the seconds to wait before the next.
async function launchSession(baseUrl: string, operator: BenchOperator, playerRef: string, requestUuid: string, gameCode: BenchGame): Promise<Launch> {
  const body = JSON.stringify({
    operatorId: operator.operatorId,
    playerRef,
    gameCode,
    currency: CURRENCY,
    lang: 'en',
    jurisdiction: 'MT',
    requestUuid,
  });
  try {
    const headers = { 'content-type': 'application/json', ...signedHeaders(operator.key.kid, operator.key.secret, 'POST', '/v1/session', body) };
    const response = await post(`${baseUrl}/v1/session`, headers, body);
    const answer = parseAnswer(response.text);
    if (response.status === 200 && answer.sessionToken) return { token: answer.sessionToken };
    const failure = `session_create:${response.status}${answer.error ? `:${answer.error}` : ''}`;
    if (response.status === 503 && answer.error === 'service_busy') {
      return { failure, answered: true, retryAfterS: retryAfterSeconds(response.retryAfter, answer.retryAfterSeconds) };
    }
    return { failure, answered: true };
  } catch (err) {
    const name = (err as Error).name;
    return { failure: `session_create:${name === 'TimeoutError' ? 'timeout' : (err as Error).message}`, answered: false };
  }
}

type Answer = { sessionToken?: string; error?: string; retryAfterSeconds?: unknown };

function parseAnswer(text: string): Answer {
  try {
    return JSON.parse(text) as Answer;
  } catch {
    return {};
  }
}

// The Retry-After header in whole seconds (D3), else the body's retryAfterSeconds, else 1
export function retryAfterSeconds(header: string | undefined, bodyValue: unknown): number {
  if (header !== undefined && /^[0-9]+$/.test(header.trim())) return Number(header.trim());
  if (typeof bodyValue === 'number' && Number.isInteger(bodyValue) && bodyValue >= 0) return bodyValue;
  return DEFAULT_RETRY_AFTER_S;
}

function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', agent: operatorAgent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } };
    const request = http.request(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', fail);
      response.on('end', () => {
        clearTimeout(timer);
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter });
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
