import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { recordEvent } from '../../platform/outbox.js';
import { roundVoidedData } from '../reports/round-view.js';
import { enqueueWalletJob, rollbackJobData } from '../wallet-jobs/wallet-jobs.js';
import { tellFreeBetSessions } from '../freebets/usable.js';

// contract 3.1 -> VOIDED, 3.2 ACCEPTED -> VOIDED, 8.6: a round in BETTING_OPEN or ROLLING
// is voided, its accepted bet becomes VOIDED with a rollback job (or a demo refund), its
// pending round bet REFUNDED with ROUND_VOIDED, and round_voided goes to the player.
// Fenced on the round's state: a second void, or a void racing the roll, does nothing.
// D42: a voided free bet gives its grant's round back (the count of its live bets), and its
// session is sent `free_bets` once the void committed: at once, or, when the caller voids
// many rounds and passes `freeSessions`, by the caller once per session (tellFreeBetSessions).
export async function voidRound(svc: ServiceContext, roundId: string, reason: string, freeSessions?: Set<string>): Promise<boolean> {
  const now = svc.now();
  const result = await svc.db.$transaction(async (tx) => {
    const { count } = await tx.round.updateMany({
      // a crash round whose own end its player was told is not voided: its end is its result (D40)
      where: { id: roundId, state: { in: ['BETTING_OPEN', 'ROLLING'] }, endTold: false },
      data: { state: 'VOIDED', settled: true, voidedAt: now, voidReason: reason },
    });
    if (count === 0) return null;
    const round = await tx.round.findUniqueOrThrow({ where: { id: roundId }, include: { bet: true, session: { select: { mode: true } } } });
    const rollbackTransactionUuid = randomUUID();
    await tx.bet.updateMany({
      where: { id: round.betId, status: 'ACCEPTED' },
      data: { status: 'VOIDED', voidedAt: now, rollbackTransactionUuid },
    });
    await tx.pendingRoundBet.updateMany({
      where: { betId: round.betId, state: 'HELD' },
      data: { state: 'REFUNDED', resolutionReason: 'ROUND_VOIDED', resolvedAt: now },
    });
    if (round.session.mode === 'DEMO') {
      // D8: demo play reaches no wallet and no webhook
      await tx.session.update({ where: { id: round.sessionId }, data: { demoBalanceMicro: { increment: round.bet.amountMicro } } });
      return { round, job: null };
    }
    const job = await tx.walletJob.create({ data: rollbackJobData(round.bet, rollbackTransactionUuid, 'round_voided', now) });
    // D31: reported in the transaction that voids it
    await recordEvent(tx, 'round.voided', round.operatorId, now, roundVoidedData(round, round.bet, reason, now));
    return { round, job };
  });
  if (!result) return false;
  if (result.job) await enqueueWalletJob(svc, result.job);
  else await emitDemoBalance(svc, result.round.sessionId);
  svc.emitter.toSession(result.round.sessionId, 'round_voided', { roundId, cycleId: result.round.cycleId, reason });
  if (result.job && result.round.bet.isFree) {
    if (freeSessions) freeSessions.add(result.round.sessionId);
    else await tellFreeBetSessions(svc, [result.round.sessionId]);
  }
  return true;
}

async function emitDemoBalance(svc: ServiceContext, sessionId: string): Promise<void> {
  const session = await svc.db.session.findUnique({ where: { id: sessionId }, select: { demoBalanceMicro: true, currency: true } });
  if (session?.demoBalanceMicro == null) return;
  svc.emitter.toSession(sessionId, 'balance_update', { balanceMicro: session.demoBalanceMicro.toString(), currency: session.currency });
}

