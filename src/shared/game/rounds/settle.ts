import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import { enqueueWalletJobs } from '../wallet-jobs/wallet-jobs.js';
import { winRequest } from '../../wallet/requests.js';
import { roundHash } from '../../domain/seeds.js';
import { isoSql, outboxInsertSql } from '../../platform/outbox.js';
import { openServerSeed } from '../fairness/seed-vault.js';
import { voidRound } from './voids.js';
import { roundedPayout } from '../../domain/currency.js';
import { bookedPayout } from '../../domain/payout.js';
import type { PayoutRounding } from '../../domain/games/config.js';
import type { AnyGameModule, RoundRecord, Settlement, StakeTerms } from '../../domain/games/types.js';
import { cycleConfigOf } from './cycle-config.js';
import { moduleOf, roundRecord, type RecordedRound } from './round-record.js';

// A cycle's rounds from ROLLING to SETTLED (contract 3.1, 8.4, D2): each round's outcome
// (rollRounds), then its settlement (settleRounds), which creates a winning bet's win job.
// The clock (clock.ts) calls both, in its RESULT phase.

// contract 3.1 ROLLING -> RESULT, D2: each round of the cycle gets its outcome from its own
// session's seed and nonce, through its game's module (D39): `derive` of the round's h under
// the configuration the round is played under (dice: the cycle's weight snapshot, D19). The
// outcomes are persisted (fenced on state ROLLING) before round_result is sent; a derivation
// that fails voids the round. A cycle's rounds are read by one statement and written by
// another; the read also takes what settlement needs, so that the rounds persisted here go on
// to be settled without being read again.

// A round's record as its game's module reads it (RoundRecord, round-record.ts): the rounds
// table's columns and its bet's own parameters, whatever the game, named as roundRecord reads
// them. Which of them a game uses is its module's business.
const RECORD_COLUMNS = `r.state, r.outcome_side AS "outcomeSide", r.outcome_sum AS "outcomeSum", r.dice_values AS "diceValues",
          r.low_weight AS "lowWeight", r.high_weight AS "highWeight", r.crash_cents AS "crashCents", r.cash_out_cents AS "cashOutCents",
          r.cash_out_ms AS "cashOutMs", r.outcome, b.side, b.auto_cash_out_cents AS "autoCashOutCents", b.feature_buy AS "featureBuy", b.is_free`;
type RecordRow = RecordedRound & { side: string | null; autoCashOutCents: bigint | null; featureBuy: boolean };

// `NOT settled` lets rounds_unsettled find the cycle's rounds (rgs_rounds_follow_rolling, called by clock.ts)
const ROLLING_ROUNDS = statement(
  'roll_rounds',
  `SELECT r.id, r.operator_id, r.session_id, r.demo, r.nonce, r.bet_id, sd.id AS seed_id, sd.encrypted_server_seed, sd.client_seed,
          b.amount_micro, b.player_ref, b.currency, b.game_code, b.bet_transaction_uuid, ${RECORD_COLUMNS}
   FROM rounds r JOIN seeds sd ON sd.id = r.seed_id JOIN bets b ON b.id = r.bet_id AND b.cycle_created_at = $2
   WHERE r.cycle_id = $1 AND r.cycle_created_at = $2 AND NOT r.settled AND r.state = 'ROLLING'`,
);

type RollingRound = SettlingRound &
  RecordRow & {
    nonce: number;
    seed_id: string;
    encrypted_server_seed: Buffer;
    client_seed: string;
  };

// The outcome columns (OutcomeColumns) the module wrote; a column it leaves out keeps what it
// holds.
const PERSIST_OUTCOMES = statement(
  'roll_persist',
  `UPDATE rounds r
   SET state = 'RESULT', outcome_side = COALESCE(u.side, r.outcome_side), outcome_sum = COALESCE(u.sum, r.outcome_sum),
       dice_values = COALESCE(u.dice::int[], r.dice_values), crash_cents = COALESCE(u.crash, r.crash_cents), result_at = $6
   FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::bigint[]) AS u(id, side, sum, dice, crash)
   WHERE r.id = u.id AND r.cycle_created_at = $7 AND r.state = 'ROLLING'
   RETURNING r.id`,
);

// The module of a cycle whose rounds are rolled (D39); a cycle of a game no module knows, or of a
// flight (D40, flight.ts), is an error, never another game's roll.
type RolledModule = Extract<AnyGameModule, { flight: false; kind: 'shared' }>;
function rolledModule(cycle: PricedCycle): RolledModule {
  const module = moduleOf(cycle.gameCode, `cycle ${cycle.id}`);
  if (module.flight) throw new Error(`cycle ${cycle.id} is a flight of ${cycle.gameCode}: its rounds are not rolled`);
  if (module.kind === 'instant') throw new Error(`cycle ${cycle.id} is an instant play of ${cycle.gameCode}: its round is not rolled`);
  return module;
}

// `beforeResults` runs once the outcomes are persisted, just before the players are told: the
// engine announces round_state RESULT there, so that a player's round_state and round_result
// leave in one write (realtime/write-coalescing.ts); it does not run when there is no outcome
// to tell. Answers the rounds this call moved to RESULT, priced, as settlement books them.
export async function rollRounds(
  svc: ServiceContext,
  cycle: PricedCycle,
  beforeResults: () => void = () => undefined,
): Promise<ResultRound[]> {
  const module = rolledModule(cycle);
  const rounds = await svc.sql.query<RollingRound>(ROLLING_ROUNDS, [cycle.id, cycle.createdAt]);
  if (rounds.length === 0) return [];
  const cycleConfig = await cycleConfigOf(svc, cycle.id);
  const derived: { round: RollingRound; record: RoundRecord; config: StakeTerms; outcome: unknown }[] = [];
  for (const round of rounds) {
    const record = roundRecord(round, round);
    const config = module.roll.config(cycleConfig, record);
    try {
      // D2: h, the HMAC of the round's seeds and nonce
      const serverSeed = openServerSeed(svc.config.masterKey, round.seed_id, round.encrypted_server_seed);
      const h = roundHash({ serverSeed, clientSeed: round.client_seed, nonce: round.nonce });
      derived.push({ round, record, config, outcome: module.derive(h, config) });
    } catch (err) {
      // contract 3.1: an unrecoverable RNG error voids the round
      svc.logger.error({ err, roundId: round.id }, 'outcome derivation failed; voiding the round');
      await voidRound(svc, round.id, 'rng_error');
    }
  }
  if (derived.length === 0) return [];
  const columns = derived.map((d) => module.roll.columns(d.outcome));
  const persisted = new Set(
    (
      await svc.sql.query<{ id: string }>(PERSIST_OUTCOMES, [
        derived.map((d) => d.round.id),
        columns.map((c) => c.outcomeSide ?? null),
        columns.map((c) => c.outcomeSum ?? null),
        columns.map((c) => (c.diceValues === undefined ? null : `{${c.diceValues.join(',')}}`)),
        columns.map((c) => c.crashCents ?? null),
        svc.now(),
        cycle.createdAt,
      ])
    ).map((row) => row.id),
  );
  beforeResults();
  const results: ResultRound[] = [];
  for (const { round, record, config, outcome } of derived) {
    if (!persisted.has(round.id)) continue;
    const plan = priced(cycle, round, module.settle(round.amount_micro, module.roll.bet(record), outcome, config));
    results.push(plan);
    // D4: sent as soon as the outcome is persisted; the win's balance_update follows
    svc.emitter.toSession(
      round.session_id,
      'round_result',
      module.roll.result(
        { roundId: round.id, cycleId: cycle.id, nonce: round.nonce, betId: round.bet_id, won: plan.won, payoutMicro: plan.net.toString() },
        outcome,
        record,
      ),
    );
  }
  return results;
}

// contract 3.1 RESULT -> SETTLED and 8.4. A losing bet is settled at once (no win call). A
// winning bet gets its winTransactionUuid and a pending win job in the same statement that
// marks the round settled, so a win is enqueued exactly once (unique transaction uuid) and
// the settle worker credits it; demo wins are credited to the demo balance (D8). The round
// update is fenced on RESULT and everything else follows only the rounds it moved, so
// running it twice books nothing twice. A cycle is settled by one statement, not one per
// round.


// what rolling and settling need of a cycle (clock.ts's ClockCycle has it): its id, its game,
// the payout rounding of its snapshot (D46), and its start: its bets', rounds' and held
// stakes' month (D36), named in every statement so that only that month's partitions are
// read. A round is priced by its game's module under the cycle's configuration (D39,
// cycle-config.ts).
export type PricedCycle = {
  id: string;
  gameCode: string;
  payoutRounding: PayoutRounding;
  createdAt: Date;
};

// a round moved to RESULT, priced: what round_result tells and settlement books
export type ResultRound = SettlementPlan;

// D39, contract 8.4: a round priced by its game's settlement, a win's payout booked as the
// cycle's payoutRounding says (D46); what round_result tells and the win call pays. A free
// bet's is its net, the payout less the stake (D42, 8.4): a won one with a net of 0 is still
// won, and gets its win call with "0" (contract 2.7).
const priced = (cycle: PricedCycle, round: SettlingRound, result: Settlement): SettlementPlan => ({
  round,
  won: result.won,
  net: result.won ? bookedPayout(roundedPayout(result.payoutMicro, cycle.payoutRounding, round.currency), round.amount_micro, round.is_free) : 0n,
  ...(result.jackpotContributionMicro !== undefined ? { jackpotContributionMicro: result.jackpotContributionMicro } : {}),
});

// D40: cents of a multiplier as its text, "2.37" (null for null)
const centsSql = (column: string) => `((${column}) / 100)::text || '.' || lpad(((${column}) % 100)::text, 2, '0')`;

// kind: 'lost' (settled, no win call), 'demo_win' (settled, credited to the demo balance),
// 'win' (a win job: the bet settles when the wallet confirms)
const SETTLE = statement(
  'settle_apply',
  `WITH input AS (
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::bigint[], $7::uuid[], $8::uuid[], $9::text[])
       AS u(round_id, bet_id, session_id, operator_id, kind, payout_micro, win_transaction_uuid, job_id, payload)
   ),
   settled AS (
     UPDATE rounds r SET state = 'SETTLED', settled = true, settled_at = $10
     FROM input WHERE r.id = input.round_id AND r.cycle_created_at = $11 AND r.state = 'RESULT'
     RETURNING r.id, r.game_code, r.currency, r.outcome_side, r.outcome_sum, r.demo, r.crash_cents, r.cash_out_cents
   ),
   done AS (SELECT input.* FROM input JOIN settled ON settled.id = input.round_id),
   -- D31: round.settled (contract 6.2, the fields GET /v1/rounds gives) for real-money rounds
   events AS (
     ${outboxInsertSql(
       'round.settled',
       `(SELECT done.operator_id, $10::timestamptz AS occurred_at,
                jsonb_build_object('roundId', settled.id, 'sessionId', done.session_id, 'gameCode', settled.game_code,
                  'currency', settled.currency, 'totalBetsMicro', (CASE WHEN b.is_free THEN 0 ELSE b.amount_micro END)::text,
                  'totalPayoutsMicro', done.payout_micro::text, 'settledAt', ${isoSql('$10::timestamptz')},
                  'rngVersion', $12::text, 'outcomeSide', settled.outcome_side, 'outcomeSum', settled.outcome_sum)
                || CASE WHEN settled.crash_cents IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object('crashMultiplier', ${centsSql('settled.crash_cents')},
                                           'cashOutMultiplier', ${centsSql('settled.cash_out_cents')}) END AS data
         FROM done JOIN settled ON settled.id = done.round_id JOIN bets b ON b.id = done.bet_id AND b.cycle_created_at = $11
         WHERE NOT settled.demo)`,
     )}
   ),
   closed AS (
     UPDATE bets b SET status = 'SETTLED', payout_micro = done.payout_micro, settled_at = $10
     FROM done WHERE b.id = done.bet_id AND b.cycle_created_at = $11 AND done.kind <> 'win' AND b.status = 'ACCEPTED'
   ),
   resolved AS (
     UPDATE pending_round_bets p SET state = 'RESOLVED', resolved_at = $10
     FROM done WHERE p.bet_id = done.bet_id AND p.cycle_created_at = $11 AND done.kind <> 'win' AND p.state = 'HELD'
   ),
   demo AS (
     UPDATE sessions s SET demo_balance_micro = s.demo_balance_micro + done.payout_micro
     FROM done WHERE s.id = done.session_id AND done.kind = 'demo_win'
     RETURNING s.id, s.demo_balance_micro, s.currency
   ),
   winning AS (
     UPDATE bets b SET win_transaction_uuid = done.win_transaction_uuid, payout_micro = done.payout_micro
     FROM done WHERE b.id = done.bet_id AND b.cycle_created_at = $11 AND done.kind = 'win'
   ),
   jobs AS (
     INSERT INTO wallet_jobs (id, operator_id, session_id, endpoint, purpose, bet_id, bet_cycle_created_at, transaction_uuid, next_attempt_at,
                              payload)
     SELECT job_id, operator_id, session_id, 'win', 'win', bet_id, $11, win_transaction_uuid, $10, payload::jsonb FROM done WHERE kind = 'win'
   )
   SELECT done.round_id, done.kind, done.job_id, demo.demo_balance_micro, demo.currency
   FROM done LEFT JOIN demo ON demo.id = done.session_id AND done.kind = 'demo_win'`,
);

type Settled = { round_id: string; kind: 'lost' | 'demo_win' | 'win'; job_id: string | null; demo_balance_micro: bigint | null; currency: string | null };

// a round to settle and what it pays: its payout when won (net, contract 8.4; D40), else 0
type SettlementPlan = { round: SettlingRound; won: boolean; net: bigint; jackpotContributionMicro?: bigint };
type SettlingRound = {
  id: string;
  operator_id: string;
  session_id: string;
  demo: boolean;
  bet_id: string;
  amount_micro: bigint;
  player_ref: string;
  currency: string;
  game_code: string;
  bet_transaction_uuid: string;
  // D42: a free bet (its win is net of the stake)
  is_free: boolean;
};

// `rolled`: the rounds the caller just moved to RESULT, when it knows they are all the
// cycle's rounds in RESULT (the tick that rolled the cycle); otherwise they are read. A flight
// game's rounds (D40) are read and priced as the flight decided them (flight rounds below).
// `roundId`: of a flight, that round only (its cash-out's settlement).
export async function settleRounds(svc: ServiceContext, cycle: PricedCycle, rolled?: ResultRound[], roundId?: string): Promise<void> {
  const module = moduleOf(cycle.gameCode, `cycle ${cycle.id}`);
  // a tick that rolled the cycle priced its rounds as it rolled them
  const plans = !module.flight && rolled ? rolled : await resultPlans(svc, cycle, module, roundId);
  await applySettlement(svc, cycle, plans, module.rngVersion);
}

// The cycle's rounds in RESULT (or that one round, `roundId`), each priced by its game's
// module from its record (D39): its bet's parameters, its outcome, and what its player did (a
// flight's cash-out, D40). For a rolled game, the rounds an earlier attempt rolled: a tick
// resumed in RESULT, and recovery (P12).
const RESULT_ROUNDS = statement(
  'settle_rounds',
  `SELECT r.id, r.operator_id, r.session_id, r.demo, b.id AS bet_id, b.amount_micro, b.player_ref, b.currency, b.game_code,
          b.bet_transaction_uuid, ${RECORD_COLUMNS}
   FROM rounds r JOIN bets b ON b.id = r.bet_id AND b.cycle_created_at = $2
   WHERE r.cycle_id = $1 AND r.cycle_created_at = $2 AND NOT r.settled AND r.state = 'RESULT' AND ($3::uuid IS NULL OR r.id = $3)`,
);

async function resultPlans(svc: ServiceContext, cycle: PricedCycle, module: AnyGameModule, roundId?: string): Promise<SettlementPlan[]> {
  const rounds = await svc.sql.query<SettlingRound & RecordRow>(RESULT_ROUNDS, [cycle.id, cycle.createdAt, roundId ?? null]);
  if (rounds.length === 0) return [];
  const config = await cycleConfigOf(svc, cycle.id);
  return rounds.map((round) => priced(cycle, round, module.rounds.settlement(round.amount_micro, roundRecord(round, round), config)));
}

// The settlement statement for the planned rounds (see SETTLE), their win jobs queued, and a
// demo win's balance told.
async function applySettlement(svc: ServiceContext, cycle: PricedCycle, planned: SettlementPlan[], rngVersion: string): Promise<void> {
  if (planned.length === 0) return;
  const plans = planned.map(({ round, won, net, jackpotContributionMicro }) => {
    const kind = !won ? 'lost' : round.demo ? 'demo_win' : 'win';
    const winTransactionUuid = kind === 'win' ? randomUUID() : null;
    return {
      round,
      kind,
      net,
      winTransactionUuid,
      jobId: kind === 'win' ? randomUUID() : null,
      // the win job's payload: the body of its /wallet/win call (contract 2.7)
      payload:
        winTransactionUuid !== null
          ? JSON.stringify(
              winRequest({
                operatorId: round.operator_id,
                playerRef: round.player_ref,
                currency: round.currency,
                gameCode: round.game_code,
                winTransactionUuid,
                betTransactionUuid: round.bet_transaction_uuid,
                amountMicro: net.toString(),
                roundId: round.id,
                ...(jackpotContributionMicro !== undefined ? { jackpotContributionMicro: jackpotContributionMicro.toString() } : {}),
              }),
            )
          : null,
    };
  });
  const settled = await svc.sql.query<Settled>(SETTLE, [
    plans.map((p) => p.round.id),
    plans.map((p) => p.round.bet_id),
    plans.map((p) => p.round.session_id),
    plans.map((p) => p.round.operator_id),
    plans.map((p) => p.kind),
    plans.map((p) => p.net),
    plans.map((p) => p.winTransactionUuid),
    plans.map((p) => p.jobId),
    plans.map((p) => p.payload),
    svc.now(),
    cycle.createdAt,
    rngVersion,
  ]);
  await enqueueWalletJobs(
    svc,
    'win',
    settled.flatMap((row) => (row.kind === 'win' ? [row.job_id!] : [])),
  );
  const sessionOf = new Map(planned.map(({ round }) => [round.id, round.session_id]));
  for (const row of settled) {
    if (row.kind !== 'demo_win' || row.demo_balance_micro === null) continue;
    svc.emitter.toSession(sessionOf.get(row.round_id)!, 'balance_update', { balanceMicro: row.demo_balance_micro.toString(), currency: row.currency });
  }
}
