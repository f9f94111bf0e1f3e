import type { ServiceContext } from '../context.js';
import type { Seed } from '../../platform/db/client.js';
import { openServerSeed } from '../fairness/seed-vault.js';
import { voidRound } from '../rounds/voids.js';
import { recordEvent } from '../../platform/outbox.js';
import type { SessionEnded } from '../../domain/player-channel.js';

// How a session ends (contract 3.3, DECISIONS D4, D7): the ACTIVE -> TERMINATED/EXPIRED
// transition is fenced on state, retires the session's seeds (they become revealable, D2),
// voids the session's round in BETTING_OPEN or ROLLING when the operator terminates (8.6),
// then tells the player (session_ended, with the retired seed, D28) and closes their
// sockets on every node.

export type SessionEnd =
  | { kind: 'terminated'; reason: string | undefined }
  | { kind: 'expired' }
  | { kind: 'wallet_status'; status: string };

export type EndedSession = { terminatedAt: Date; voidedRoundIds: string[] };

export async function endSession(svc: ServiceContext, sessionId: string, end: SessionEnd): Promise<EndedSession | null> {
  const now = svc.now();
  const ended = await svc.db.$transaction(async (tx) => {
    const session = await tx.session.findUnique({ where: { id: sessionId }, select: { expiresAt: true, operatorId: true, playerRef: true, mode: true } });
    if (!session) return null;
    const endReason = end.kind === 'terminated' ? (end.reason ?? 'terminated') : end.kind === 'wallet_status' ? `wallet_status:${end.status}` : 'expired';
    const { count } = await tx.session.updateMany({
      where: { id: sessionId, state: 'ACTIVE' },
      data: end.kind === 'expired' ? { state: 'EXPIRED', endReason } : { state: 'TERMINATED', terminatedAt: now, endReason },
    });
    if (count === 0) return null;
    // D31: a termination (by the operator or a wallet status, not an expiry) of a real-money
    // session (D8) is reported in the transaction that makes it
    if (end.kind !== 'expired' && session.mode === 'REAL') {
      await recordEvent(tx, 'session.terminated', session.operatorId, now, {
        sessionId,
        playerRef: session.playerRef,
        reason: endReason,
        terminatedAt: now.toISOString(),
      });
    }
    const retiredAt = end.kind === 'expired' ? session.expiresAt : now;
    await tx.seed.updateMany({ where: { sessionId, retiredAt: null }, data: { retiredAt } });
    const seed = await tx.seed.findFirst({ where: { sessionId, current: true } });
    return { terminatedAt: now, seed };
  });
  if (!ended) return null;

  const voidedRoundIds: string[] = [];
  if (end.kind === 'terminated') {
    const rounds = await svc.db.round.findMany({
      where: { sessionId, state: { in: ['BETTING_OPEN', 'ROLLING'] } },
      select: { id: true },
    });
    // D42: the session's free bets given back are not told it: it is ending
    const ending = new Set<string>();
    for (const round of rounds) {
      if (await voidRound(svc, round.id, 'session_terminated', ending)) voidedRoundIds.push(round.id);
    }
  }
  const reason = end.kind === 'wallet_status' ? `wallet_status:${end.status}` : end.kind;
  svc.emitter.endSession(sessionId, { reason, ...revealed(svc, ended.seed) });
  return { terminatedAt: ended.terminatedAt, voidedRoundIds };
}

// D28: session_ended reveals the session's current seed once it is retired, so the page can
// verify the last rounds; the proof endpoint reveals the same seed from then on (D2). A seed
// not retired (the session lives on, another socket replaced this one) is never revealed.
export function revealed(svc: Pick<ServiceContext, 'config'>, seed: Seed | null): { serverSeedHash?: string; serverSeed?: string } {
  if (!seed) return {};
  if (seed.retiredAt === null) return { serverSeedHash: seed.serverSeedHash };
  return { serverSeedHash: seed.serverSeedHash, serverSeed: openServerSeed(svc.config.masterKey, seed.id, seed.encryptedServerSeed) };
}

// session_ended for a session found ended (by another process, or before): what endSession
// sent its sockets
export async function endedNotice(svc: ServiceContext, sessionId: string, reason: string): Promise<SessionEnded> {
  const seed = await svc.db.seed.findFirst({ where: { sessionId, current: true } });
  return { reason, ...revealed(svc, seed) };
}
