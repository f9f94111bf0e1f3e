import type { ServiceContext } from '../context.js';
import { statement, type Queryable } from '../../platform/db/sql.js';
import { openServerSeed } from '../fairness/seed-vault.js';
import { cycleConfigOf } from '../rounds/cycle-config.js';
import { settleRounds, type PricedCycle } from '../rounds/settle.js';
import { voidRound } from '../rounds/voids.js';
import { roundedPayout } from '../../domain/currency.js';
import { instantModule } from './place.js';
import { tellJackpot } from './jackpot.js';
import type { PayoutRounding } from '../../domain/games/config.js';

// An accepted instant play, from ROLLING to SETTLED (D41, contract 3.1, 8.4): its outcome is
// derived from the session's seed and nonce with the jackpot's pool as it stands, and stored
// with the pool's change in one transaction, fenced on the round's state; its player is told
// round_result, and it is settled as every round is (rounds/settle.ts: a win's job for the
// settle pool, a loss settled at once) and its cycle finished. The process that placed the play runs
// this as soon as the debit is accepted; the leader's sweep (sweep.ts) runs it for a play left
// accepted by a process that stopped, so a play whose debit went through is always played and
// paid, once: whoever locks the round in ROLLING first derives it, the other finds it decided.

// The round in ROLLING, locked, with its seed, its bet and its cycle's terms
const PLAY_ROUND = statement(
  'play_round',
  `SELECT r.id, r.nonce, r.session_id, r.operator_id, r.demo, r.bet_id, r.cycle_id, r.cycle_created_at, r.game_code, r.currency,
          sd.id AS seed_id, sd.encrypted_server_seed, sd.client_seed, b.amount_micro, b.feature_buy, b.is_free, c.payout_rounding
   FROM rounds r JOIN seeds sd ON sd.id = r.seed_id JOIN bets b ON b.id = r.bet_id AND b.cycle_created_at = r.cycle_created_at
   JOIN cycles c ON c.id = r.cycle_id
   WHERE r.id = $1 AND r.cycle_created_at = $2 AND r.state = 'ROLLING'
   FOR UPDATE OF r`,
);

type PlayRound = {
  id: string;
  nonce: number;
  session_id: string;
  operator_id: string;
  demo: boolean;
  bet_id: string;
  cycle_id: string;
  cycle_created_at: Date;
  game_code: string;
  currency: string;
  seed_id: string;
  encrypted_server_seed: Buffer;
  client_seed: string;
  amount_micro: bigint;
  feature_buy: boolean;
  is_free: boolean;
  payout_rounding: PayoutRounding;
};

// D41: the pool of the operator and currency, made at its seed when it is first fed; then the
// play's contribution, under the row's lock (held to the commit: a second play of the pool
// waits, and sees the pool this one leaves)
const SEED_POOL = statement(
  'jackpot_seed',
  `INSERT INTO jackpot_pools (operator_id, currency, pool_micro, seed_micro, seeded_micro) VALUES ($1, $2, $3, $3, $3) ON CONFLICT DO NOTHING`,
);
const FEED_POOL = statement(
  'jackpot_feed',
  `UPDATE jackpot_pools SET pool_micro = pool_micro + $3, contributed_micro = contributed_micro + $3, updated_at = $4
   WHERE operator_id = $1 AND currency = $2
   RETURNING pool_micro`,
);
// a hit pays the whole pool, which restarts at the configuration's seed (jackpot_pools_conserved
// holds: seeded + contributed - paid is the pool)
const PAY_POOL = statement(
  'jackpot_pay',
  `UPDATE jackpot_pools SET paid_micro = paid_micro + $3, pool_micro = $4, seed_micro = $4, seeded_micro = seeded_micro + $4,
          hits = hits + 1, last_hit_at = $5, updated_at = $5
   WHERE operator_id = $1 AND currency = $2 AND pool_micro = $3
   RETURNING pool_micro`,
);
// a demo play (D8) reads the pool and changes nothing
const READ_POOL = statement('jackpot_read', `SELECT pool_micro FROM jackpot_pools WHERE operator_id = $1 AND currency = $2`);

const STORE_OUTCOME = statement(
  'play_store_outcome',
  `WITH round AS (
     UPDATE rounds SET state = 'RESULT', outcome = $3::jsonb, result_at = $4
     WHERE id = $1 AND cycle_created_at = $2 AND state = 'ROLLING'
     RETURNING cycle_id
   )
   UPDATE cycles SET phase = 'RESULT' FROM round WHERE cycles.id = round.cycle_id AND cycles.phase = 'ROLLING'`,
);

// the play's cycle is finished once its round is settled or voided (its win may still be on its
// way: the win job is the settle pool's, contract 3.4)
const FINISH_CYCLE = statement(
  'play_finish',
  `UPDATE cycles SET phase = 'FINISHED', finished_at = $2 WHERE id = $1 AND phase <> 'FINISHED'`,
);

export type PlayToResolve = { roundId: string; cycleCreatedAt: string | Date };

type Derived = { round: PlayRound; module: NonNullable<ReturnType<typeof instantModule>>; outcome: unknown; jackpot?: { poolMicro: bigint; paidMicro: bigint } };

// Answers whether this call decided the play (false: another did, or it was not in ROLLING).
export async function resolvePlay(svc: ServiceContext, play: PlayToResolve): Promise<boolean> {
  let derived: Derived | undefined;
  try {
    derived = await svc.sql.transaction((tx) => derive(svc, tx, play));
  } catch (err) {
    // contract 3.1: an outcome that cannot be derived voids the round (its stake given back)
    if (!(err instanceof DerivationError)) throw err;
    svc.logger.error({ err: err.cause, roundId: play.roundId }, 'outcome derivation failed; voiding the round');
    await voidRound(svc, play.roundId, 'rng_error');
    return false;
  }
  if (!derived) return false;
  const { round, module, outcome, jackpot } = derived;
  const payoutMicro = roundedPayout(module.instant.payoutMicro(outcome), round.payout_rounding, round.currency);
  svc.emitter.toSession(
    round.session_id,
    'round_result',
    module.instant.result(
      { roundId: round.id, cycleId: round.cycle_id, nonce: round.nonce, betId: round.bet_id, won: payoutMicro > 0n, payoutMicro: payoutMicro.toString() },
      outcome,
    ),
  );
  if (jackpot) tellJackpot(svc, { operatorId: round.operator_id, gameCode: round.game_code, currency: round.currency }, jackpot.poolMicro, jackpot.paidMicro > 0n ? { roundId: round.id, payoutMicro: jackpot.paidMicro } : undefined);
  // the outcome is durable and told (contract 3.1 RESULT); a settlement that fails here is the
  // sweep's to finish
  await settlePlay(svc, round);
  return true;
}

class DerivationError extends Error {
  override name = 'DerivationError';
}

async function derive(svc: ServiceContext, tx: Queryable, play: PlayToResolve): Promise<Derived | undefined> {
  const [round] = await tx.query<PlayRound>(PLAY_ROUND, [play.roundId, play.cycleCreatedAt]);
  if (!round) return undefined;
  const module = instantModule(round.game_code);
  if (!module) throw new Error(`round ${round.id} is not of an instant game: ${round.game_code}`);
  const config = await cycleConfigOf(svc, round.cycle_id);
  // the bet as placed, under the snapshot it was placed under (place.ts)
  const bet = module.bet.parse({ featureBuy: round.feature_buy }, config);
  // what the bet keeps: the play's price, or a free play's stake (D42)
  const stakeMicro = round.is_free ? round.amount_micro : module.instant.stakeMicro(round.amount_micro, bet, config);
  const costMicro = module.instant.costMicro(stakeMicro, bet, config);
  const key = [round.operator_id, round.currency];
  let poolMicro: bigint;
  if (round.demo) {
    const [pool] = await tx.query<{ pool_micro: bigint }>(READ_POOL, key);
    poolMicro = pool?.pool_micro ?? module.instant.jackpotSeedMicro(config);
  } else {
    const contribution = module.instant.jackpotContributionMicro(costMicro, config);
    const feed = () => tx.query<{ pool_micro: bigint }>(FEED_POOL, [...key, contribution, svc.now()]);
    // the pool is made only by its first play: every other play costs one statement here
    let [fed] = await feed();
    if (!fed) {
      await tx.query(SEED_POOL, [...key, module.instant.jackpotSeedMicro(config)]);
      [fed] = await feed();
    }
    poolMicro = fed!.pool_micro;
  }
  let outcome: unknown;
  try {
    const serverSeed = openServerSeed(svc.config.masterKey, round.seed_id, round.encrypted_server_seed);
    outcome = module.instant.play({ serverSeed, clientSeed: round.client_seed, nonce: round.nonce, stakeMicro, bet, jackpotPoolMicro: poolMicro }, config);
  } catch (err) {
    throw new DerivationError('derivation failed', { cause: err });
  }
  const paidMicro = module.instant.jackpotPaidMicro(outcome);
  let left = poolMicro;
  if (paidMicro > 0n && !round.demo) {
    const seed = module.instant.jackpotSeedMicro(config);
    const [paid] = await tx.query<{ pool_micro: bigint }>(PAY_POOL, [...key, paidMicro, seed, svc.now()]);
    // the pool is this transaction's under its lock: it is what the play was given
    if (!paid) throw new Error(`jackpot pool of ${round.operator_id} ${round.currency} changed under its lock`);
    left = paid.pool_micro;
  }
  await tx.query(STORE_OUTCOME, [round.id, round.cycle_created_at, JSON.stringify(module.instant.outcomeJson(outcome)), svc.now()]);
  return { round, module, outcome, ...(round.demo ? {} : { jackpot: { poolMicro: left, paidMicro } }) };
}

// contract 8.4 through the settlement every round has (a win's job, a loss settled, a demo win
// credited), then the play's cycle finished
export async function settlePlay(svc: ServiceContext, round: Pick<PlayRound, 'cycle_id' | 'cycle_created_at' | 'game_code' | 'payout_rounding'>): Promise<void> {
  const cycle: PricedCycle = { id: round.cycle_id, gameCode: round.game_code, payoutRounding: round.payout_rounding, createdAt: round.cycle_created_at };
  await settleRounds(svc, cycle);
  await finishPlayCycle(svc, round.cycle_id);
}

export const finishPlayCycle = async (svc: Pick<ServiceContext, 'sql' | 'now'>, cycleId: string): Promise<void> => {
  await svc.sql.query(FINISH_CYCLE, [cycleId, svc.now()]);
};
