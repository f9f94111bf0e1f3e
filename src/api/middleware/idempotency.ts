import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../shared/db/client.js';
import { Prisma } from '../../shared/db/client.js';
import { conflict, toAppError } from '../../shared/errors.js';
import { sha256Hex } from '../../shared/signing/signer.js';
import type { ApiMiddleware } from '../state.js';

// DECISIONS D17 (contract 4.1 rule 2, 4.3): responses are kept for 24 hours under
// (operatorId, requestUuid, endpoint). The first request claims the key with an INSERT that
// the primary key makes exclusive, so two concurrent requests run the handler once; the
// other waits for the stored response. A claim whose process died is taken over after
// its lease. Answers that a retry might change (5xx, 429, and the 401 of a failed bot
// challenge, which a new challenge token can pass) release the key instead of being stored.

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
const POLL_MS = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const REPLAY_HEADER = 'Idempotent-Replayed';

export const idempotency = (db: Db, leaseMs: number, now: () => Date): ApiMiddleware => async (ctx, next) => {
  const requestUuid = readRequestUuid(ctx.state.body);
  if (!requestUuid) return next() as Promise<void>;
  const key = { operatorId: ctx.state.operator.id, requestUuid, endpoint: `${ctx.method} ${ctx.path}` };
  const bodyHash = sha256Hex(ctx.state.rawBody);

  const stored = await claimOrAwait(db, key, bodyHash, leaseMs, now);
  if (stored) {
    ctx.status = stored.status;
    ctx.body = stored.body;
    ctx.set(REPLAY_HEADER, 'true');
    return;
  }

  const where = { operatorId_requestUuid_endpoint: key };
  let status: number;
  let body: unknown;
  try {
    await next();
    status = ctx.status;
    body = ctx.body;
  } catch (err) {
    const appError = toAppError(err);
    if (isFinal(appError.status)) await complete(db, where, appError.status, appError.body());
    else await db.idempotencyEntry.deleteMany({ where: key });
    throw err;
  }
  if (isFinal(status)) await complete(db, where, status, body);
  else await db.idempotencyEntry.deleteMany({ where: key });
};

const isFinal = (status: number) => status < 500 && status !== 429 && status !== 401;

type Key = { operatorId: string; requestUuid: string; endpoint: string };

function complete(db: Db, where: { operatorId_requestUuid_endpoint: Key }, status: number, body: unknown) {
  return db.idempotencyEntry.update({
    where,
    data: { state: 'COMPLETED', responseStatus: status, responseBody: (body ?? Prisma.JsonNull) as Prisma.InputJsonValue },
  });
}

// Returns the stored response to replay, or undefined once this request owns the key.
async function claimOrAwait(
  db: Db,
  key: Key,
  bodyHash: string,
  leaseMs: number,
  now: () => Date,
): Promise<{ status: number; body: unknown } | undefined> {
  for (;;) {
    const claimedAt = now();
    const { count } = await db.idempotencyEntry.createMany({
      data: [
        {
          ...key,
          bodyHash,
          lockedUntil: new Date(claimedAt.getTime() + leaseMs),
          createdAt: claimedAt,
          expiresAt: new Date(claimedAt.getTime() + IDEMPOTENCY_RETENTION_MS),
        },
      ],
      skipDuplicates: true,
    });
    if (count === 1) return undefined;

    const entry = await db.idempotencyEntry.findUnique({ where: { operatorId_requestUuid_endpoint: key } });
    if (!entry) continue; // released by a failed attempt: claim again
    if (entry.expiresAt <= claimedAt) {
      await db.idempotencyEntry.deleteMany({ where: { ...key, expiresAt: { lte: claimedAt } } });
      continue;
    }
    if (entry.bodyHash !== bodyHash) {
      throw conflict('idempotency_key_reused', 'this requestUuid was used with a different body');
    }
    if (entry.state === 'COMPLETED') return { status: entry.responseStatus ?? 200, body: entry.responseBody };
    if (entry.lockedUntil <= claimedAt) {
      const takeover = await db.idempotencyEntry.updateMany({
        where: { ...key, state: 'IN_PROGRESS', lockedUntil: { lte: claimedAt } },
        data: { lockedUntil: new Date(claimedAt.getTime() + leaseMs) },
      });
      if (takeover.count === 1) return undefined;
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

