import type { ServiceContext } from '../context.js';
import { conflict, notFound } from '../errors.js';

// POST /v1/session/{id}/terminate (contract 3.3, DECISIONS D7): sets terminatedAt and
// retires the session's seeds, which makes them revealable (D2). The transition is fenced on
// state = ACTIVE so that two terminations cannot both succeed.

export type TerminateResponse = { sessionId: string; terminatedAt: string; voidedRoundIds: string[] };

export async function terminateSession(
  ctx: ServiceContext,
  operatorId: string,
  sessionId: string,
  reason: string | undefined,
): Promise<TerminateResponse> {
  const now = ctx.now();
  const session = await ctx.db.session.findFirst({ where: { id: sessionId, operatorId }, select: { state: true, expiresAt: true } });
  // an operator never learns whether another operator's session exists
  if (!session) throw notFound('not_found', 'session not found');
  if (session.state === 'ACTIVE' && session.expiresAt <= now) {
    await endSession(ctx, sessionId, { state: 'EXPIRED', endReason: 'expired' }, session.expiresAt);
    throw conflict('session_not_active', 'the session has expired');
  }
  const ended = await endSession(ctx, sessionId, { state: 'TERMINATED', terminatedAt: now, endReason: reason ?? 'terminated' }, now);
  if (!ended) throw conflict('session_not_active', 'the session has already ended');
  return { sessionId, terminatedAt: now.toISOString(), voidedRoundIds: [] };
}

// Moves an ACTIVE session to its end state and retires its seeds in one transaction;
// false when the session was no longer ACTIVE.
async function endSession(
  ctx: ServiceContext,
  sessionId: string,
  data: { state: 'TERMINATED' | 'EXPIRED'; terminatedAt?: Date; endReason: string },
  retiredAt: Date,
): Promise<boolean> {
  return ctx.db.$transaction(async (tx) => {
    const { count } = await tx.session.updateMany({ where: { id: sessionId, state: 'ACTIVE' }, data });
    if (count === 0) return false;
    await tx.seed.updateMany({ where: { sessionId, retiredAt: null }, data: { retiredAt } });
    return true;
  });
}
