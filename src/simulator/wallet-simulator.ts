import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SIGNATURE_HEADERS, sign, signatureMatches } from '../shared/wallet/signer.js';
import {
  KEPT_ANSWER_BYTES,
  REQUEST_LOG_LIMITS,
  RequestLog,
  addFinding,
  type RecordedRequest,
  type RequestLogLimits,
  type SentResponse,
} from './request-log.js';
import {
  WALLET_ENDPOINTS,
  WalletLedger,
  type BrokenRule,
  validateWalletRequest,
  type LedgerEntry,
  type WalletEndpoint,
  type WalletResponse,
} from './ledger.js';

// A strict reference implementation of the OPERATOR side of the four wallet endpoints
// (contract 4.2, 4.3, 5.1, 5.2) over plain node:http. Used by integration tests and the demo,
// and by operators as a reference. Anything a correct service would never send (bad
// signature, malformed body, a requestUuid or transactionUuid reused for something else, a
// second win for one bet, a win after a rollback, ...) is answered as the contract says and
// also recorded in `violations`, so a service bug is visible in a single assertion.

export type { BrokenRule, LedgerEntry, WalletEndpoint, WalletResponse } from './ledger.js';
export { BROKEN_RULES } from './ledger.js';
export { REQUEST_LOG_LIMITS, type RecordedRequest, type RequestLogLimits, type SentResponse } from './request-log.js';

export type WalletFault =
  // answer with this RS_ status (no ledger effect), with HTTP 200 or the given HTTP status (a
  // refusal with a 4xx, D13)
  | { kind: 'status'; status: string; message?: string; httpStatus?: number }
  | { kind: 'http'; httpStatus: number } // answer e.g. 500 with an HTML error page, as a proxy in front of a wallet would
  | { kind: 'invalid_json' } // 200 with a non-JSON body
  | { kind: 'delay'; ms: number } // process normally but answer after ms
  | { kind: 'hang' } // never answer (until the server closes)
  | { kind: 'drop_after_apply' } // apply the ledger effect, then destroy the socket without answering
  | { kind: 'wrong_request_uuid' } // process normally, echo a different requestUuid
  // D24, hostile answers (each processes normally first, so a debit is applied):
  // the JSON answer padded (in `message`) to at least bytes, with its content-length, and
  // with httpStatus instead of the answer's own when given
  | { kind: 'oversize'; bytes: number; httpStatus?: number }
  | { kind: 'endless' } // a chunked answer that never ends: the JSON's start, then padding until the connection closes
  | { kind: 'trickle'; intervalMs: number }; // the JSON answer with its content-length, one byte per intervalMs

export type SimulatorOptions = {
  port?: number; // default 0: any free port
  host?: string; // default 127.0.0.1
  pathPrefix?: string; // default '': paths are /wallet/bet etc.; with '/op1' they are /op1/wallet/bet
  now?: () => Date; // the ledger's clock (D27 tombstones); signatures are checked on the real clock
  // serve https: with this key and certificate (PEM), as a production wallet URL must be (D25)
  tls?: { key: string | Buffer; cert: string | Buffer };
  // contract rules to break from the start (see breakRule)
  brokenRules?: readonly BrokenRule[];
  // D35: a request this handler takes (it answers true) is not the wallet's: neither
  // recorded nor answered by the simulator (the sandbox's admin API, src/simulator/admin.ts)
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
  // D24, D35: how much of the requests received is kept (request-log.ts); REQUEST_LOG_LIMITS
  // where not given
  requestLog?: Partial<RequestLogLimits>;
};

// contract 5.2 / 8.1
const SIGNATURE_WINDOW_SECONDS = 30;
const MAX_BODY_BYTES = 1024 * 1024;

type ActiveFault = { fault: WalletFault; remaining: number | undefined };

export class WalletSimulator {
  readonly url: string;
  // what a correct service would never send: the latest, bounded like the requests (request-log.ts)
  violations: string[] = [];
  private readonly log: RequestLog;

  private readonly ledger: WalletLedger;
  private readonly credentials = new Map<string, string>();
  private readonly faults = new Map<WalletEndpoint, ActiveFault>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly paths: ReadonlyMap<string, WalletEndpoint>;

  private constructor(
    private readonly server: Server,
    host: string,
    port: number,
    pathPrefix: string,
    now: (() => Date) | undefined,
    scheme: 'http' | 'https',
    intercept: SimulatorOptions['intercept'],
    limits: RequestLogLimits,
  ) {
    this.ledger = new WalletLedger(now);
    this.log = new RequestLog(limits);
    this.url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${pathPrefix}`;
    this.paths = new Map(WALLET_ENDPOINTS.map((endpoint) => [`${pathPrefix}/wallet/${endpoint}`, endpoint]));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!intercept?.(req, res)) this.receive(req, res);
    });
  }

  static async start(options: SimulatorOptions = {}): Promise<WalletSimulator> {
    const host = options.host ?? '127.0.0.1';
    const pathPrefix = normalisePrefix(options.pathPrefix ?? '');
    const server: Server = options.tls ? createTlsServer(options.tls) : createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const limits = { ...REQUEST_LOG_LIMITS, ...options.requestLog };
    const simulator = new WalletSimulator(server, host, port, pathPrefix, options.now, options.tls ? 'https' : 'http', options.intercept, limits);
    for (const rule of options.brokenRules ?? []) simulator.breakRule(rule);
    return simulator;
  }

  // Breaks one rule of the contract (BROKEN_RULES in ledger.ts: one per check of
  // `rgs wallet-check`, D38), or keeps it again with broken = false. reset() keeps every rule
  // again.
  breakRule(rule: BrokenRule, broken = true): void {
    if (broken) this.ledger.broken.add(rule);
    else this.ledger.broken.delete(rule);
  }

  get brokenRules(): BrokenRule[] {
    return [...this.ledger.broken];
  }

  // the requests kept, oldest first: the latest within the log's limits (request-log.ts)
  get requests(): readonly RecordedRequest[] {
    return this.log.entries;
  }

  // what the request log holds and has dropped, and its limits
  get requestLog(): { received: number; kept: number; keptBytes: number; dropped: number; limits: RequestLogLimits } {
    return { received: this.log.received, kept: this.log.entries.length, keptBytes: this.log.bytes, dropped: this.log.dropped, limits: this.log.limits };
  }

  get transactions(): LedgerEntry[] {
    return this.ledger.entries;
  }

  // The walletSignatureSecret(s) accepted, by kid; several may be active during rotation (5.3).
  addCredential(kid: string, secret: string): void {
    this.credentials.set(kid, secret);
  }

  removeCredential(kid: string): void {
    this.credentials.delete(kid);
  }

  // the kids accepted now (never the secrets)
  get credentialKids(): string[] {
    return [...this.credentials.keys()];
  }

  // every account with a balance, in the order first set or moved
  get balances(): { playerRef: string; currency: string; balanceMicro: bigint }[] {
    return this.ledger.accounts();
  }

  // the faults in force, by endpoint, with the calls left (undefined: until cleared)
  get activeFaults(): { endpoint: WalletEndpoint; fault: WalletFault; remaining: number | undefined }[] {
    return [...this.faults].map(([endpoint, active]) => ({ endpoint, fault: active.fault, remaining: active.remaining }));
  }

  setBalance(playerRef: string, currency: string, balanceMicro: bigint): void {
    this.ledger.setBalance(playerRef, currency, balanceMicro);
  }

  balanceOf(playerRef: string, currency: string): bigint {
    return this.ledger.balanceOf(playerRef, currency);
  }

  disablePlayer(playerRef: string, message = 'player disabled'): void {
    this.ledger.disablePlayer(playerRef, message);
  }

  // times: how many calls to the endpoint the fault applies to; by default until cleared.
  setFault(endpoint: WalletEndpoint, fault: WalletFault | null, times?: number): void {
    if (fault === null) {
      this.faults.delete(endpoint);
      return;
    }
    if (times !== undefined && !(Number.isInteger(times) && times > 0)) {
      throw new RangeError(`times must be a positive integer, got ${times}`);
    }
    this.faults.set(endpoint, { fault, remaining: times });
  }

  // Clears balances, ledger, idempotency cache, disabled players, faults, broken rules,
  // requests and violations; credentials are kept.
  reset(): void {
    this.ledger.reset();
    this.faults.clear();
    this.log.clear();
    this.violations = [];
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const record of this.requests) {
      if (record.response === 'pending') record.response = 'no_response';
    }
    const closed = new Promise<void>((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())));
    // Ends hung and delayed exchanges and idle keep-alive sockets alike.
    this.server.closeAllConnections();
    await closed;
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    readBody(req, MAX_BODY_BYTES, (body, size) => {
      try {
        this.dispatch(req, res, body, size);
      } catch (error) {
        this.finding(`simulator error: ${error instanceof Error ? error.stack : String(error)}`);
        if (!res.headersSent) res.writeHead(500).end();
      }
    });
  }

  private dispatch(req: IncomingMessage, res: ServerResponse, body: Buffer, size: number): void {
    const method = req.method ?? '';
    const path = (req.url ?? '').split('?', 1)[0] ?? '';
    const endpoint = this.paths.get(path) ?? null;
    const rawBody = body.toString('utf8');
    const parsed = parseJson(rawBody);
    const signatureProblem = this.signatureProblem(req, method, path, body);
    // D24: of a request nobody signed, only the start of the body is kept
    const keep = this.log.limits.unauthenticatedBodyBytes;
    const cut = signatureProblem !== undefined && body.length > keep;
    const keptBody = cut ? body.subarray(0, keep).toString('utf8') : rawBody;
    const record: RecordedRequest = {
      receivedAt: new Date(),
      method,
      path,
      endpoint,
      headers: req.headers,
      rawBody: keptBody,
      bodyBytes: size,
      body: cut ? undefined : parsed,
      signatureValid: signatureProblem === undefined,
      response: 'pending',
    };
    this.log.add(record);
    const where = `${method} ${path}`;
    if (signatureProblem !== undefined) this.finding(`${where}: ${signatureProblem}`);

    if (endpoint === null) {
      this.finding(`${where}: not a wallet endpoint`);
      return this.sendPlain(res, record, 404);
    }
    if (method !== 'POST') {
      this.finding(`${where}: wallet endpoints take POST only (4.2)`);
      return this.sendPlain(res, record, 405);
    }
    if (size > MAX_BODY_BYTES) {
      this.finding(`${where}: body of ${size} bytes exceeds ${MAX_BODY_BYTES}`);
      return this.sendPlain(res, record, 413);
    }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      this.finding(`${where}: content-type is not application/json`);
    }

    const echo = requestUuidOf(parsed);
    const fault = this.takeFault(endpoint);
    // Faults that replace the whole handling, signature check included.
    switch (fault?.kind) {
      case 'status':
        return this.sendJson(res, record, fault.httpStatus ?? 200, {
          status: fault.status,
          requestUuid: echo,
          ...(fault.message === undefined ? {} : { message: fault.message }),
        });
      case 'http':
        return this.send(res, record, fault.httpStatus, `<html><body><h1>HTTP ${fault.httpStatus}</h1></body></html>`, 'text/html');
      case 'invalid_json':
        return this.send(res, record, 200, 'this is not JSON {', 'text/html');
      case 'hang':
        record.response = 'no_response';
        return;
    }

    const checkedSignature = this.ledger.broken.has('accepts_bad_signature') ? undefined : signatureProblem;
    const response = this.answer(endpoint, checkedSignature, parsed, rawBody, echo, where);
    switch (fault?.kind) {
      case 'delay': {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.sendJson(res, record, response.httpStatus, response.body);
        }, fault.ms);
        this.timers.add(timer);
        return;
      }
      case 'drop_after_apply':
        record.response = 'no_response';
        req.socket.destroy();
        return;
      case 'wrong_request_uuid':
        return this.sendJson(res, record, response.httpStatus, { ...response.body, requestUuid: randomUUID() });
      case 'oversize': {
        const text = JSON.stringify(response.body);
        const pad = Math.max(0, fault.bytes - Buffer.byteLength(text) - ',"message":""'.length);
        return this.sendJson(res, record, fault.httpStatus ?? response.httpStatus, { ...response.body, message: 'x'.repeat(pad) });
      }
      case 'endless':
        return this.stream(res, record, response.httpStatus, response.body, { endless: true, intervalMs: 0 });
      case 'trickle':
        return this.stream(res, record, response.httpStatus, response.body, { endless: false, intervalMs: fault.intervalMs });
      default:
        return this.sendJson(res, record, response.httpStatus, response.body);
    }
  }

  // contract 5.2 steps 1-6, then validation (2.5-2.9) and the ledger (4.2, 4.3).
  private answer(
    endpoint: WalletEndpoint,
    signatureProblem: string | undefined,
    parsed: unknown,
    rawBody: string,
    echo: string,
    where: string,
  ): { httpStatus: number; body: WalletResponse } {
    if (signatureProblem !== undefined) {
      return { httpStatus: 401, body: { status: 'RS_ERROR_INVALID_SIGNATURE', requestUuid: echo } };
    }
    if (parsed === undefined) {
      this.finding(`${where}: body is not JSON`);
      return { httpStatus: 200, body: { status: 'RS_ERROR_WRONG_SYNTAX', requestUuid: echo, message: 'body is not JSON' } };
    }
    const validation = validateWalletRequest(endpoint, parsed);
    if (!validation.ok) {
      this.finding(`${where}: ${validation.status}: ${validation.message}`);
      return { httpStatus: 200, body: { status: validation.status, requestUuid: echo, message: validation.message } };
    }
    const outcome = this.ledger.handle(validation.request, rawBody);
    for (const violation of outcome.violations) this.finding(violation);
    return { httpStatus: 200, body: outcome.response };
  }

  // contract 5.2; undefined when the signature is good, else what is wrong with it.
  private signatureProblem(req: IncomingMessage, method: string, path: string, body: Buffer): string | undefined {
    const header = (name: string): string | undefined => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    const kid = header(SIGNATURE_HEADERS.keyId);
    const timestamp = header(SIGNATURE_HEADERS.timestamp);
    const signature = header(SIGNATURE_HEADERS.signature);
    if (kid === undefined || timestamp === undefined || signature === undefined) {
      return 'missing signature header(s)';
    }
    if (!/^-?[0-9]{1,15}$/.test(timestamp)) return `timestamp ${timestamp} is not an integer`;
    if (Math.abs(Math.floor(Date.now() / 1000) - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) {
      return `timestamp ${timestamp} outside the ±${SIGNATURE_WINDOW_SECONDS} s window`;
    }
    const secret = this.credentials.get(kid);
    if (secret === undefined) return `unknown key id ${kid}`;
    if (!signatureMatches(sign(secret, method, path, timestamp, body), signature)) return 'signature mismatch';
    return undefined;
  }

  // D24: the findings are bounded like the requests (request-log.ts)
  private finding(text: string): void {
    addFinding(this.violations, text, this.log.limits.maxEntries);
  }

  private takeFault(endpoint: WalletEndpoint): WalletFault | undefined {
    const active = this.faults.get(endpoint);
    if (!active) return undefined;
    if (active.remaining !== undefined && --active.remaining === 0) this.faults.delete(endpoint);
    return active.fault;
  }

  private sendJson(res: ServerResponse, record: RecordedRequest, httpStatus: number, body: WalletResponse): void {
    this.send(res, record, httpStatus, this.wire(body), 'application/json', body.status);
  }

  // an answer's JSON, with the broken rules of its form (2.10) applied
  private wire(body: WalletResponse): string {
    const { requestUuid: _echo, ...unechoed } = body;
    const text = JSON.stringify(this.ledger.broken.has('no_request_uuid_echo') ? unechoed : body);
    // the digits moved out of their quotes, never through a Number (D18)
    return this.ledger.broken.has('numeric_amounts') ? text.replace(/"balanceMicro":"(-?[0-9]+)"/, '"balanceMicro":$1') : text;
  }

  // D24 hostile answers: an endless chunked body written as fast as the reader takes it
  // (the write waits for drain), or the answer one byte per intervalMs; either stops when the
  // connection closes, and the record counts what was written
  private stream(
    res: ServerResponse,
    record: RecordedRequest,
    httpStatus: number,
    body: WalletResponse,
    how: { endless: boolean; intervalMs: number },
  ): void {
    const text = how.endless ? `${JSON.stringify(body).slice(0, -1)},"message":"` : JSON.stringify(body);
    const sent: SentResponse = { httpStatus, status: body.status, body: '', bytesSent: 0 };
    record.response = sent;
    res.writeHead(httpStatus, { 'content-type': 'application/json', ...(how.endless ? {} : { 'content-length': Buffer.byteLength(text) }) });
    const written = (chunk: string) => {
      if (sent.body.length < 1024) sent.body += chunk.slice(0, 1024 - sent.body.length);
      sent.bytesSent! += Buffer.byteLength(chunk);
    };
    if (how.endless) {
      const padding = 'x'.repeat(16 * 1024);
      const pump = () => {
        while (!res.destroyed) {
          written(padding);
          if (!res.write(padding)) return void res.once('drain', pump);
        }
      };
      written(text);
      res.write(text);
      pump();
      return;
    }
    let next = 0;
    const drip = () => {
      if (res.destroyed) return;
      const byte = text.slice(next, ++next);
      written(byte);
      if (next >= text.length) return void res.end(byte);
      res.write(byte);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        drip();
      }, how.intervalMs);
      this.timers.add(timer);
    };
    drip();
  }

  private sendPlain(res: ServerResponse, record: RecordedRequest, httpStatus: number): void {
    this.send(res, record, httpStatus, `HTTP ${httpStatus}`, 'text/plain');
  }

  private send(
    res: ServerResponse,
    record: RecordedRequest,
    httpStatus: number,
    body: string,
    contentType: string,
    status?: string,
  ): void {
    if (res.destroyed || res.socket?.destroyed === true) {
      record.response = 'no_response';
      return;
    }
    res.writeHead(httpStatus, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
    res.end(body);
    const kept = Buffer.byteLength(body) > KEPT_ANSWER_BYTES ? Buffer.from(body).subarray(0, KEPT_ANSWER_BYTES).toString('utf8') : body;
    record.response = { httpStatus, body: kept, ...(status === undefined ? {} : { status }) };
  }
}

function normalisePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  if (trimmed !== '' && !/^(\/[^/?#]+)+$/.test(trimmed)) {
    throw new Error(`pathPrefix must look like /segment[/segment...], got ${JSON.stringify(prefix)}`);
  }
  return trimmed;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// contract 5.2: echo the requestUuid when one can be read, else ''.
function requestUuidOf(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const value = (body as Record<string, unknown>).requestUuid;
  return typeof value === 'string' ? value : '';
}

// A request's body, kept up to `max` bytes (what is past the cap is counted, not kept), and
// its full size, once it has been read (the wallet's requests and the sandbox's admin's)
export function readBody(req: IncomingMessage, max: number, done: (body: Buffer, size: number) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= max) chunks.push(chunk);
  });
  req.on('end', () => done(Buffer.concat(chunks), size));
}
