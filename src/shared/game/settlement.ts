import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import type { Cycle } from '../db/client.js';
import { payout } from './payout.js';
import { enqueueWalletJob } from './wallet-jobs.js';

// contract 3.1 RESULT -> SETTLED and 8.4. A losing bet is settled at once (no win call). A
// winning bet gets its winTransactionUuid and a pending win job in the same transaction
// that marks the round settled, so a win is enqueued exactly once (unique transaction
// uuid) and the settle worker credits it; demo wins are credited to the demo balance (D8).
// Every step is fenced on the state it leaves, so running it twice books nothing twice.
export async function settleRounds(svc: ServiceContext, cycle: Cycle): Promise<void> {
  const rounds = await svc.db.round.findMany({
    where: { cycleId: cycle.id, state: 'RESULT' },
    include: { bet: true, session: { select: { mode: true } } },
  });
  for (const round of rounds) {
    const { bet } = round;
    const won = bet.side === round.outcomeSide;
    const net = won
      ? payout({ stakeMicro: bet.amountMicro, multiplierScaled: cycle.payoutMultiplierScaled, commissionMicro: cycle.commissionMicro }).netMicro
      : 0n;
    const now = svc.now();
    const demo = round.session.mode === 'DEMO';
    const winJob = await svc.db.$transaction(async (tx) => {
      const settledRound = await tx.round.updateMany({
        where: { id: round.id, state: 'RESULT' },
        data: { state: 'SETTLED', settled: true, settledAt: now },
      });
      if (settledRound.count === 0) return null;
      if (!won || demo) {
        await tx.bet.updateMany({ where: { id: bet.id, status: 'ACCEPTED' }, data: { status: 'SETTLED', payoutMicro: net, settledAt: now } });
        await tx.pendingRoundBet.updateMany({ where: { betId: bet.id, state: 'HELD' }, data: { state: 'RESOLVED', resolvedAt: now } });
        if (won) {
          await tx.session.update({ where: { id: round.sessionId }, data: { demoBalanceMicro: { increment: net } } });
        }
        return null;
      }
      const winTransactionUuid = randomUUID();
      await tx.bet.update({ where: { id: bet.id }, data: { winTransactionUuid, payoutMicro: net } });
      return tx.walletJob.create({
        data: {
          id: randomUUID(),
          operatorId: round.operatorId,
          sessionId: round.sessionId,
          endpoint: 'win',
          purpose: 'win',
          betId: bet.id,
          transactionUuid: winTransactionUuid,
          nextAttemptAt: now,
          // contract 2.7
          payload: {
            operatorId: round.operatorId,
            playerRef: bet.playerRef,
            currency: bet.currency,
            gameCode: bet.gameCode,
            transactionUuid: winTransactionUuid,
            referenceTransactionUuid: bet.betTransactionUuid,
            amountMicro: net.toString(),
            roundId: round.id,
          },
        },
      });
    });
    if (winJob) await enqueueWalletJob(svc, winJob);
    else if (won && demo) await emitDemoBalance(svc, round.sessionId);
  }
}

export async function emitDemoBalance(svc: ServiceContext, sessionId: string): Promise<void> {
  const session = await svc.db.session.findUnique({ where: { id: sessionId }, select: { demoBalanceMicro: true, currency: true } });
  if (session?.demoBalanceMicro == null) return;
  svc.emitter.toSession(sessionId, 'balance_update', { balanceMicro: session.demoBalanceMicro.toString(), currency: session.currency });
}
