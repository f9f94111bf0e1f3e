import type { ServiceContext } from '../context.js';
import type { Cycle } from '../db/client.js';
import { deriveDice } from '../fairness/dice.js';
import { openServerSeed } from '../fairness/seed-vault.js';
import { payout } from './payout.js';
import { voidRound } from './voids.js';

// contract 3.1 ROLLING -> RESULT, D2: each round of the cycle gets its outcome from its own
// session's seed and nonce and the cycle's weight snapshot. The outcome is persisted (fenced
// on state ROLLING) before round_result is sent; a derivation that fails voids the round.
export async function rollRounds(svc: ServiceContext, cycle: Cycle): Promise<void> {
  const rounds = await svc.db.round.findMany({
    where: { cycleId: cycle.id, state: 'ROLLING' },
    include: { seed: true, bet: true },
  });
  for (const round of rounds) {
    let outcome;
    try {
      outcome = deriveDice({
        serverSeed: openServerSeed(svc.config.masterKey, round.seed.id, round.seed.encryptedServerSeed),
        clientSeed: round.seed.clientSeed,
        nonce: round.nonce,
        lowWeight: round.lowWeight,
        highWeight: round.highWeight,
      });
    } catch (err) {
      // contract 3.1: an unrecoverable RNG error voids the round
      svc.logger.error({ err, roundId: round.id }, 'outcome derivation failed; voiding the round');
      await voidRound(svc, round.id, 'rng_error');
      continue;
    }
    const { count } = await svc.db.round.updateMany({
      where: { id: round.id, state: 'ROLLING' },
      data: {
        state: 'RESULT',
        outcomeSide: outcome.side,
        outcomeSum: outcome.outcomeSum,
        diceValues: outcome.diceValues,
        resultAt: svc.now(),
      },
    });
    if (count === 0) continue;
    const won = round.bet.side === outcome.side;
    const net = won
      ? payout({ stakeMicro: round.bet.amountMicro, multiplierScaled: cycle.payoutMultiplierScaled, commissionMicro: cycle.commissionMicro }).netMicro
      : 0n;
    // D4: sent as soon as the outcome is persisted; the win's balance_update follows
    svc.emitter.toSession(round.sessionId, 'round_result', {
      roundId: round.id,
      cycleId: cycle.id,
      nonce: round.nonce,
      side: outcome.side,
      sum: outcome.outcomeSum,
      diceValues: outcome.diceValues,
      betId: round.betId,
      won,
      payoutMicro: net.toString(),
      // D19: the weight snapshot, so that the player can recompute the side (D2)
      lowWeight: round.lowWeight.toString(),
      highWeight: round.highWeight.toString(),
    });
  }
}
