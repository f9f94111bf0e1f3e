import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import type { FreeBet } from '../../domain/player-channel.js';

// D42: what a grant `g` has played, never stored: the count of its live bets (PENDING,
// ACCEPTED or SETTLED), so that a refused or voided free bet gives its round back by
// construction. Every read of a grant's rounds counts them so.
export const LIVE_BET_STATUSES = `('PENDING', 'ACCEPTED', 'SETTLED')`;
export const GRANT_PLAYED = `(SELECT count(*) FROM bets b WHERE b.free_bet_grant_id = g.id AND b.status IN ${LIVE_BET_STATUSES})::int`;

// D42: the free-bet grants a session may spend now, as `connected` and `free_bets` show them:
// the session's operator, playerRef, game and currency, the campaign ACTIVE and within its
// window, with a round left (rounds - cancelled - played, played being the grant's live
// bets). A demo session has none. The soonest to expire first.
const USABLE = statement(
  'free_bets_usable',
  `SELECT * FROM (
     SELECT g.id, c.campaign_ref, c.stake_micro, c.feature_buy, c.expires_at,
            g.rounds - g.cancelled - ${GRANT_PLAYED} AS remaining
     FROM sessions s
     JOIN free_bet_grants g ON g.operator_id = s.operator_id AND g.player_ref = s.player_ref
     JOIN free_bet_campaigns c ON c.id = g.campaign_id AND c.game_code = s.game_code AND c.currency = s.currency
       AND c.state = 'ACTIVE' AND c.valid_from <= $2 AND c.expires_at > $2
     WHERE s.id = $1 AND s.mode = 'REAL'
   ) usable
   WHERE remaining > 0
   ORDER BY expires_at, id
   LIMIT 100`,
);

type UsableRow = { id: string; campaign_ref: string; stake_micro: bigint; feature_buy: boolean; expires_at: Date; remaining: number };

export async function usableFreeBets(svc: Pick<ServiceContext, 'sql' | 'now'>, sessionId: string): Promise<FreeBet[]> {
  const rows = await svc.sql.query<UsableRow>(USABLE, [sessionId, svc.now()]);
  return rows.map((row) => ({
    grantId: row.id,
    campaignRef: row.campaign_ref,
    stakeMicro: row.stake_micro.toString(),
    remaining: row.remaining,
    expiresAt: row.expires_at.toISOString(),
    // D42: an instant game's grant of bought features says so (and only then)
    ...(row.feature_buy ? { featureBuy: true } : {}),
  }));
}

// D42 `free_bets`: the session's grants after they changed (a free bet placed, refused or
// rolled back; a cancellation)
export async function tellFreeBets(svc: Pick<ServiceContext, 'sql' | 'now' | 'emitter'>, sessionId: string): Promise<void> {
  svc.emitter.toSession(sessionId, 'free_bets', { freeBets: await usableFreeBets(svc, sessionId) });
}

// D42: `free_bets` once to each session whose free bets were given back after their
// acknowledgement (rejected, voided: bets/debit.ts, rounds/voids.ts, recovery, wallet jobs),
// after the transaction that gave them back committed; the sessions of one sweep are told once
// each, whatever the number of their bets it gave back. The round is back whether or not the
// message goes out (a player learns it on the next connect): a failure is logged, never thrown
// into the money path that called.
export async function tellFreeBetSessions(svc: Pick<ServiceContext, 'sql' | 'now' | 'emitter' | 'logger'>, sessionIds: Iterable<string>): Promise<void> {
  for (const sessionId of new Set(sessionIds)) {
    await tellFreeBets(svc, sessionId).catch((err: unknown) => svc.logger.warn({ err: (err as Error).message, sessionId }, 'free_bets could not be sent'));
  }
}

// The live real-money sessions of a campaign's players in its game and currency: those a
// cancellation (DELETE /v1/freebets/{campaignId}) changes the grants of
const CAMPAIGN_SESSIONS = statement(
  'free_bets_campaign_sessions',
  `SELECT s.id
   FROM free_bet_campaigns c
   JOIN free_bet_grants g ON g.campaign_id = $1
   JOIN sessions s ON s.operator_id = $2 AND s.player_ref = g.player_ref AND s.currency = c.currency
   WHERE c.id = $1 AND c.operator_id = $2 AND s.game_code = c.game_code AND s.mode = 'REAL' AND s.state = 'ACTIVE' AND s.expires_at > $3`,
);

// D42: after a cancellation, `free_bets` to each live session of the campaign's players,
// wherever it is connected (the emitter reaches every node)
export async function tellCampaignSessions(svc: Pick<ServiceContext, 'sql' | 'now' | 'emitter'>, operatorId: string, campaignId: string): Promise<void> {
  const sessions = await svc.sql.query<{ id: string }>(CAMPAIGN_SESSIONS, [campaignId, operatorId, svc.now()]);
  for (const { id } of sessions) await tellFreeBets(svc, id);
}
