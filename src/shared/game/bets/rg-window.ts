import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import { rgLimitTripped, type BetRejectReason, type RgState } from '../../domain/bet-rules.js';
import type { RgLimitTrippedData } from '../../domain/events.js';
import { outboxDedupeCte, outboxInsertSql } from '../../platform/outbox.js';

// Contract 8.3 and D14 at placement, for every kind of bet (a paid bet, a free bet, an instant
// play): the player's last 24 hours read with the session, the session's limits, and the
// session.rg_limit_tripped event a refusal reports (D31).

export const DAY_MS = 24 * 60 * 60 * 1000;

// D14: a session's player's stakes of the last 24 hours (from `since`), lost and wagered, for a
// session with a loss or wager limit (the session's row is `session`); SUM(bigint) is
// NUMERIC, read as text. Every placement's facts read them (a paid bet's, an instant play's).
export const rgWindowSql = (session: string, since: string) => `
     SELECT COALESCE(SUM(b.amount_micro) FILTER (WHERE b.status IN ('PENDING', 'ACCEPTED') OR (b.status = 'SETTLED' AND b.payout_micro = 0)), 0)::text AS lost,
            COALESCE(SUM(b.amount_micro) FILTER (WHERE b.status IN ('PENDING', 'ACCEPTED', 'SETTLED')), 0)::text AS wagered
     FROM bets b
     WHERE (${session}.daily_loss_micro IS NOT NULL OR ${session}.daily_wager_micro IS NOT NULL)
       AND b.operator_id = ${session}.operator_id AND b.player_ref = ${session}.player_ref AND b.currency = ${session}.currency
       AND NOT b.is_free AND b.created_at > ${since}
       -- D36: a bet's cycle began before the bet, by less than a cycle (windows of seconds),
       -- so the months before the window's are not read
       AND b.cycle_created_at > ${since}::timestamptz - interval '1 hour'`;

// what rgState reads of a placement's facts (SUM(bigint) is NUMERIC, read as text)
export type RgFacts = {
  daily_loss_micro: bigint | null;
  daily_wager_micro: bigint | null;
  session_time_seconds: number | null;
  created_at: Date;
  lost: string;
  wagered: string;
};

// 8.3: the session's limits and the player's last 24 hours, for a session with limits
export function rgState(fact: RgFacts): RgState | undefined {
  if (fact.daily_loss_micro === null && fact.daily_wager_micro === null && fact.session_time_seconds === null) return undefined;
  return {
    dailyLossMicro: fact.daily_loss_micro,
    dailyWagerMicro: fact.daily_wager_micro,
    sessionTimeSeconds: fact.session_time_seconds,
    sessionCreatedAt: fact.created_at,
    lostStakesMicro24h: BigInt(fact.lost),
    wageredMicro24h: BigInt(fact.wagered),
  };
}

// D31: session.rg_limit_tripped, once per session and limit (its dedupe key): the first bet
// a limit refuses is reported, before the refusal is answered. A refusal changes no row, so
// the event is its own statement. Real-money sessions only (D8).
const RG_TRIPS = statement(
  'placement_rg_trips',
  `WITH trips AS (
     SELECT u.operator_id, u.dedupe_key, u.data, $4::timestamptz AS occurred_at
     FROM unnest($1::text[], $2::text[], $3::jsonb[]) AS u(operator_id, dedupe_key, data)
   ),
   ${outboxDedupeCte('session.rg_limit_tripped', 'trips')}
   ${outboxInsertSql('session.rg_limit_tripped', 'trips', { dedupe: true })}`,
);

// what recordRgTrips reads of a placement's facts
export type TripFacts = RgFacts & { session_id: string | null; player_ref: string; operator_id: string; mode: 'REAL' | 'DEMO' };

export async function recordRgTrips(
  svc: Pick<ServiceContext, 'sql'>,
  placements: { amountMicro: bigint }[],
  facts: TripFacts[],
  verdicts: ({ ok: true } | { ok: false; reason: BetRejectReason })[],
  now: Date,
): Promise<void> {
  const trips = verdicts.flatMap((verdict, i) => {
    const fact = facts[i]!;
    const rg = rgState(fact);
    if (verdict.ok || verdict.reason !== 'rg_limit_reached' || fact.mode !== 'REAL' || !rg) return [];
    const limit = rgLimitTripped(rg, placements[i]!.amountMicro, now)!;
    const data: RgLimitTrippedData = {
      sessionId: fact.session_id!,
      playerRef: fact.player_ref,
      limit,
      ...(limit === 'sessionTime'
        ? { limitSeconds: fact.session_time_seconds! }
        : { limitMicro: (limit === 'dailyLoss' ? fact.daily_loss_micro! : fact.daily_wager_micro!).toString() }),
      trippedAt: now.toISOString(),
    };
    return [{ operatorId: fact.operator_id, dedupeKey: `rg_limit_tripped:${fact.session_id}:${limit}`, data: JSON.stringify(data) }];
  });
  if (trips.length === 0) return;
  await svc.sql.query(RG_TRIPS, [trips.map((t) => t.operatorId), trips.map((t) => t.dedupeKey), trips.map((t) => t.data), now]);
}
