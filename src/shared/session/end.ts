import type { ServiceContext } from '../context.js';
import { voidRound } from '../game/voids.js';

// How a session ends (contract 3.3, DECISIONS D4, D7): the ACTIVE -> TERMINATED/EXPIRED
// transition is fenced on state, retires the session's seeds (they become revealable, D2),
// voids the session's round in BETTING_OPEN or ROLLING when the operator terminates (8.6),
// then tells the player (session_ended) and closes their sockets on every node.

export type SessionEnd =
  | { kind: 'terminated'; reason: string | undefined }
  | { kind: 'expired' }
  | { kind: 'wallet_status'; status: string };

export type EndedSession = { terminatedAt: Date; voidedRoundIds: string[] };

export async function endSession(svc: ServiceContext, sessionId: string, end: SessionEnd): Promise<EndedSession | null> {
  const now = svc.now();
  const ended = await svc.db.$transaction(async (tx) => {
    const session = await tx.session.findUnique({ where: { id: sessionId }, select: { expiresAt: true } });
    if (!session) return null;
    const { count } = await tx.session.updateMany({
      where: { id: sessionId, state: 'ACTIVE' },
      data:
        end.kind === 'expired'
          ? { state: 'EXPIRED', endReason: 'expired' }
          : {
              state: 'TERMINATED',
              terminatedAt: now,
              endReason: end.kind === 'terminated' ? (end.reason ?? 'terminated') : `wallet_status:${end.status}`,
            },
    });
    if (count === 0) return null;
    const retiredAt = end.kind === 'expired' ? session.expiresAt : now;
    await tx.seed.updateMany({ where: { sessionId, retiredAt: null }, data: { retiredAt } });
    return { terminatedAt: now };
  });
  if (!ended) return null;

  const voidedRoundIds: string[] = [];
  if (end.kind === 'terminated') {
    const rounds = await svc.db.round.findMany({
      where: { sessionId, state: { in: ['BETTING_OPEN', 'ROLLING'] } },
      select: { id: true },
    });
    for (const round of rounds) {
      if (await voidRound(svc, round.id, 'session_terminated')) voidedRoundIds.push(round.id);
    }
  }
  const reason = end.kind === 'wallet_status' ? `wallet_status:${end.status}` : end.kind;
  svc.emitter.toSession(sessionId, 'session_ended', { reason });
  svc.emitter.disconnectSession(sessionId);
  return { terminatedAt: ended.terminatedAt, voidedRoundIds };
}
