import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import { binds, profileView, sessionProfile, type JurisdictionFacts, type SessionProfile } from '../../domain/jurisdictions.js';
import type { PlayerPosition } from '../../domain/player-channel.js';

// A session's jurisdiction profile (D44) at its launch, and what the page shows of it: the
// time the player has played, their net position, and the reality check.

export type LaunchedProfile = { profile: SessionProfile; binds: boolean; playStartedAt: Date; realityCheckDueAt: Date | null };

// The player's play under a reality check goes on across sessions: a session launched while
// the player's previous one (at this operator, under the same profile) is live or ended less
// than the check's interval ago carries on its start and its next check, so relaunching the
// game neither restarts the clock nor skips a check that is due
const PLAY_GOING_ON = statement(
  'jurisdiction_play_going_on',
  `SELECT COALESCE(play_started_at, created_at) AS started_at, reality_check_due_at
   FROM sessions
   WHERE operator_id = $1 AND player_ref = $2 AND reality_check_due_at IS NOT NULL AND jurisdiction_profile->>'profile' = $3
     AND COALESCE(terminated_at, expires_at) > $4
   ORDER BY created_at DESC
   LIMIT 1`,
);

export async function launchedProfile(
  svc: Pick<ServiceContext, 'sql'>,
  launch: { operatorId: string; playerRef: string; jurisdiction: string; currency: string; overrides: unknown },
  now: Date,
): Promise<LaunchedProfile> {
  const profile = sessionProfile(launch.jurisdiction, launch.currency, launch.overrides);
  const minutes = profile.realityCheckMinutes;
  if (minutes === null) return { profile, binds: binds(profile), playStartedAt: now, realityCheckDueAt: null };
  const interval = minutes * 60_000;
  const [going] = await svc.sql.query<{ started_at: Date; reality_check_due_at: Date }>(PLAY_GOING_ON, [
    launch.operatorId,
    launch.playerRef,
    profile.profile,
    new Date(now.getTime() - interval),
  ]);
  return going
    ? { profile, binds: true, playStartedAt: going.started_at, realityCheckDueAt: going.reality_check_due_at }
    : { profile, binds: true, playStartedAt: now, realityCheckDueAt: new Date(now.getTime() + interval) };
}

// The player's net position since their play began (D44): what their bets won less what they
// staked, in the session's currency, over the bets of the sessions of this play (the session,
// and those a relaunch carried the play on from: same player, currency, mode and start). A bet
// refused or voided moved nothing; a bet counts its stake once accepted and its payout once
// settled (the wallet confirmed it). A free bet stakes nothing of the player's and wins what its
// win call credits, max(payout - stake, 0), which is what its payout_micro books (D42). The
// sessions are read by their index (operator, player, currency) and their bets by session.
const POSITION = statement(
  'jurisdiction_position',
  `SELECT s.jurisdiction_profile AS profile, COALESCE(s.play_started_at, s.created_at) AS started_at, s.reality_check_due_at,
          COALESCE((
            SELECT sum(CASE WHEN b.status = 'SETTLED' THEN COALESCE(b.payout_micro, 0) ELSE 0 END
                       - CASE WHEN b.status IN ('ACCEPTED', 'SETTLED') AND NOT b.is_free THEN b.amount_micro ELSE 0 END)
            FROM sessions p JOIN bets b ON b.session_id = p.id AND b.status <> 'REJECTED'
            WHERE p.operator_id = s.operator_id AND p.player_ref = s.player_ref AND p.currency = s.currency AND p.mode = s.mode
              AND (p.id = s.id OR p.play_started_at = s.play_started_at)
          ), 0)::text AS net_micro
   FROM sessions s WHERE s.id = $1`,
);

type PositionRow = { profile: SessionProfile; started_at: Date; reality_check_due_at: Date | null; net_micro: string };

const positionOf = (row: PositionRow, now: Date): PlayerPosition => ({
  elapsedMs: Math.max(0, now.getTime() - row.started_at.getTime()),
  netPositionMicro: row.net_micro,
  realityCheckInMs: row.reality_check_due_at === null ? null : row.reality_check_due_at.getTime() - now.getTime(),
});

// what `connected` shows of the profile (D44): its name, its rules, and where the player stands
export async function jurisdictionView(svc: Pick<ServiceContext, 'sql' | 'now'>, sessionId: string, code: string) {
  const [row] = await svc.sql.query<PositionRow>(POSITION, [sessionId]);
  return row ? { ...profileView(code, row.profile), ...positionOf(row, svc.now()) } : null;
}

export async function playerPosition(svc: Pick<ServiceContext, 'sql' | 'now'>, sessionId: string): Promise<PlayerPosition | null> {
  const [row] = await svc.sql.query<PositionRow>(POSITION, [sessionId]);
  return row ? positionOf(row, svc.now()) : null;
}

// D44: the player acknowledged the reality check. One that is due moves to an interval from
// now; one not yet due is left where it is (an acknowledgement cannot postpone a check), and
// a session without one has none. The session's other live sessions under the same play see
// the same due time only when they are relaunched; each session keeps its own.
const ACKNOWLEDGE = statement(
  'jurisdiction_reality_check_ack',
  `UPDATE sessions
   SET reality_check_due_at = $2::timestamptz + make_interval(mins => (jurisdiction_profile->>'realityCheckMinutes')::int)
   WHERE id = $1 AND reality_check_due_at IS NOT NULL AND reality_check_due_at <= $2`,
);

export async function acknowledgeRealityCheck(svc: Pick<ServiceContext, 'sql' | 'now'>, sessionId: string): Promise<PlayerPosition | null> {
  await svc.sql.query(ACKNOWLEDGE, [sessionId, svc.now()]);
  return playerPosition(svc, sessionId);
}

// D44: what placement reads of a session's profile (`s`: the session's alias), and the facts
// the refusals take (jurisdictions.ts); a session not found reads as binding nothing
export const JURISDICTION_FACTS_SQL = `COALESCE((s.jurisdiction_profile->>'minRoundMs')::int, 0) AS min_round_ms,
          (s.jurisdiction_profile->>'maxStakeMicro')::bigint AS max_stake_micro, s.reality_check_due_at, s.last_play_at`;

export type JurisdictionColumns = { min_round_ms: number; max_stake_micro: bigint | null; reality_check_due_at: Date | null; last_play_at: Date | null };

export const jurisdictionFacts = (row: JurisdictionColumns, minRoundMs = row.min_round_ms): JurisdictionFacts => ({
  realityCheckDueAt: row.reality_check_due_at,
  lastBetAt: row.last_play_at,
  minRoundMs,
  maxStakeMicro: row.max_stake_micro,
});
