import type { ServiceContext } from '../context.js';
import { conflict, notFound } from '../../platform/errors.js';
import { endSession } from './end.js';

// POST /v1/session/{id}/terminate (contract 3.3, DECISIONS D7): the operator ends a session;
// its round in BETTING_OPEN or ROLLING is voided and its bet rolled back (8.6).

export type TerminateResponse = { sessionId: string; terminatedAt: string; voidedRoundIds: string[] };

export async function terminateSession(
  ctx: ServiceContext,
  operatorId: string,
  sessionId: string,
  reason: string | undefined,
): Promise<TerminateResponse> {
  const session = await ctx.db.session.findFirst({ where: { id: sessionId, operatorId }, select: { state: true, expiresAt: true } });
  // an operator never learns whether another operator's session exists
  if (!session) throw notFound('not_found', 'session not found');
  if (session.state === 'ACTIVE' && session.expiresAt <= ctx.now()) {
    await endSession(ctx, sessionId, { kind: 'expired' });
    throw conflict('session_not_active', 'the session has expired');
  }
  const ended = await endSession(ctx, sessionId, { kind: 'terminated', reason });
  if (!ended) throw conflict('session_not_active', 'the session has already ended');
  return { sessionId, terminatedAt: ended.terminatedAt.toISOString(), voidedRoundIds: ended.voidedRoundIds };
}
