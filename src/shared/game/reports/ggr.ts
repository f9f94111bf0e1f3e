import { Prisma, type Db } from '../../platform/db/client.js';
import { FINISHES, finishedWithin, type Finish, type TimeRange } from './finished-rounds.js';

// GET /v1/reports/ggr (D10): per (gameCode, currency), over the finished non-demo rounds of
// the range, the same rounds GET /v1/rounds lists for it.
// - rounds: settled and voided rounds; voidedRounds: the voided ones among them.
// - bets, stakesMicro, payoutsMicro: the bets of settled rounds only. A voided round's stake
//   was refunded (contract 3.1), so it contributes 0 to stakes and payouts here; D18's
//   "a voided round reports totalBetsMicro = its stake" is the listing's per-round figure.
// - a free bet's stake counts 0: no stake was debited (contract 8.4); its payout counts.
// - ggrMicro = stakesMicro - payoutsMicro, negative when the players won more.
// - sandbox (D35): rows of sandbox sessions' rounds are apart from the others, so that test
//   play never mixes with real figures.
// Sums are exact (numeric) and leave Postgres as text.

export type GgrRow = {
  gameCode: string;
  currency: string;
  rounds: number;
  bets: number;
  stakesMicro: string;
  payoutsMicro: string;
  ggrMicro: string;
  voidedRounds: number;
  sandbox: boolean;
};

type Aggregate = {
  gameCode: string;
  currency: string;
  rounds: bigint;
  bets: bigint;
  stakes: string;
  payouts: string;
  ggr: string;
  voided: bigint;
  sandbox: boolean;
};

// D41: the operator's jackpot pools as they stand, beside the range's figures (a jackpot paid
// is in its round's payout above): what was put in (seeds, contributions), paid and is left
export type JackpotRow = {
  currency: string;
  poolMicro: string;
  seedMicro: string;
  seededMicro: string;
  contributedMicro: string;
  paidMicro: string;
  hits: number;
  lastHitAt: string | null;
};

export async function jackpotReport(db: Db, operatorId: string): Promise<JackpotRow[]> {
  const pools = await db.jackpotPool.findMany({ where: { operatorId }, orderBy: { currency: 'asc' } });
  return pools.map((pool) => ({
    currency: pool.currency,
    poolMicro: pool.poolMicro.toString(),
    seedMicro: pool.seedMicro.toString(),
    seededMicro: pool.seededMicro.toString(),
    contributedMicro: pool.contributedMicro.toString(),
    paidMicro: pool.paidMicro.toString(),
    hits: pool.hits,
    lastHitAt: pool.lastHitAt?.toISOString() ?? null,
  }));
}

export async function ggrReport(db: Db, operatorId: string, range: Required<TimeRange>): Promise<GgrRow[]> {
  const branch = (finish: Finish) => Prisma.sql`
    SELECT bet_id, session_id, game_code, currency, state FROM rounds WHERE ${finishedWithin(operatorId, range, finish)}`;
  const rows = await db.$queryRaw<Aggregate[]>`
    SELECT game_code AS "gameCode", currency, rounds, bets, stakes::text, payouts::text, (stakes - payouts)::text AS ggr, voided, sandbox
    FROM (
      SELECT f.game_code, f.currency, s.sandbox,
        count(*) AS rounds,
        count(*) FILTER (WHERE f.state = 'SETTLED') AS bets,
        coalesce(sum(CASE WHEN b.is_free THEN 0 ELSE b.amount_micro END) FILTER (WHERE f.state = 'SETTLED'), 0) AS stakes,
        coalesce(sum(coalesce(b.payout_micro, 0)) FILTER (WHERE f.state = 'SETTLED'), 0) AS payouts,
        count(*) FILTER (WHERE f.state = 'VOIDED') AS voided
      FROM (${Prisma.join(FINISHES.map(branch), ' UNION ALL ')}) AS f
      JOIN bets b ON b.id = f.bet_id
      JOIN sessions s ON s.id = f.session_id
      GROUP BY f.game_code, f.currency, s.sandbox
    ) AS totals
    ORDER BY game_code, currency, sandbox`;
  return rows.map((row) => ({
    gameCode: row.gameCode,
    currency: row.currency,
    rounds: Number(row.rounds),
    bets: Number(row.bets),
    stakesMicro: row.stakes,
    payoutsMicro: row.payouts,
    ggrMicro: row.ggr,
    voidedRounds: Number(row.voided),
    sandbox: row.sandbox,
  }));
}
