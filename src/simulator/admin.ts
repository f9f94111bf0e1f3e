import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JSONSchemaType } from 'ajv';
import { AppError, invalidRequest, notFound, payloadTooLarge, type ErrorBody } from '../shared/platform/errors.js';
import { STORABLE_TEXT, compile, toInvalidRequest } from '../shared/platform/validation.js';
import { WALLET_ENDPOINTS, type WalletEndpoint } from './ledger.js';
import { readBody, type RecordedRequest, type WalletFault, type WalletSimulator } from './wallet-simulator.js';

// The sandbox's admin API (D35, docs/sandbox.md): what an integrator's tests do to the wallet
// simulator standing in for the operator's wallet, over HTTP on the simulator's own port
// under /admin. JSON in and out; every request carries `Authorization: Bearer <token>`;
// bodies are validated with the service's ajv instance and refusals keep the D3 body.
// Money is a MicroAmount string (D18).

export const ADMIN_PREFIX = '/admin';
const MAX_BODY_BYTES = 64 * 1024; // as the service's own inbound limit (D9)

type BalanceBody = { playerRef: string; currency: string; balanceMicro: string };
type CredentialBody = { kid: string; secret: string };
type DisableBody = { playerRef: string; message?: string };
type FaultFields = {
  kind: WalletFault['kind'];
  status?: string;
  message?: string;
  httpStatus?: number;
  ms?: number;
  bytes?: number;
  intervalMs?: number;
};
type FaultBody = { endpoint: WalletEndpoint; fault: FaultFields; times?: number };

// an optional field may be absent, never null (as in src/api/schemas/session.ts)
const NOT_NULL = { not: { type: 'null' } } as const;
const PLAYER_REF = { type: 'string', minLength: 1, maxLength: 128, pattern: STORABLE_TEXT } as const;
const CURRENCY = { type: 'string', pattern: '^[A-Z0-9]{3,10}$' } as const;

const balanceSchema: JSONSchemaType<BalanceBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['playerRef', 'currency', 'balanceMicro'],
  properties: {
    playerRef: PLAYER_REF,
    currency: CURRENCY,
    // a MicroAmount that may be 0, at most 2^63-1 (D18, D24)
    balanceMicro: { type: 'string', pattern: '^(0|[1-9][0-9]{0,18})$', format: 'int64-string' },
  },
};

const credentialSchema: JSONSchemaType<CredentialBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['kid', 'secret'],
  properties: {
    kid: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7E]+$' },
    secret: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[\\x21-\\x7E]+$' },
  },
};

const disableSchema: JSONSchemaType<DisableBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['playerRef'],
  properties: {
    playerRef: PLAYER_REF,
    message: { type: 'string', maxLength: 256, pattern: STORABLE_TEXT, nullable: true, ...NOT_NULL },
  },
};

const FAULT_KINDS = ['status', 'http', 'invalid_json', 'delay', 'hang', 'drop_after_apply', 'wrong_request_uuid', 'oversize', 'endless', 'trickle'] as const;
// the fields each kind needs (WalletFault)
const FAULT_NEEDS: Record<WalletFault['kind'], (keyof FaultFields)[]> = {
  status: ['status'],
  http: ['httpStatus'],
  invalid_json: [],
  delay: ['ms'],
  hang: [],
  drop_after_apply: [],
  wrong_request_uuid: [],
  oversize: ['bytes'],
  endless: [],
  trickle: ['intervalMs'],
};

const faultSchema: JSONSchemaType<FaultBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['endpoint', 'fault'],
  properties: {
    endpoint: { type: 'string', enum: [...WALLET_ENDPOINTS] },
    fault: {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: {
        kind: { type: 'string', enum: [...FAULT_KINDS] },
        status: { type: 'string', pattern: '^RS_[A-Z_]{1,64}$', nullable: true, ...NOT_NULL },
        message: { type: 'string', maxLength: 256, pattern: STORABLE_TEXT, nullable: true, ...NOT_NULL },
        httpStatus: { type: 'integer', minimum: 100, maximum: 599, nullable: true, ...NOT_NULL },
        ms: { type: 'integer', minimum: 0, maximum: 600_000, nullable: true, ...NOT_NULL },
        bytes: { type: 'integer', minimum: 0, maximum: 16 * 1024 * 1024, nullable: true, ...NOT_NULL },
        intervalMs: { type: 'integer', minimum: 1, maximum: 60_000, nullable: true, ...NOT_NULL },
      },
    },
    times: { type: 'integer', minimum: 1, maximum: 1_000_000, nullable: true, ...NOT_NULL },
  },
};

const validBalance = compile(balanceSchema);
const validCredential = compile(credentialSchema);
const validDisable = compile(disableSchema);
const validFault = compile(faultSchema);

// the WalletFault a valid body names, or the D3 refusal of a field its kind needs
function toFault(fields: FaultFields): WalletFault {
  const missing = FAULT_NEEDS[fields.kind].filter((name) => fields[name] === undefined);
  if (missing.length > 0) {
    throw invalidRequest(
      'RS_ERROR_WRONG_SYNTAX',
      `a fault of kind ${fields.kind} needs ${missing.join(', ')}`,
      missing.map((name) => ({ path: `/fault/${name}`, keyword: 'required', message: `must have required property '${name}'` })),
    );
  }
  switch (fields.kind) {
    case 'status':
      return {
        kind: 'status',
        status: fields.status!,
        ...(fields.message === undefined ? {} : { message: fields.message }),
        ...(fields.httpStatus === undefined ? {} : { httpStatus: fields.httpStatus }),
      };
    case 'http':
      return { kind: 'http', httpStatus: fields.httpStatus! };
    case 'delay':
      return { kind: 'delay', ms: fields.ms! };
    case 'oversize':
      return { kind: 'oversize', bytes: fields.bytes!, ...(fields.httpStatus === undefined ? {} : { httpStatus: fields.httpStatus }) };
    case 'trickle':
      return { kind: 'trickle', intervalMs: fields.intervalMs! };
    default:
      return { kind: fields.kind };
  }
}

class Unauthorized extends Error {}

type Answer = { status: number; body: unknown };
type Route = { method: string; pattern: RegExp; run: (match: RegExpMatchArray, body: () => unknown, query: URLSearchParams) => Answer };

export type AdminOptions = { token: string };

// The admin API as the simulator's `intercept` (SimulatorOptions): it takes every request
// under /admin and leaves the wallet's paths to the simulator.
export function adminHandler(wallet: () => WalletSimulator, options: AdminOptions) {
  const expected = Buffer.from(`Bearer ${options.token}`);
  const ok = (body: unknown, status = 200): Answer => ({ status, body });
  const validated = <T>(validate: ReturnType<typeof compile<T>>, body: unknown): T => {
    if (body === undefined) throw invalidRequest('RS_ERROR_WRONG_SYNTAX', 'a JSON body is required');
    if (!validate(body)) throw toInvalidRequest(validate.errors ?? []);
    return body;
  };

  const routes: Route[] = [
    // balances: set one, read all
    { method: 'GET', pattern: /^\/balances$/, run: () => ok({ balances: wallet().balances.map((b) => ({ ...b, balanceMicro: b.balanceMicro.toString() })) }) },
    {
      method: 'POST',
      pattern: /^\/balances$/,
      run: (_m, body) => {
        const { playerRef, currency, balanceMicro } = validated(validBalance, body());
        wallet().setBalance(playerRef, currency, BigInt(balanceMicro));
        return ok({ playerRef, currency, balanceMicro: wallet().balanceOf(playerRef, currency).toString() });
      },
    },
    {
      method: 'POST',
      pattern: /^\/disabled-players$/,
      run: (_m, body) => {
        const { playerRef, message } = validated(validDisable, body());
        wallet().disablePlayer(playerRef, message);
        return ok({ playerRef, disabled: true });
      },
    },
    // the ledger: every money movement booked, oldest first
    {
      method: 'GET',
      pattern: /^\/ledger$/,
      run: () =>
        ok({
          entries: wallet().transactions.map((entry) => ({
            ...entry,
            amountMicro: entry.amountMicro.toString(),
            balanceAfterMicro: entry.balanceAfterMicro.toString(),
            at: entry.at.toISOString(),
          })),
        }),
    },
    // what a correct service would never send (wallet-simulator.ts), and how many calls came
    { method: 'GET', pattern: /^\/violations$/, run: () => ok({ requests: wallet().requestLog.received, violations: wallet().violations }) },
    // D24: the latest requests the wallet kept (request-log.ts: a bounded log), oldest first
    {
      method: 'GET',
      pattern: /^\/requests$/,
      run: (_m, _body, query) => {
        const last = lastOf(query.get('last'));
        const { received, kept, keptBytes, dropped, limits } = wallet().requestLog;
        return ok({ received, kept, keptBytes, dropped, limits, requests: wallet().requests.slice(-last).map(requestView) });
      },
    },
    // faults: inject one on an endpoint (for `times` calls, else until cleared), list, clear
    { method: 'GET', pattern: /^\/faults$/, run: () => ok({ faults: faultsView(wallet()) }) },
    {
      method: 'POST',
      pattern: /^\/faults$/,
      run: (_m, body) => {
        const { endpoint, fault, times } = validated(validFault, body());
        wallet().setFault(endpoint, toFault(fault), times);
        return ok({ faults: faultsView(wallet()) });
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/faults$/,
      run: () => {
        for (const endpoint of WALLET_ENDPOINTS) wallet().setFault(endpoint, null);
        return ok({ faults: [] });
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/faults\/([a-z]+)$/,
      run: (match) => {
        const endpoint = WALLET_ENDPOINTS.find((name) => name === match[1]);
        if (!endpoint) throw notFound('not_found', 'no such wallet endpoint');
        wallet().setFault(endpoint, null);
        return ok({ faults: faultsView(wallet()) });
      },
    },
    // the wallet credentials whose signatures are accepted (contract 5.3: the operator's
    // walletKeyId and walletSignatureSecret); only kids are ever shown
    { method: 'GET', pattern: /^\/credentials$/, run: () => ok({ kids: wallet().credentialKids }) },
    {
      method: 'POST',
      pattern: /^\/credentials$/,
      run: (_m, body) => {
        const { kid, secret } = validated(validCredential, body());
        wallet().addCredential(kid, secret);
        return ok({ kids: wallet().credentialKids });
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/credentials\/([^/]+)$/,
      run: (match) => {
        const kid = decodeURIComponent(match[1]!);
        if (!wallet().credentialKids.includes(kid)) throw notFound('not_found', 'no such kid');
        wallet().removeCredential(kid);
        return ok({ kids: wallet().credentialKids });
      },
    },
    // everything but the credentials back to empty
    {
      method: 'POST',
      pattern: /^\/reset$/,
      run: () => {
        wallet().reset();
        return ok({ reset: true });
      },
    },
  ];

  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = (req.url ?? '').split('?', 1)[0] ?? '';
    if (path !== ADMIN_PREFIX && !path.startsWith(`${ADMIN_PREFIX}/`)) return false;
    readBody(req, MAX_BODY_BYTES, (raw, size) => {
      let answer: Answer;
      try {
        answer = route(req, path.slice(ADMIN_PREFIX.length), raw, size);
      } catch (err) {
        answer = refusal(err);
      }
      const text = JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    return true;
  };

  function route(req: IncomingMessage, path: string, raw: Buffer, size: number): Answer {
    const presented = Buffer.from(req.headers.authorization ?? '');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) throw new Unauthorized();
    if (size > MAX_BODY_BYTES) throw payloadTooLarge(MAX_BODY_BYTES);
    const body = () => {
      if (raw.length === 0) return undefined;
      try {
        return JSON.parse(raw.toString('utf8')) as unknown;
      } catch {
        throw invalidRequest('RS_ERROR_WRONG_SYNTAX', 'the body is not valid JSON');
      }
    };
    for (const candidate of routes) {
      const match = candidate.method === req.method ? candidate.pattern.exec(path) : null;
      if (match) return candidate.run(match, body, new URL(req.url ?? '', 'http://sandbox').searchParams);
    }
    throw notFound('not_found', 'no such admin route');
  }
}

// ?last=N: how many of the latest requests GET /admin/requests lists, 1 to 1000, 100 if not given
const LIST_DEFAULT = 100;
const LIST_MAX = 1000;
function lastOf(text: string | null): number {
  if (text === null) return LIST_DEFAULT;
  if (!/^[0-9]{1,4}$/.test(text) || Number(text) < 1 || Number(text) > LIST_MAX) {
    throw invalidRequest('RS_ERROR_WRONG_TYPES', `last must be an integer from 1 to ${LIST_MAX}`, [
      { path: '/last', keyword: 'maximum', message: `must be an integer from 1 to ${LIST_MAX}` },
    ]);
  }
  return Number(text);
}

// a request as listed: what was received and answered, never its signature headers
function requestView(record: RecordedRequest) {
  const response = typeof record.response === 'object' ? { httpStatus: record.response.httpStatus, status: record.response.status ?? null } : record.response;
  return {
    receivedAt: record.receivedAt.toISOString(),
    method: record.method,
    path: record.path,
    endpoint: record.endpoint,
    signatureValid: record.signatureValid,
    bodyBytes: record.bodyBytes,
    body: record.rawBody,
    bodyCut: Buffer.byteLength(record.rawBody) < record.bodyBytes,
    response,
  };
}

function faultsView(wallet: WalletSimulator) {
  return wallet.activeFaults.map(({ endpoint, fault, remaining }) => ({ endpoint, fault, remaining: remaining ?? null }));
}

// D3 bodies: the service's codes where one fits, and `unauthorized` for a missing or wrong
// admin token (the admin is not the operator API: it has no signatures)
function refusal(err: unknown): Answer {
  if (err instanceof Unauthorized) {
    const body: ErrorBody = { error: 'unauthorized', message: 'the admin API needs Authorization: Bearer <the sandbox admin token>' };
    return { status: 401, body };
  }
  if (err instanceof AppError) return { status: err.status, body: err.body() };
  return { status: 500, body: { error: 'internal_error', message: 'internal error' } satisfies ErrorBody };
}
