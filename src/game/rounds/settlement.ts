import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../../platform/context.js';
import { statement } from '../../platform/db/sql.js';
import { payout } from '../../domain/payout.js';
import { enqueueWalletJobs } from '../wallet-jobs/wallet-jobs.js';

// contract 3.1 RESULT -> SETTLED and 8.4. A losing bet is settled at once (no win call). A
// winning bet gets its winTransactionUuid and a pending win job in the same statement that
// marks the round settled, so a win is enqueued exactly once (unique transaction uuid) and
// the settle worker credits it; demo wins are credited to the demo balance (D8). The round
// update is fenced on RESULT and everything else follows only the rounds it moved, so
// running it twice books nothing twice. A cycle is settled by one statement, not one per
// round.

// `NOT settled` lets rounds_unsettled find the cycle's rounds (engine.ts, ROUNDS_ROLL)
const RESULT_ROUNDS = statement(
  'settle_rounds',
  `SELECT r.id, r.operator_id, r.session_id, r.outcome_side, r.demo, b.id AS bet_id, b.side, b.amount_micro, b.player_ref,
          b.currency, b.game_code, b.bet_transaction_uuid
   FROM rounds r JOIN bets b ON b.id = r.bet_id
   WHERE r.cycle_id = $1 AND NOT r.settled AND r.state = 'RESULT'`,
);

// what rolling and settling need of a cycle (engine.ts's ClockCycle has it): its id and the
// payout terms of its snapshot
export type PricedCycle = { id: string; payoutMultiplierScaled: bigint; commissionMicro: bigint };

export type ResultRound = {
  id: string;
  operator_id: string;
  session_id: string;
  outcome_side: string;
  demo: boolean;
  bet_id: string;
  side: string;
  amount_micro: bigint;
  player_ref: string;
  currency: string;
  game_code: string;
  bet_transaction_uuid: string;
};

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
     FROM input WHERE r.id = input.round_id AND r.state = 'RESULT'
     RETURNING r.id
   ),
   done AS (SELECT input.* FROM input JOIN settled ON settled.id = input.round_id),
   closed AS (
     UPDATE bets b SET status = 'SETTLED', payout_micro = done.payout_micro, settled_at = $10
     FROM done WHERE b.id = done.bet_id AND done.kind <> 'win' AND b.status = 'ACCEPTED'
   ),
   resolved AS (
     UPDATE pending_round_bets p SET state = 'RESOLVED', resolved_at = $10
     FROM done WHERE p.bet_id = done.bet_id AND done.kind <> 'win' AND p.state = 'HELD'
   ),
   demo AS (
     UPDATE sessions s SET demo_balance_micro = s.demo_balance_micro + done.payout_micro
     FROM done WHERE s.id = done.session_id AND done.kind = 'demo_win'
     RETURNING s.id, s.demo_balance_micro, s.currency
   ),
   winning AS (
     UPDATE bets b SET win_transaction_uuid = done.win_transaction_uuid, payout_micro = done.payout_micro
     FROM done WHERE b.id = done.bet_id AND done.kind = 'win'
   ),
   jobs AS (
     INSERT INTO wallet_jobs (id, operator_id, session_id, endpoint, purpose, bet_id, transaction_uuid, next_attempt_at, payload)
     SELECT job_id, operator_id, session_id, 'win', 'win', bet_id, win_transaction_uuid, $10, payload::jsonb FROM done WHERE kind = 'win'
   )
   SELECT done.round_id, done.kind, done.job_id, demo.demo_balance_micro, demo.currency
   FROM done LEFT JOIN demo ON demo.id = done.session_id AND done.kind = 'demo_win'`,
);

type Settled = { round_id: string; kind: 'lost' | 'demo_win' | 'win'; job_id: string | null; demo_balance_micro: bigint | null; currency: string | null };

// `rolled`: the rounds the caller just moved to RESULT, when it knows they are all the
// cycle's rounds in RESULT (the tick that rolled the cycle); otherwise they are read.
export async function settleRounds(
  svc: ServiceContext,
  cycle: PricedCycle,
  rolled?: ResultRound[],
): Promise<void> {
  const rounds = rolled ?? (await svc.sql.query<ResultRound>(RESULT_ROUNDS, [cycle.id]));
  if (rounds.length === 0) return;
  const plans = rounds.map((round) => {
    const won = round.side === round.outcome_side;
    const net = won
      ? payout({ stakeMicro: round.amount_micro, multiplierScaled: cycle.payoutMultiplierScaled, commissionMicro: cycle.commissionMicro }).netMicro
      : 0n;
    const kind = !won ? 'lost' : round.demo ? 'demo_win' : 'win';
    const winTransactionUuid = kind === 'win' ? randomUUID() : null;
    return {
      round,
      kind,
      net,
      winTransactionUuid,
      jobId: kind === 'win' ? randomUUID() : null,
      // contract 2.7
      payload:
        kind === 'win'
          ? JSON.stringify({
              operatorId: round.operator_id,
              playerRef: round.player_ref,
              currency: round.currency,
              gameCode: round.game_code,
              transactionUuid: winTransactionUuid,
              referenceTransactionUuid: round.bet_transaction_uuid,
              amountMicro: net.toString(),
              roundId: round.id,
            })
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
  ]);
  await enqueueWalletJobs(
    svc,
    'win',
    settled.flatMap((row) => (row.kind === 'win' ? [row.job_id!] : [])),
  );
  const sessionOf = new Map(rounds.map((round) => [round.id, round.session_id]));
  for (const row of settled) {
    if (row.kind !== 'demo_win' || row.demo_balance_micro === null) continue;
    svc.emitter.toSession(sessionOf.get(row.round_id)!, 'balance_update', { balanceMicro: row.demo_balance_micro.toString(), currency: row.currency });
  }
}
