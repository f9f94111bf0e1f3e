import type { ServiceContext } from '../../platform/context.js';
import { statement } from '../../platform/db/sql.js';
import { deriveDice, type DiceOutcome, type Side } from '../../domain/dice.js';
import { openServerSeed } from '../fairness/seed-vault.js';
import { payout } from '../../domain/payout.js';
import type { PricedCycle, ResultRound } from './settlement.js';
import { voidRound } from './voids.js';

// contract 3.1 ROLLING -> RESULT, D2: each round of the cycle gets its outcome from its own
// session's seed and nonce and the cycle's weight snapshot. The outcomes are persisted
// (fenced on state ROLLING) before round_result is sent; a derivation that fails voids the
// round. A cycle's rounds are read by one statement and written by another; the
// read also takes what settlement needs, so that the rounds persisted here go on to be
// settled without being read again.

// `NOT settled` lets rounds_unsettled find the cycle's rounds (engine.ts, ROUNDS_ROLL)
const ROLLING_ROUNDS = statement(
  'roll_rounds',
  `SELECT r.id, r.operator_id, r.session_id, r.demo, r.nonce, r.low_weight, r.high_weight, r.bet_id, sd.id AS seed_id,
          sd.encrypted_server_seed, sd.client_seed, b.side, b.amount_micro, b.player_ref, b.currency, b.game_code,
          b.bet_transaction_uuid
   FROM rounds r JOIN seeds sd ON sd.id = r.seed_id JOIN bets b ON b.id = r.bet_id
   WHERE r.cycle_id = $1 AND NOT r.settled AND r.state = 'ROLLING'`,
);

type RollingRound = Omit<ResultRound, 'outcome_side' | 'side'> & {
  nonce: number;
  low_weight: bigint;
  high_weight: bigint;
  seed_id: string;
  encrypted_server_seed: Buffer;
  client_seed: string;
  side: Side;
};

const PERSIST_OUTCOMES = statement(
  'roll_persist',
  `UPDATE rounds r
   SET state = 'RESULT', outcome_side = u.side, outcome_sum = u.sum, dice_values = u.dice::int[], result_at = $5
   FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[]) AS u(id, side, sum, dice)
   WHERE r.id = u.id AND r.state = 'ROLLING'
   RETURNING r.id`,
);

// `beforeResults` runs once the outcomes are persisted, just before the players are told: the
// engine announces round_state RESULT there, so that a player's round_state and round_result
// leave in one write (realtime/write-coalescing.ts). Answers the rounds this call moved to
// RESULT, as settlement reads them.
export async function rollRounds(
  svc: ServiceContext,
  cycle: PricedCycle,
  beforeResults: () => void = () => undefined,
): Promise<ResultRound[]> {
  const rounds = await svc.sql.query<RollingRound>(ROLLING_ROUNDS, [cycle.id]);
  const derived: { round: RollingRound; outcome: DiceOutcome }[] = [];
  for (const round of rounds) {
    try {
      const outcome = deriveDice({
        serverSeed: openServerSeed(svc.config.masterKey, round.seed_id, round.encrypted_server_seed),
        clientSeed: round.client_seed,
        nonce: round.nonce,
        lowWeight: round.low_weight,
        highWeight: round.high_weight,
      });
      derived.push({ round, outcome });
    } catch (err) {
      // contract 3.1: an unrecoverable RNG error voids the round
      svc.logger.error({ err, roundId: round.id }, 'outcome derivation failed; voiding the round');
      await voidRound(svc, round.id, 'rng_error');
    }
  }
  if (derived.length === 0) {
    beforeResults();
    return [];
  }
  const persisted = new Set(
    (
      await svc.sql.query<{ id: string }>(PERSIST_OUTCOMES, [
        derived.map((d) => d.round.id),
        derived.map((d) => d.outcome.side),
        derived.map((d) => d.outcome.outcomeSum),
        derived.map((d) => `{${d.outcome.diceValues.join(',')}}`),
        svc.now(),
      ])
    ).map((row) => row.id),
  );
  beforeResults();
  const results: ResultRound[] = [];
  for (const { round, outcome } of derived) {
    if (!persisted.has(round.id)) continue;
    const { nonce, low_weight, high_weight, seed_id, encrypted_server_seed, client_seed, ...settling } = round;
    results.push({ ...settling, outcome_side: outcome.side });
    const won = round.side === outcome.side;
    const net = won
      ? payout({ stakeMicro: round.amount_micro, multiplierScaled: cycle.payoutMultiplierScaled, commissionMicro: cycle.commissionMicro }).netMicro
      : 0n;
    // D4: sent as soon as the outcome is persisted; the win's balance_update follows
    svc.emitter.toSession(round.session_id, 'round_result', {
      roundId: round.id,
      cycleId: cycle.id,
      nonce: round.nonce,
      side: outcome.side,
      sum: outcome.outcomeSum,
      diceValues: outcome.diceValues,
      betId: round.bet_id,
      won,
      payoutMicro: net.toString(),
      // D19: the weight snapshot, so that the player can recompute the side (D2)
      lowWeight: round.low_weight.toString(),
      highWeight: round.high_weight.toString(),
    });
  }
  return results;
}
