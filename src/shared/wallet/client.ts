import { randomUUID } from 'node:crypto';
import { betStep } from '../platform/bet-steps.js';
import type { Sql } from '../platform/db/sql.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { isMicroAmount, parseMicro } from '../domain/money.js';
import { CredentialUnreadableError, revealSecret } from './credentials.js';
import { OutboundHttp, type SendOutcome as OutboundOutcome } from './outbound.js';
import type { CircuitBreaker } from './circuit.js';
import { AuditLog, CIRCUIT_OPEN_ERROR, type AuditCompletion, type WalletTargetRow } from './audit.js';
import { classifyStatus, isRsStatus, statusOfAnswer, type RsStatus, type StatusClass, type WalletEndpoint } from '../domain/wallet-status.js';

// D24: a wallet's answer is untrusted in size. One larger than this is cut off and taken as
// RS_ERROR_UNKNOWN (uncertain); a string from it is truncated before it is logged or stored.
export const WALLET_ANSWER_MAX_BYTES = 64 * 1024;
export const WALLET_STRING_MAX_CHARS = 256;

// the first WALLET_STRING_MAX_CHARS characters (code points, not UTF-16 units) of a wallet's string
export function clipWalletString(text: string): string {
  if (text.length <= WALLET_STRING_MAX_CHARS) return text;
  let clipped = '';
  let count = 0;
  for (const char of text) {
    if (count++ === WALLET_STRING_MAX_CHARS) break;
    clipped += char;
  }
  return clipped;
}

// The one client for the operator's wallet (contract 4.2, 4.3, DECISIONS D6, D13), and its
// one call: WalletClient.call. Every call writes its audit row before the HTTP request and
// completes it with the response (contract 2.13, audit.ts); the body is serialised once and
// those exact bytes are signed and sent, so that a retry of a timed-out call can resend them
// unchanged. Requests go over kept-alive connections. A call still waits for its own audit
// row to be durable before it is sent. What differs between callers is said by CallOptions:
// a debit fenced on its bet, a debit whose row the statement placing its bet wrote, a row
// the caller completes in its own statement.

// privateAllowed: D25, the operator may have a wallet on a private network
type WalletTarget = { walletUrl: string; keyId: string; secret: string; privateAllowed: boolean };

// The call cannot go to the operator's wallet, and was not sent: no valid wallet credential,
// one this process cannot decrypt (another MASTER_KEY), or (WalletAddressRefusedError) an
// address the operator may not use. A misconfiguration to alert on; nothing reached the
// wallet, so nothing is uncertain.
export class WalletTargetError extends Error {
  override name = 'WalletTargetError';
}

// D25: in production, the wallet's address (as connected to, not as saved) is not public and
// the operator is not flagged wallet_url_private_allowed. The audit row is completed with the
// refusal (no status: nothing answered).
export class WalletAddressRefusedError extends WalletTargetError {
  override name = 'WalletAddressRefusedError';
}

export type WalletCallInput = {
  operatorId: string;
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

// A call's request before its audit row is written: the body is serialised once, and those
// exact bytes are audited, signed and sent (D6: a retry of a timed-out call resends them).
export type PreparedCall = { auditId: string; requestUuid: string; attempt: number; bytes: string };

export function prepareCall(input: Pick<WalletCallInput, 'fields' | 'retryOf'>): PreparedCall {
  const requestUuid = input.retryOf?.requestUuid ?? randomUUID();
  return {
    auditId: randomUUID(),
    requestUuid,
    attempt: input.retryOf ? input.retryOf.attempt + 1 : 1,
    bytes: input.retryOf?.bytes ?? JSON.stringify({ requestUuid, ...input.fields }),
  };
}

// A call whose audit row is written, and when (the row's month, D36: its completion names it)
type WrittenCall = PreparedCall & { auditCreatedAt: Date };

// a debit whose audit row the statement that placed its bet wrote (place.ts), with the
// wallet target that statement read (walletTargetSql)
export type AuditedDebit = WrittenCall & { target: WalletTargetRow };

// the outbound path's outcome (outbound.ts), or the open circuit's refusal (nothing sent)
type SendOutcome = OutboundOutcome | { kind: 'circuit_open'; error: string };

// How a call's audit row is written and completed (contract 2.13); no options: written
// before the call, completed with the answer, by the client.
export type CallOptions = {
  // a debit (contract 2.6) whose row is written only while this bet is still PENDING: a
  // bet another delivery already decided is not debited again ('not_pending')
  whilePending?: string;
  // a debit whose row the statement that placed its bet wrote (place.ts)
  audited?: AuditedDebit;
  // the caller completes the row: in the statement that records what the answer means
  // (completeAuditsSql), or with audit.complete()
  deferAudit?: boolean;
};

// the answer, and what completes its audit row (already written unless deferAudit)
export type WalletAnswer = WalletResult & { audit: AuditCompletion };

export class WalletClient {
  readonly audit: AuditLog;
  // kept-alive connections to the wallets, public addresses only in production unless the
  // operator is flagged wallet_url_private_allowed (D25)
  private readonly outbound: OutboundHttp;

  constructor(
    sql: Sql,
    private readonly masterKey: Buffer,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
    readonly circuit: CircuitBreaker,
    private readonly now: () => Date,
    // D25: wallet connections go to public addresses only, unless the operator is flagged
    production = false,
  ) {
    this.audit = new AuditLog(sql);
    this.outbound = new OutboundHttp(production, 'wallet URL');
  }

  // The one way to call an operator's wallet. WalletTargetError when the call cannot go to
  // the operator's wallet (no valid credential, one this process cannot decrypt, an address
  // it may not use, D25): nothing was sent.
  call(input: WalletCallInput, options: CallOptions & { whilePending: string }): Promise<WalletAnswer | 'not_pending'>;
  call(input: WalletCallInput, options?: Omit<CallOptions, 'whilePending'>): Promise<WalletAnswer>;
  async call(input: WalletCallInput, options: CallOptions = {}): Promise<WalletAnswer | 'not_pending'> {
    const answer = await this.perform(input, options);
    if (answer !== 'not_pending' && !options.deferAudit) await this.audit.complete(answer.audit);
    return answer;
  }

  close(): void {
    this.outbound.close();
  }

  private async perform(input: WalletCallInput, { whilePending, audited }: CallOptions): Promise<WalletAnswer | 'not_pending'> {
    let call: WrittenCall;
    let target: WalletTargetRow;
    if (audited) {
      call = audited;
      target = audited.target;
    } else {
      const prepared = prepareCall(input);
      const written = await this.audit.write({
        id: prepared.auditId,
        operatorId: input.operatorId,
        sessionId: input.sessionId ?? null,
        endpoint: input.endpoint,
        requestUuid: prepared.requestUuid,
        transactionUuid: input.transactionUuid ?? null,
        attempt: prepared.attempt,
        requestBody: prepared.bytes,
        pendingBetId: whilePending ?? null,
        at: this.now(),
      });
      if (written.kind === 'not_pending') return 'not_pending';
      if (written.kind === 'no_target') throw new WalletTargetError(`operator ${input.operatorId} has no valid wallet credential`);
      target = written.target;
      call = { ...prepared, auditCreatedAt: written.createdAt };
      if (whilePending) betStep(whilePending, 'audited');
    }
    // D24: the row is written; one operator's unreadable credential fails only its own call
    let revealed: WalletTarget;
    try {
      revealed = this.reveal(target);
    } catch (err) {
      if (!(err instanceof CredentialUnreadableError)) throw err;
      return this.unsent(input, call, err.message, WalletTargetError);
    }
    return this.exchange(input, call, revealed);
  }

  private reveal(row: WalletTargetRow): WalletTarget {
    const secret = revealSecret(this.masterKey, { kid: row.kid, encryptedSecret: row.encrypted_secret, wrappedDataKey: row.wrapped_data_key });
    return { walletUrl: row.wallet_url, keyId: row.kid, secret, privateAllowed: row.wallet_url_private_allowed };
  }

  // A call whose audit row is written but which cannot be sent: the row is completed with
  // why (no status: nothing answered), and the misconfiguration is logged to alert on.
  private async unsent(
    input: WalletCallInput,
    call: WrittenCall,
    error: string,
    Refusal: new (message: string) => WalletTargetError,
    latencyMs = 0,
  ): Promise<never> {
    this.logger.error({ endpoint: input.endpoint, operatorId: input.operatorId, requestUuid: call.requestUuid, error }, 'wallet call not sent');
    await this.audit.complete({
      id: call.auditId,
      httpStatus: null,
      status: null,
      latencyMs,
      error,
      respondedAt: new Date(),
      responseBody: null,
      createdAt: call.auditCreatedAt,
    });
    throw new Refusal(`operator ${input.operatorId}: ${error}; the call was not sent`);
  }

  // the call whose audit row is written: sent (unless the circuit is open), answered and classified
  private async exchange(input: WalletCallInput, call: WrittenCall, target: WalletTarget): Promise<WalletAnswer> {
    const { auditId, requestUuid, attempt, bytes } = call;
    const url = new URL(`${target.walletUrl}/wallet/${input.endpoint}`);

    const started = performance.now();
    // contract 3.4: an open circuit fails the call at once with RS_ERROR_TIMEOUT
    const admission = await this.circuit.admit(input.operatorId, input.endpoint);
    const outcome: SendOutcome =
      admission === 'open' ? { kind: 'circuit_open', error: CIRCUIT_OPEN_ERROR } : await this.send(url, bytes, target);
    const latencyMs = Math.round(performance.now() - started);
    // not an answer (the circuit is not told)
    if (outcome.kind === 'refused') return this.unsent(input, call, outcome.error, WalletAddressRefusedError, latencyMs);
    const parsed = outcome.kind === 'response' ? parseWalletResponse(outcome.httpStatus, outcome.text, requestUuid) : undefined;
    const status: RsStatus =
      outcome.kind === 'timeout' || outcome.kind === 'circuit_open' ? 'RS_ERROR_TIMEOUT' : (parsed?.status ?? 'RS_ERROR_UNKNOWN');
    const statusClass = classifyStatus(status, input.endpoint);
    // D13, contract 3.4: only uncertain answers count against the circuit; an open
    // circuit's own refusal is not an answer. A definite answer, a refusal included and
    // whatever its HTTP status (a 401 RS_ERROR_INVALID_SIGNATURE, fatal in contract 7.1), is
    // the wallet up and answering, so it resets the count: a misconfigured credential is an
    // alert to act on (7.1), not an outage for the circuit to shield the wallet from.
    if (outcome.kind !== 'circuit_open') await this.circuit.record(input.operatorId, input.endpoint, statusClass !== 'uncertain');
    else this.metrics.circuitRejections.inc({ endpoint: input.endpoint });
    const error = outcome.kind === 'response' ? parsed?.problem : outcome.error;
    const httpStatus = outcome.kind === 'response' || outcome.kind === 'oversize' ? outcome.httpStatus : undefined;

    const audit: AuditCompletion = {
      id: auditId,
      httpStatus: httpStatus ?? null,
      status,
      latencyMs,
      error: error ?? null,
      respondedAt: new Date(),
      // D32, D33: kept as received (never more than the cap, D24)
      responseBody: outcome.kind === 'response' ? outcome.text : null,
      createdAt: call.auditCreatedAt,
    };
    this.metrics.walletCallDuration.observe({ endpoint: input.endpoint, status }, latencyMs / 1000);
    if (error) {
      this.logger.warn({ endpoint: input.endpoint, operatorId: input.operatorId, requestUuid, status, error }, 'wallet call uncertain');
    }

    return {
      endpoint: input.endpoint,
      status,
      statusClass,
      requestUuid,
      bytes,
      attempt,
      timedOut: outcome.kind === 'timeout',
      httpStatus,
      balanceMicro: parsed?.balanceMicro,
      currency: parsed?.currency,
      message: parsed?.message,
      latencyMs,
      audit,
    };
  }

  // the outbound timeout covers the whole exchange (contract 8.1 WALLET_CALL_TIMEOUT_MS)
  private send(url: URL, bytes: string, target: WalletTarget): Promise<SendOutcome> {
    return this.outbound.post(url, bytes, target, { timeoutMs: this.timeoutMs, maxAnswerBytes: WALLET_ANSWER_MAX_BYTES });
  }
}

type ParsedResponse = { status: RsStatus; balanceMicro?: bigint; currency?: string; message?: string; problem?: string };

// D13: a JSON object with a known RS_ status that echoes our requestUuid is read, then its
// HTTP status says whether it may be taken at its word (statusOfAnswer: a 2xx, or a 4xx that
// refuses); a body that is not JSON, a missing or unknown status, a requestUuid that does not
// echo ours, a 5xx or a 4xx claiming success is RS_ERROR_UNKNOWN. The answer reaching here
// is within the size cap and the timeout whatever its HTTP status (outbound.ts, D24);
// balanceMicro is only ever read as a MicroAmount string.
export function parseWalletResponse(httpStatus: number, text: string, requestUuid: string): ParsedResponse {
  const read = readAnswerBody(text, requestUuid);
  if ('problem' in read) {
    const success = httpStatus >= 200 && httpStatus <= 299;
    return { status: 'RS_ERROR_UNKNOWN', problem: success ? read.problem : `HTTP ${httpStatus}: ${read.problem}` };
  }
  const judged = statusOfAnswer(httpStatus, read.status);
  if (judged.problem !== undefined) return { status: 'RS_ERROR_UNKNOWN', problem: judged.problem };
  return { ...read, status: judged.status };
}

function readAnswerBody(text: string, requestUuid: string): Omit<ParsedResponse, 'problem'> | { problem: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { problem: 'response is not JSON' };
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { problem: 'response is not a JSON object' };
  const fields = body as Record<string, unknown>;
  if (!isRsStatus(fields.status)) return { problem: `unknown status ${shownValue(fields.status)}` };
  if (typeof fields.requestUuid !== 'string' || fields.requestUuid.toLowerCase() !== requestUuid) {
    return { problem: 'requestUuid does not echo the request' };
  }
  return {
    status: fields.status,
    balanceMicro: isMicroAmount(fields.balanceMicro) ? parseMicro(fields.balanceMicro) : undefined,
    currency: typeof fields.currency === 'string' ? clipWalletString(fields.currency) : undefined,
    message: typeof fields.message === 'string' ? clipWalletString(fields.message) : undefined,
  };
}

// D24: what the audit row and the log say of a wallet's value, truncated (a string) or its
// JSON truncated (any other value)
function shownValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(clipWalletString(value));
  return clipWalletString(JSON.stringify(value) ?? String(value));
}
