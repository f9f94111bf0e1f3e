import { isMicroAmount } from '../../domain/money.js';
import { statement, type Queryable } from '../../platform/db/sql.js';
import type { Prisma } from '../../platform/db/client.js';
import { openServerSeed } from '../fairness/seed-vault.js';
import { seedRevealed } from '../fairness/round-proof.js';
import { BET_REJECTED } from './round-view.js';
import { moduleOfRound, roundRecord } from '../rounds/round-record.js';
import { profileView } from '../../domain/jurisdictions.js';
import type { BalanceGap, RecalledBalance, RecalledRound } from '../../domain/player-channel.js';

// Game recall (D33): a round as the player lived it, for the recall page an operator's
// support agent opens (/replay/{roundId}) and for the history of the player's own page (its
// session's last rounds). Money leaves as MicroAmount strings (D18); the page formats it
// (D38).
//
// The balances come from the wallet's answers as received (wallet_calls.response_body):
// the debit's answer is the balance after the stake left, so the balance before is that
// plus the stake; after the round it is the win's answer for a won round, the debit's for a
// lost one and the rollback's for a voided one. The service never computes a balance of its
// own (contract 1): where no answer says it, the view says why instead.

export const RECENT_ROUNDS = 10;

// the record's shape is the player channel's (recent_rounds, D33): one map for both
export type { BalanceGap, RecalledBalance, RecalledRound } from '../../domain/player-channel.js';

type CallAnswer = { endpoint: string; status: string | null; body: string | null };

type RecallRow = {
  round_id: string;
  cycle_id: string;
  game_code: string;
  currency: string;
  player_ref: string;
  side: string | null;
  auto_cash_out_cents: bigint | null;
  feature_buy: boolean;
  amount_micro: bigint;
  is_free: boolean;
  bonus_ref: string | null;
  payout_micro: bigint | null;
  bet_status: string;
  reject_reason: string | null;
  placed_at: Date;
  mode: 'REAL' | 'DEMO';
  expires_at: Date;
  jurisdiction: string;
  jurisdiction_profile: Prisma.JsonValue;
  state: RecalledRound['state'] | null;
  nonce: number | null;
  outcome_side: string | null;
  outcome_sum: number | null;
  dice_values: number[] | null;
  low_weight: bigint | null;
  high_weight: bigint | null;
  crash_cents: bigint | null;
  cash_out_cents: bigint | null;
  cash_out_ms: number | null;
  outcome: Prisma.JsonValue;
  commission_micro: bigint;
  settled_at: Date | null;
  voided_at: Date | null;
  void_reason: string | null;
  seed_id: string | null;
  server_seed_hash: string | null;
  client_seed: string | null;
  retired_at: Date | null;
  encrypted_server_seed: Buffer | null;
  calls: CallAnswer[];
  win_done: boolean | null;
  rollback_done: boolean | null;
};

// One bet with its session, its round (none for a bet refused at the wallet, D22), its seed,
// the answers to its debit, win and rollback calls in the order they were made, and whether
// its win and rollback jobs are done, and a free bet's campaignRef (D42: its debit's bonusRef).
const RECALL_COLUMNS = `
  b.round_id, b.cycle_id, b.game_code, b.currency, b.player_ref, b.side, b.auto_cash_out_cents, b.feature_buy, b.amount_micro, b.is_free, b.payout_micro,
  b.status AS bet_status, b.reject_reason, b.created_at AS placed_at, s.mode, s.expires_at, s.jurisdiction, s.jurisdiction_profile,
  r.state, r.nonce, r.outcome_side, r.outcome_sum, r.dice_values, r.low_weight, r.high_weight,
  r.crash_cents, r.cash_out_cents, r.cash_out_ms, r.outcome, c.commission_micro,
  r.settled_at, r.voided_at, r.void_reason,
  sd.id AS seed_id, sd.server_seed_hash, sd.client_seed, sd.retired_at, sd.encrypted_server_seed,
  (SELECT COALESCE(json_agg(json_build_object('endpoint', w.endpoint, 'status', w.status, 'body', w.response_body)
                            ORDER BY w.created_at, w.attempt), '[]'::json)
   FROM wallet_calls w
   WHERE w.transaction_uuid IN (b.bet_transaction_uuid, b.win_transaction_uuid, b.rollback_transaction_uuid)
     AND w.operator_id = b.operator_id) AS calls,
  (SELECT j.completed_at IS NOT NULL FROM wallet_jobs j WHERE j.transaction_uuid = b.win_transaction_uuid) AS win_done,
  (SELECT j.completed_at IS NOT NULL FROM wallet_jobs j WHERE j.transaction_uuid = b.rollback_transaction_uuid) AS rollback_done,
  (SELECT fc.campaign_ref FROM free_bet_grants g JOIN free_bet_campaigns fc ON fc.id = g.campaign_id WHERE g.id = b.free_bet_grant_id) AS bonus_ref`;

// a round of the operator, or the roundId of its bet that the wallet refused or left
// uncertain (D22: such a roundId went out with the debit; one whose debit was never sent is
// unknown to the wallet and stays unknown here)
const RECALL_ROUND = statement(
  'recall_round',
  `SELECT ${RECALL_COLUMNS}
   FROM bets b
   JOIN sessions s ON s.id = b.session_id
   JOIN cycles c ON c.id = b.cycle_id
   LEFT JOIN rounds r ON r.id = b.round_id
   LEFT JOIN seeds sd ON sd.id = r.seed_id
   WHERE b.round_id = $1 AND b.operator_id = $2
     AND (r.id IS NOT NULL
          OR (b.status = 'REJECTED' AND EXISTS (
                SELECT 1 FROM wallet_calls w
                WHERE w.transaction_uuid = b.bet_transaction_uuid AND w.endpoint = 'bet' AND w.operator_id = b.operator_id)))`,
);

// the session's last rounds, newest first (its refused bets never became rounds)
const SESSION_ROUNDS = statement(
  'recall_session_rounds',
  `SELECT ${RECALL_COLUMNS}
   FROM rounds r
   JOIN bets b ON b.id = r.bet_id
   JOIN sessions s ON s.id = r.session_id
   JOIN cycles c ON c.id = r.cycle_id
   JOIN seeds sd ON sd.id = r.seed_id
   WHERE r.session_id = $1
   ORDER BY r.created_at DESC, r.id DESC
   LIMIT $2`,
);

// the service context's parts a recall reads with
export type RecallReader = { sql: Queryable; now: () => Date; config: { masterKey: Buffer } };

export async function recallRound(reader: RecallReader, operatorId: string, roundId: string): Promise<RecalledRound | undefined> {
  const [row] = await reader.sql.query<RecallRow>(RECALL_ROUND, [roundId, operatorId]);
  return row && recalled(reader, row);
}

export async function recentRounds(reader: RecallReader, sessionId: string, limit = RECENT_ROUNDS): Promise<RecalledRound[]> {
  const rows = await reader.sql.query<RecallRow>(SESSION_ROUNDS, [sessionId, limit]);
  return rows.map((row) => recalled(reader, row));
}

// a round still moving towards its outcome (contract 3.1)
export const isLive = (round: Pick<RecalledRound, 'state'>) => round.state !== 'SETTLED' && round.state !== 'VOIDED';

// the round as its game's module reads it (D39); a refused bet's has no play
const recordOf = (row: RecallRow, state: RecalledRound['state']) =>
  roundRecord(
    {
      state,
      outcomeSide: row.outcome_side,
      outcomeSum: row.outcome_sum,
      diceValues: row.dice_values ?? [],
      lowWeight: row.low_weight ?? 0n,
      highWeight: row.high_weight ?? 0n,
      crashCents: row.crash_cents,
      cashOutCents: row.cash_out_cents,
      cashOutMs: row.cash_out_ms,
      outcome: row.outcome,
    },
    { side: row.side, autoCashOutCents: row.auto_cash_out_cents, featureBuy: row.feature_buy },
  );

function recalled(reader: RecallReader, row: RecallRow): RecalledRound {
  const rejected = row.state === null;
  const state = row.state ?? 'VOIDED';
  const module = moduleOfRound(row.game_code, row.round_id);
  const record = recordOf(row, state);
  const outcome = row.outcome_side !== null && row.outcome_sum !== null ? { side: row.outcome_side, face: row.dice_values?.[0] ?? row.outcome_sum } : null;
  // D39: the game says whether the bet won (dice: its side came; crash: it was cashed out, D40)
  const won = module.rounds.won(record);
  const balances = balancesOf({
    demo: row.mode === 'DEMO',
    state,
    rejected,
    won,
    betSettled: row.bet_status === 'SETTLED',
    stakeMicro: row.is_free ? 0n : row.amount_micro,
    calls: row.calls,
    rollbackDone: row.rollback_done,
  });
  return {
    roundId: row.round_id,
    cycleId: row.cycle_id,
    gameCode: row.game_code,
    currency: row.currency,
    playerRef: row.player_ref,
    placedAt: row.placed_at.toISOString(),
    finishedAt: (row.settled_at ?? row.voided_at)?.toISOString() ?? null,
    state,
    voidReason: rejected ? BET_REJECTED : row.void_reason,
    rejectReason: rejected ? row.reject_reason : null,
    side: row.side,
    amountMicro: row.amount_micro.toString(),
    isFree: row.is_free,
    bonusRef: row.bonus_ref,
    outcome,
    // the game's own fields (crash: the auto cash-out and the flight, D40; dice: none)
    ...module.rounds.betParams(record),
    ...module.rounds.view(record),
    won,
    payoutMicro: won === null ? null : won ? (row.payout_micro?.toString() ?? null) : '0',
    ...balances,
    // D44: the profile the bet was placed under
    jurisdiction: profileView(row.jurisdiction, row.jurisdiction_profile),
    proof: proofOf(reader, row, module.rounds.recorded(record), module.rounds.checkTerms(row.commission_micro)),
  };
}

// D2, D5: the seed is shown once revealable, by the proof route's rule (round-proof.ts), for a
// round with an outcome; `terms`, what the game's check needs beyond the weights (D40's edge)
function proofOf(reader: RecallReader, row: RecallRow, recorded: boolean, terms: { commissionMicro?: string }): RecalledRound['proof'] {
  if (row.seed_id === null || row.nonce === null || row.server_seed_hash === null || row.client_seed === null) return null;
  const revealed = recorded && seedRevealed(row.retired_at, row.expires_at, reader.now());
  return {
    serverSeedHash: row.server_seed_hash,
    clientSeed: row.client_seed,
    nonce: row.nonce,
    lowWeight: String(row.low_weight),
    highWeight: String(row.high_weight),
    ...terms,
    serverSeed: revealed ? openServerSeed(reader.config.masterKey, row.seed_id, row.encrypted_server_seed!) : null,
    revealableAfter: revealed || !recorded ? null : row.expires_at.toISOString(),
  };
}

// statuses whose answer states the wallet's balance: success (contract 7.1), a clean refusal
// of a debit (nothing moved), a win or rollback the wallet did not know (taken as settled)
const STATING = new Set(['RS_OK', 'RS_ERROR_DUPLICATE_TRANSACTION', 'RS_ERROR_NOT_ENOUGH_MONEY', 'RS_ERROR_LIMIT_REACHED', 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST']);

// The balance the last stating answer of an endpoint's calls carried: the wallet's word as
// received; an answer with a balanceMicro that is not a MicroAmount states none (D24).
export function answeredBalance(calls: CallAnswer[], endpoint: string): RecalledBalance {
  const stating = calls.filter((call) => call.endpoint === endpoint && call.status !== null && STATING.has(call.status)).at(-1);
  if (!stating) return { micro: null, gap: 'no_answer' };
  const balance = balanceField(stating.body);
  return balance === null ? { micro: null, gap: 'not_reported' } : { micro: balance, gap: null };
}

function balanceField(body: string | null): string | null {
  if (body === null) return null;
  try {
    const parsed: unknown = JSON.parse(body);
    const value = parsed && typeof parsed === 'object' ? (parsed as { balanceMicro?: unknown }).balanceMicro : undefined;
    return isMicroAmount(value) ? BigInt(value).toString() : null;
  } catch {
    return null;
  }
}

export type BalanceFacts = {
  demo: boolean;
  state: RecalledRound['state'];
  // D22: the bet was refused or left uncertain at the wallet: no round, no debit taken
  rejected: boolean;
  // null: no outcome yet, or voided
  won: boolean | null;
  // the bet is SETTLED: for a won round, its win is confirmed
  betSettled: boolean;
  // what the debit took (a free bet takes nothing, contract 8.4)
  stakeMicro: bigint;
  calls: CallAnswer[];
  rollbackDone: boolean | null;
};

export function balancesOf(facts: BalanceFacts): { balanceBefore: RecalledBalance; balanceAfter: RecalledBalance } {
  if (facts.demo) return { balanceBefore: gap('demo'), balanceAfter: gap('demo') };
  const debit = answeredBalance(facts.calls, 'bet');
  if (facts.rejected) {
    // a clean refusal moved nothing: before and after are what it stated; an uncertain
    // debit was reversed: after is the rollback's word
    const clean = facts.rollbackDone === null;
    const after = clean ? debit : facts.rollbackDone ? answeredBalance(facts.calls, 'rollback') : gap('pending');
    return { balanceBefore: debit, balanceAfter: after };
  }
  const before: RecalledBalance = debit.micro === null ? debit : { micro: (BigInt(debit.micro) + facts.stakeMicro).toString(), gap: null };
  let after: RecalledBalance;
  if (facts.state === 'VOIDED') {
    after = facts.rollbackDone === false ? gap('pending') : answeredBalance(facts.calls, 'rollback');
  } else if (facts.won === null) {
    after = gap('in_play');
  } else if (facts.won) {
    after = facts.betSettled ? answeredBalance(facts.calls, 'win') : gap('pending');
  } else {
    // a lost round moves no more money once its outcome is known
    after = debit;
  }
  return { balanceBefore: before, balanceAfter: after };
}

const gap = (why: BalanceGap): RecalledBalance => ({ micro: null, gap: why });
