import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceContext } from '../../shared/game/context.js';
import { params, statement, type Sql } from '../../shared/platform/db/sql.js';
import { conflict, toAppError } from '../../shared/platform/errors.js';
import { isDependencyFailure } from '../../shared/platform/dependencies.js';
import { completeIdempotencySql, completionParams, IDEMPOTENCY_PARAM_COUNT, type IdempotencyClaim, type IdempotencyKey } from '../../shared/platform/idempotency.js';
import { sha256Hex } from '../../shared/wallet/signer.js';
import { forRequest, type ApiContext, type ApiMiddleware } from '../state.js';

// DECISIONS D17 (contract 4.1 rule 2, 4.3): responses are kept for 24 hours under
// (operatorId, requestUuid, endpoint), the endpoint being the matched route (D26). The first
// request claims the key with an INSERT that the primary key makes exclusive, so two
// concurrent requests run the handler once; the other waits for the stored response. A
// claim whose process died is taken over after its lease. Answers that a retry might change
// (5xx, 429, and the 401 of a failed bot challenge, which a new challenge token can pass)
// release the key instead of being stored.
// A handler may complete the key itself, in the statement that makes its effect
// (ctx.state.idempotency, platform/idempotency.ts); the key is then left as it wrote it.

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
const POLL_MS = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const REPLAY_HEADER = 'Idempotent-Replayed';

export type StoredResponse = { status: number; body: unknown };

// `replay`: the answer to a retry, from the stored response (a launch re-mints its token, D25)
export const idempotency = (
  svc: Pick<ServiceContext, 'sql' | 'logger' | 'now'>,
  leaseMs: number,
  replay: (stored: StoredResponse) => unknown | Promise<unknown> = (stored) => stored.body,
): ApiMiddleware => async (ctx, next) => {
  const { sql, now } = svc;
  const requestUuid = readRequestUuid(ctx.state.body);
  if (!requestUuid) return next() as Promise<void>;
  const key: IdempotencyKey = [ctx.state.operator.id, requestUuid, endpointOf(ctx)];
  const bodyHash = sha256Hex(ctx.state.rawBody);

  const stored = await claimOrAwait(sql, key, bodyHash, leaseMs, now);
  if (stored) {
    ctx.status = stored.status;
    ctx.body = await replay(stored);
    ctx.set(REPLAY_HEADER, 'true');
    return;
  }

  const claim: IdempotencyClaim = { key, completed: false };
  ctx.state.idempotency = claim;
  let status: number;
  let body: unknown;
  try {
    await next();
    status = ctx.status;
    body = ctx.body;
  } catch (err) {
    // a key its handler completed holds the effect that happened: it stays
    if (claim.completed) throw err;
    const appError = toAppError(err);
    if (isFinal(appError.status)) await store(forRequest(svc, ctx), claim, appError.status, appError.body());
    else await sql.query(RELEASE, key);
    throw err;
  }
  if (claim.completed) return;
  if (isFinal(status)) await store(forRequest(svc, ctx), claim, status, body);
  else await sql.query(RELEASE, key);
};

// Storing the answer never changes it: an answer the store refuses (jsonb holds no NUL or
// lone surrogate; bodies do not echo input, D3, so this is a defect to fix) releases the
// key and is answered all the same; a retry then runs again. A lost database is the
// service's own outage and is answered as one (errors.ts).
async function store(svc: Pick<ServiceContext, 'sql' | 'logger'>, claim: IdempotencyClaim, status: number, body: unknown): Promise<void> {
  try {
    await svc.sql.query(COMPLETE, completionParams(claim, status, body));
  } catch (err) {
    if (isDependencyFailure(err)) throw err;
    svc.logger.warn({ err: (err as Error).message, endpoint: claim.key[2], status }, 'idempotency: answer not storable; key released');
    await svc.sql.query(RELEASE, claim.key).catch((released: unknown) => {
      // left IN_PROGRESS: a retry takes the key over once its lease ends
      svc.logger.warn({ err: (released as Error).message }, 'idempotency: key not released');
    });
  }
}

// D26: the key names the matched route, not the raw path, so that /V1/session and
// /v1/session/ (the router matches both) find one entry. The route's parameters are filled
// in lower case: every one of them is a UUID, which the handlers compare lower-cased.
type Routed = { routerPath?: string; params?: Record<string, string | undefined> };
function endpointOf(ctx: ApiContext): string {
  const { routerPath, params = {} } = ctx as unknown as Routed;
  const route = routerPath ?? ctx.path.toLowerCase();
  return `${ctx.method} ${route.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? '').toLowerCase())}`;
}

const isFinal = (status: number) => status < 500 && status !== 429 && status !== 401;

const KEY = 'operator_id = $1 AND request_uuid = $2 AND endpoint = $3';

const CLAIM = statement(
  'idempotency_claim',
  `INSERT INTO idempotency_entries (operator_id, request_uuid, endpoint, body_hash, state, locked_until, created_at, expires_at)
   VALUES ($1, $2, $3, $4, 'IN_PROGRESS', $5, $6, $7)
   ON CONFLICT DO NOTHING
   RETURNING 1`,
);
const READ = statement(
  'idempotency_read',
  `SELECT body_hash, state, locked_until, response_status, response_body, expires_at FROM idempotency_entries WHERE ${KEY}`,
);
const COMPLETE = statement('idempotency_complete', completeIdempotencySql(params().many(IDEMPOTENCY_PARAM_COUNT)));
const RELEASE = statement('idempotency_release', `DELETE FROM idempotency_entries WHERE ${KEY}`);
const DROP_EXPIRED = statement('idempotency_drop_expired', `DELETE FROM idempotency_entries WHERE ${KEY} AND expires_at <= $4`);
const TAKE_OVER = statement(
  'idempotency_take_over',
  `UPDATE idempotency_entries SET locked_until = $5 WHERE ${KEY} AND state = 'IN_PROGRESS' AND locked_until <= $4 RETURNING 1`,
);

type Entry = {
  body_hash: string;
  state: 'IN_PROGRESS' | 'COMPLETED';
  locked_until: Date;
  response_status: number | null;
  response_body: unknown;
  expires_at: Date;
};

// Returns the stored response to replay, or undefined once this request owns the key.
async function claimOrAwait(
  sql: Sql,
  key: IdempotencyKey,
  bodyHash: string,
  leaseMs: number,
  now: () => Date,
): Promise<StoredResponse | undefined> {
  for (;;) {
    const claimedAt = now();
    const lockedUntil = new Date(claimedAt.getTime() + leaseMs);
    const claimed = await sql.query(CLAIM, [...key, bodyHash, lockedUntil, claimedAt, new Date(claimedAt.getTime() + IDEMPOTENCY_RETENTION_MS)]);
    if (claimed.length === 1) return undefined;

    const [entry] = await sql.query<Entry>(READ, key);
    if (!entry) continue; // released by a failed attempt: claim again
    if (entry.expires_at <= claimedAt) {
      await sql.query(DROP_EXPIRED, [...key, claimedAt]);
      continue;
    }
    if (entry.body_hash !== bodyHash) {
      throw conflict('idempotency_key_reused', 'this requestUuid was used with a different body');
    }
    if (entry.state === 'COMPLETED') return { status: entry.response_status ?? 200, body: entry.response_body };
    if (entry.locked_until <= claimedAt) {
      if ((await sql.query(TAKE_OVER, [...key, claimedAt, lockedUntil])).length === 1) return undefined;
      continue;
    }
    await sleep(POLL_MS);
  }
}

function readRequestUuid(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const value = (body as { requestUuid?: unknown }).requestUuid;
  if (typeof value !== 'string') return undefined;
  const normalized = value.toLowerCase();
  // a malformed requestUuid is left to validation, which answers 400
  return UUID.test(normalized) ? normalized : undefined;
}

