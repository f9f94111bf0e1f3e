import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Batcher, HOT_PATH_BATCH } from '../platform/batch.js';
import { betStep } from '../platform/bet-steps.js';
import { statement, type Sql } from '../platform/db/sql.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { isMicroAmount, parseMicro } from '../domain/money.js';
import { signedHeaders } from './signer.js';
import { CredentialUnreadableError, revealSecret } from './credentials.js';
import { NonPublicAddressError, nonPublicAddress, publicOnlyLookup } from '../game/operators/settings-policy.js';
import type { CircuitBreaker } from './circuit.js';
import { classifyStatus, isRsStatus, type RsStatus, type StatusClass, type WalletEndpoint } from '../domain/wallet-status.js';

// written to the audit row of a call an open circuit refused (the wallet-calls report counts them)
export const CIRCUIT_OPEN_ERROR = 'circuit_open';

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

// The one client for the operator's wallet (contract 4.2, 4.3, DECISIONS D6, D13).
// Every call writes its audit row before the HTTP request and completes it with the
// response (contract 2.13); the body is serialised once and those exact bytes are signed
// and sent, so that a retry of a timed-out call can resend them unchanged.
//
// The audit rows of calls made at the same moment are written by one statement,
// which also reads where each operator's wallet is and which credential signs for it, and
// completed by another; requests go over kept-alive connections. A call still waits for its
// own audit row to be durable before it is sent. A debit may come with its audit row
// already written by the statement that placed its bet (debitAudited, placement.ts).

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

type AuditRow = {
  id: string;
  operatorId: string;
  sessionId: string | null;
  endpoint: WalletEndpoint;
  requestUuid: string;
  transactionUuid: string | null;
  attempt: number;
  requestBody: string;
  // the row is written only while this bet is still PENDING (a debit's own fence)
  pendingBetId: string | null;
  // the service clock, for the credential's validity
  at: Date;
};

// the call may go out (its audit row is written), it may not (its bet is no longer
// PENDING), or it cannot (the operator has no valid wallet credential)
type Audited = { kind: 'written'; target: WalletTarget } | { kind: 'not_pending' } | { kind: 'no_target' } | { kind: 'unreadable'; error: string };

// what completes a call's audit row (contract 2.13: updated with the response)
// (status null: the call was refused before it was sent, D25)
export type AuditCompletion = { id: string; httpStatus: number | null; status: RsStatus | null; latencyMs: number; error: string | null; respondedAt: Date };

// a call whose audit row the caller completes in a statement of its own (the one that
// records what the answer means), so that the two take one round trip and one commit
export type DeferredAudit = WalletResult & { audit: AuditCompletion };

// Completes audit rows; a caller embeds it as a CTE of its own statement, its parameters
// numbered from `first` (auditParams gives them, in order).
export const completeAuditsSql = (first: number) =>
  `UPDATE wallet_calls w
   SET http_status = a.http_status, status = a.status, latency_ms = a.latency_ms, error = a.error, responded_at = a.responded_at
   FROM unnest($${first}::uuid[], $${first + 1}::int[], $${first + 2}::text[], $${first + 3}::int[], $${first + 4}::text[],
               $${first + 5}::timestamptz[])
     AS a(id, http_status, status, latency_ms, error, responded_at)
   WHERE w.id = a.id`;

export const auditParams = (audits: AuditCompletion[]): unknown[] => [
  audits.map((a) => a.id),
  audits.map((a) => a.httpStatus),
  audits.map((a) => a.status),
  audits.map((a) => a.latencyMs),
  audits.map((a) => a.error),
  audits.map((a) => a.respondedAt),
];

// The operator's wallet address and the newest credential valid at the row's moment (D6: a
// rotation or a revocation applies to the very next call), for each row of `rows` (a CTE
// with id, operator_id and at columns), and whether it may be on a private network (D25).
export const walletTargetSql = (rows: string) =>
  `SELECT ${rows}.id, o.wallet_url, o.wallet_url_private_allowed, c.kid, c.encrypted_secret, c.wrapped_data_key
   FROM ${rows} JOIN operators o ON o.id = ${rows}.operator_id
   JOIN LATERAL (
     SELECT kid, encrypted_secret, wrapped_data_key FROM credentials
     WHERE operator_id = ${rows}.operator_id AND kind = 'WALLET' AND revoked_at IS NULL
       AND not_before <= ${rows}.at AND (not_after IS NULL OR ${rows}.at <= not_after)
     ORDER BY not_before DESC
     LIMIT 1
   ) c ON true`;

// contract 2.13: the audit row, before the call, with its wallet's target
const INSERT_AUDIT_ROWS = statement(
  'wallet_audit_insert',
  `WITH u AS (
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::uuid[], $6::uuid[], $7::int[], $8::text[], $9::uuid[],
                          $10::timestamptz[])
       AS u(id, operator_id, session_id, endpoint, request_uuid, transaction_uuid, attempt, request_body, pending_bet_id, at)
   ),
   target AS (${walletTargetSql('u')}),
   written AS (
     INSERT INTO wallet_calls (id, operator_id, session_id, direction, endpoint, request_uuid, transaction_uuid, attempt, request_body)
     SELECT u.id, u.operator_id, u.session_id, 'OUT', u.endpoint, u.request_uuid, u.transaction_uuid, u.attempt, u.request_body
     FROM u JOIN target ON target.id = u.id
     WHERE u.pending_bet_id IS NULL OR EXISTS (SELECT 1 FROM bets b WHERE b.id = u.pending_bet_id AND b.status = 'PENDING')
     RETURNING id
   )
   SELECT target.*, written.id IS NOT NULL AS written FROM target LEFT JOIN written ON written.id = target.id`,
);

// ... and completed with the response
const COMPLETE_AUDIT_ROWS = statement('wallet_audit_complete', completeAuditsSql(1));

// what walletTargetSql reads of one row
export type WalletTargetRow = { wallet_url: string; wallet_url_private_allowed: boolean; kid: string; encrypted_secret: Buffer; wrapped_data_key: Buffer };
type TargetRow = WalletTargetRow & { id: string; written: boolean };

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

// a debit whose audit row the statement that placed its bet wrote (placement.ts), with the
// wallet target that statement read (walletTargetSql)
export type AuditedDebit = PreparedCall & { target: WalletTargetRow };

type SendOutcome =
  | { kind: 'response'; httpStatus: number; text: string }
  | { kind: 'oversize'; httpStatus: number; error: string }
  | { kind: 'timeout' | 'network' | 'circuit_open'; error: string }
  // D25: an address the operator may not use; nothing was sent
  | { kind: 'refused'; error: string };

export class WalletClient {
  private readonly auditInserts: Batcher<AuditRow, Audited>;
  private readonly auditCompletions: Batcher<AuditCompletion, undefined>;
  // kept-alive connections to the wallets; idle ones are closed before a server with
  // Node's default keep-alive (5 s) would close them under a request
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000 }),
  };
  // D25: in production, the connections of operators not flagged wallet_url_private_allowed.
  // The check is on the address each connection is opened to (a name repointed at a private
  // address after it was saved is refused), and these pools are their own: a kept-alive
  // connection that a flagged operator opened to a private address is never lent to them.
  private readonly publicAgents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000, lookup: publicOnlyLookup }),
    https: new https.Agent({ keepAlive: true, maxSockets: 256, timeout: 4000, lookup: publicOnlyLookup }),
  };

  constructor(
    sql: Sql,
    private readonly masterKey: Buffer,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
    readonly circuit: CircuitBreaker,
    private readonly now: () => Date,
    // D25: wallet connections go to public addresses only, unless the operator is flagged
    private readonly production = false,
  ) {
    this.auditInserts = new Batcher(async (rows) => {
      const targets = new Map(
        (
          await sql.query<TargetRow>(INSERT_AUDIT_ROWS, [
            rows.map((r) => r.id),
            rows.map((r) => r.operatorId),
            rows.map((r) => r.sessionId),
            rows.map((r) => r.endpoint),
            rows.map((r) => r.requestUuid),
            rows.map((r) => r.transactionUuid),
            rows.map((r) => r.attempt),
            rows.map((r) => r.requestBody),
            rows.map((r) => r.pendingBetId),
            rows.map((r) => r.at),
          ])
        ).map((row) => [row.id, row]),
      );
      return rows.map((r): Audited => {
        const row = targets.get(r.id);
        if (!row) return { kind: 'no_target' };
        if (!row.written) return { kind: 'not_pending' };
        // D24: the statement has written every row; one operator's unreadable credential
        // must not fail the others' calls (nor make the batch retry rows already written)
        try {
          return { kind: 'written', target: this.reveal(row) };
        } catch (err) {
          if (err instanceof CredentialUnreadableError) return { kind: 'unreadable', error: err.message };
          throw err;
        }
      });
    }, HOT_PATH_BATCH);
    this.auditCompletions = new Batcher(async (rows) => {
      await sql.query(COMPLETE_AUDIT_ROWS, auditParams(rows));
      return rows.map(() => undefined);
    }, HOT_PATH_BATCH);
  }

  // WalletTargetError when the operator has no valid wallet credential (no call is made)
  async call(input: WalletCallInput): Promise<WalletResult> {
    const { audit, ...result } = (await this.perform(input, null))!;
    await this.completeAudit(audit);
    return result;
  }

  // A call whose audit row the caller completes (completeAuditsSql, or completeAudit).
  async callDeferringAudit(input: WalletCallInput): Promise<DeferredAudit> {
    return (await this.perform(input, null))!;
  }

  // A debit (contract 2.6) whose audit row is written only while its bet is still PENDING (a
  // bet another delivery already decided is not debited again) and completed by the caller.
  async debitDeferringAudit(input: WalletCallInput, betId: string): Promise<DeferredAudit | 'not_pending'> {
    return (await this.perform(input, betId)) ?? 'not_pending';
  }

  // A debit whose audit row is already written (AuditedDebit), completed by the caller.
  async debitAudited(input: WalletCallInput, debit: AuditedDebit): Promise<DeferredAudit> {
    let target: WalletTarget;
    try {
      target = this.reveal(debit.target);
    } catch (err) {
      if (!(err instanceof CredentialUnreadableError)) throw err;
      return this.unsent(input, debit, err.message, WalletTargetError);
    }
    return this.exchange(input, debit, target);
  }

  completeAudit(audit: AuditCompletion): Promise<undefined> {
    return this.auditCompletions.add(audit);
  }

  close(): void {
    for (const agents of [this.agents, this.publicAgents]) {
      agents.http.destroy();
      agents.https.destroy();
    }
  }

  private reveal(row: WalletTargetRow): WalletTarget {
    const secret = revealSecret(this.masterKey, { kid: row.kid, encryptedSecret: row.encrypted_secret, wrappedDataKey: row.wrapped_data_key });
    return { walletUrl: row.wallet_url, keyId: row.kid, secret, privateAllowed: row.wallet_url_private_allowed };
  }

  private async perform(input: WalletCallInput, pendingBetId: string | null): Promise<DeferredAudit | undefined> {
    const call = prepareCall(input);
    const audited = await this.auditInserts.add({
      id: call.auditId,
      operatorId: input.operatorId,
      sessionId: input.sessionId ?? null,
      endpoint: input.endpoint,
      requestUuid: call.requestUuid,
      transactionUuid: input.transactionUuid ?? null,
      attempt: call.attempt,
      requestBody: call.bytes,
      pendingBetId,
      at: this.now(),
    });
    if (audited.kind === 'not_pending') return undefined;
    if (audited.kind === 'no_target') throw new WalletTargetError(`operator ${input.operatorId} has no valid wallet credential`);
    if (audited.kind === 'unreadable') return this.unsent(input, call, audited.error, WalletTargetError);
    if (pendingBetId) betStep(pendingBetId, 'audited');
    return this.exchange(input, call, audited.target);
  }

  // A call whose audit row is written but which cannot be sent: the row is completed with
  // why (no status: nothing answered), and the misconfiguration is logged to alert on.
  private async unsent(
    input: WalletCallInput,
    call: PreparedCall,
    error: string,
    Refusal: new (message: string) => WalletTargetError,
    latencyMs = 0,
  ): Promise<never> {
    this.logger.error({ endpoint: input.endpoint, operatorId: input.operatorId, requestUuid: call.requestUuid, error }, 'wallet call not sent');
    await this.completeAudit({ id: call.auditId, httpStatus: null, status: null, latencyMs, error, respondedAt: new Date() });
    throw new Refusal(`operator ${input.operatorId}: ${error}; the call was not sent`);
  }

  // the call whose audit row is written: sent (unless the circuit is open), answered and classified
  private async exchange(input: WalletCallInput, call: PreparedCall, target: WalletTarget): Promise<DeferredAudit> {
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
    // D13: only uncertain answers count against the circuit; an open circuit's own refusal
    // is not an answer
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

  // contract 4.2, 5.1: the signed path is the exact path the receiver sees, prefix included
  private send(url: URL, bytes: string, target: WalletTarget): Promise<SendOutcome> {
    const secure = url.protocol === 'https:';
    const body = Buffer.from(bytes, 'utf8');
    const publicOnly = this.production && !target.privateAllowed;
    const agents = publicOnly ? this.publicAgents : this.agents;
    // a literal IP is connected to without a lookup, so it is judged here
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const literal = publicOnly && isIP(host) ? nonPublicAddress(host, [host]) : undefined;
    if (literal) return Promise.resolve({ kind: 'refused', error: literal.message });
    return new Promise<SendOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = (secure ? https : http).request(
        url,
        {
          method: 'POST',
          agent: secure ? agents.https : agents.http,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            ...signedHeaders(target.keyId, target.secret, 'POST', url.pathname, bytes),
          },
        },
        (response) => {
          const httpStatus = response.statusCode ?? 0;
          // D24: an answer over the cap is refused on its content-length, or cut off once the
          // bytes received pass the cap (a chunked or lying body); nothing past the cap is kept
          const oversize = (error: string) => {
            finish({ kind: 'oversize', httpStatus, error });
            request.destroy();
          };
          const declared = Number(response.headers['content-length']);
          if (declared > WALLET_ANSWER_MAX_BYTES) {
            return oversize(`answer of ${declared} bytes (content-length) over the ${WALLET_ANSWER_MAX_BYTES}-byte cap`);
          }
          const chunks: Buffer[] = [];
          let received = 0;
          response.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received > WALLET_ANSWER_MAX_BYTES) return oversize(`answer over the ${WALLET_ANSWER_MAX_BYTES}-byte cap: cut off after ${received} bytes`);
            chunks.push(chunk);
          });
          response.on('end', () => finish({ kind: 'response', httpStatus, text: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', (err) => finish({ kind: 'network', error: `network error: ${err.message}` }));
        },
      );
      // the outbound timeout covers the whole exchange (contract 8.1 WALLET_CALL_TIMEOUT_MS)
      const timer = setTimeout(() => {
        finish({ kind: 'timeout', error: `no answer within ${this.timeoutMs} ms` });
        request.destroy();
      }, this.timeoutMs);
      request.on('error', (err) =>
        finish(err instanceof NonPublicAddressError ? { kind: 'refused', error: err.message } : { kind: 'network', error: `network error: ${err.message}` }),
      );
      request.end(body);
    });
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
  if (!isRsStatus(fields.status)) return { status: 'RS_ERROR_UNKNOWN', problem: `unknown status ${shownValue(fields.status)}` };
  if (typeof fields.requestUuid !== 'string' || fields.requestUuid.toLowerCase() !== requestUuid) {
    return { status: 'RS_ERROR_UNKNOWN', problem: 'requestUuid does not echo the request' };
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
