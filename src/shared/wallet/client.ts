import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { isMicroAmount, parseMicro } from '../money.js';
import { signedHeaders } from '../signing/signer.js';
import type { CircuitBreaker } from './circuit.js';
import { classifyStatus, isRsStatus, type RsStatus, type StatusClass, type WalletEndpoint } from './status.js';

// written to the audit row of a call an open circuit refused (the wallet-calls report counts them)
export const CIRCUIT_OPEN_ERROR = 'circuit_open';

// The one client for the operator's wallet (contract 4.2, 4.3, DECISIONS D6, D13).
// Every call writes its audit row before the HTTP request and completes it with the
// response (contract 2.13); the body is serialised once and those exact bytes are signed
// and sent, so that a retry of a timed-out call can resend them unchanged.

export type WalletTarget = { operatorId: string; walletUrl: string; keyId: string; secret: string };

export type WalletCallInput = {
  target: WalletTarget;
  endpoint: WalletEndpoint;
  // contract 2.5-2.9 fields other than requestUuid; money already as MicroAmount strings
  fields: Record<string, unknown>;
  sessionId?: string;
  transactionUuid?: string;
  // D6: a retry of a timed-out call resends the same requestUuid and bytes
  retryOf?: { requestUuid: string; bytes: string; attempt: number };
};

export type WalletResult = {
  endpoint: WalletEndpoint;
  status: RsStatus;
  statusClass: StatusClass;
  requestUuid: string;
  bytes: string;
  attempt: number;
  timedOut: boolean;
  httpStatus?: number;
  balanceMicro?: bigint;
  currency?: string;
  message?: string;
  latencyMs: number;
};

export class WalletClient {
  constructor(
    private readonly db: Db,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
    readonly circuit: CircuitBreaker,
  ) {}

  async call(input: WalletCallInput): Promise<WalletResult> {
    const requestUuid = input.retryOf?.requestUuid ?? randomUUID();
    const attempt = input.retryOf ? input.retryOf.attempt + 1 : 1;
    const bytes = input.retryOf?.bytes ?? JSON.stringify({ requestUuid, ...input.fields });
    const url = `${input.target.walletUrl}/wallet/${input.endpoint}`;
    // contract 4.2: the signed path is the exact path the receiver sees, prefix included
    const path = new URL(url).pathname;
    const auditId = randomUUID();
    await this.db.walletCall.create({
      data: {
        id: auditId,
        operatorId: input.target.operatorId,
        sessionId: input.sessionId,
        endpoint: input.endpoint,
        requestUuid,
        transactionUuid: input.transactionUuid,
        attempt,
        requestBody: bytes,
      },
    });

    const started = performance.now();
    // contract 3.4: an open circuit fails the call at once with RS_ERROR_TIMEOUT
    const admission = await this.circuit.admit(input.target.operatorId, input.endpoint);
    const outcome =
      admission === 'open'
        ? ({ kind: 'circuit_open', error: CIRCUIT_OPEN_ERROR } as const)
        : await this.send(url, path, bytes, input.target);
    const latencyMs = Math.round(performance.now() - started);
    const parsed = outcome.kind === 'response' ? parseWalletResponse(outcome.httpStatus, outcome.text, requestUuid) : undefined;
    const status: RsStatus =
      outcome.kind === 'timeout' || outcome.kind === 'circuit_open' ? 'RS_ERROR_TIMEOUT' : (parsed?.status ?? 'RS_ERROR_UNKNOWN');
    const statusClass = classifyStatus(status, input.endpoint);
    // D13: only uncertain answers count against the circuit; an open circuit's own refusal
    // is not an answer
    if (outcome.kind !== 'circuit_open') await this.circuit.record(input.target.operatorId, input.endpoint, statusClass !== 'uncertain');
    else this.metrics.circuitRejections.inc({ endpoint: input.endpoint });
    const error = outcome.kind === 'response' ? parsed?.problem : outcome.error;

    await this.db.walletCall.update({
      where: { id: auditId },
      data: {
        httpStatus: outcome.kind === 'response' ? outcome.httpStatus : null,
        status,
        latencyMs,
        error: error ?? null,
        respondedAt: new Date(),
      },
    });
    this.metrics.walletCallDuration.observe({ endpoint: input.endpoint, status }, latencyMs / 1000);
    if (error) {
      this.logger.warn({ endpoint: input.endpoint, operatorId: input.target.operatorId, requestUuid, status, error }, 'wallet call uncertain');
    }

    return {
      endpoint: input.endpoint,
      status,
      statusClass,
      requestUuid,
      bytes,
      attempt,
      timedOut: outcome.kind === 'timeout',
      httpStatus: outcome.kind === 'response' ? outcome.httpStatus : undefined,
      balanceMicro: parsed?.balanceMicro,
      currency: parsed?.currency,
      message: parsed?.message,
      latencyMs,
    };
  }

  private async send(
    url: string,
    path: string,
    bytes: string,
    target: WalletTarget,
  ): Promise<{ kind: 'response'; httpStatus: number; text: string } | { kind: 'timeout' | 'network'; error: string }> {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signedHeaders(target.keyId, target.secret, 'POST', path, bytes) },
        body: bytes,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      return { kind: 'response', httpStatus: response.status, text: await response.text() };
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'timeout', error: `no answer within ${this.timeoutMs} ms` };
      return { kind: 'network', error: `network error: ${(err as Error).message}` };
    }
  }
}

type ParsedResponse = { status: RsStatus; balanceMicro?: bigint; currency?: string; message?: string; problem?: string };

// D13: HTTP 200 with a known RS_ status is taken at its word; non-2xx, a body that is not
// JSON, a missing or unknown status, or a requestUuid that does not echo ours is
// RS_ERROR_UNKNOWN. balanceMicro is only ever read as a MicroAmount string.
export function parseWalletResponse(httpStatus: number, text: string, requestUuid: string): ParsedResponse {
  if (httpStatus < 200 || httpStatus > 299) return { status: 'RS_ERROR_UNKNOWN', problem: `HTTP ${httpStatus}` };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { status: 'RS_ERROR_UNKNOWN', problem: 'response is not JSON' };
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { status: 'RS_ERROR_UNKNOWN', problem: 'response is not a JSON object' };
  const fields = body as Record<string, unknown>;
  if (!isRsStatus(fields.status)) return { status: 'RS_ERROR_UNKNOWN', problem: `unknown status ${JSON.stringify(fields.status)}` };
  if (typeof fields.requestUuid !== 'string' || fields.requestUuid.toLowerCase() !== requestUuid) {
    return { status: 'RS_ERROR_UNKNOWN', problem: 'requestUuid does not echo the request' };
  }
  return {
    status: fields.status,
    balanceMicro: isMicroAmount(fields.balanceMicro) ? parseMicro(fields.balanceMicro) : undefined,
    currency: typeof fields.currency === 'string' ? fields.currency : undefined,
    message: typeof fields.message === 'string' ? fields.message : undefined,
  };
}
