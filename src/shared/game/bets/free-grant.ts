import { statement } from '../../platform/db/sql.js';
import { GRANT_PLAYED } from '../freebets/usable.js';

// D42: a free-bet grant as a placement reads it, under its row's lock, and whether the bet's
// session may spend it now: a paid game's free bet (place.ts) and an instant game's free play
// (plays/place.ts) alike.

// D42: the lock a cancellation takes on the grant's row (campaigns.ts), so that a grant's
// rounds bound its live bets across every node; a second statement then reads the grant,
// its campaign and its live bets under a fresh snapshot, after any holder of the lock committed
export const LOCK_GRANT = statement('free_bet_lock', `SELECT id FROM free_bet_grants WHERE id = $1 FOR UPDATE`);
export const GRANT_FACTS = statement(
  'free_bet_grant',
  `SELECT c.operator_id, g.player_ref, c.game_code, c.currency, c.campaign_ref, c.stake_micro, c.feature_buy, c.state, c.valid_from, c.expires_at,
          g.rounds - g.cancelled - ${GRANT_PLAYED} AS remaining
   FROM free_bet_grants g JOIN free_bet_campaigns c ON c.id = g.campaign_id
   WHERE g.id = $1`,
);

export type GrantFacts = {
  operator_id: string;
  player_ref: string;
  game_code: string;
  currency: string;
  campaign_ref: string;
  stake_micro: bigint;
  // D42: an instant game's campaign may give bought features
  feature_buy: boolean;
  state: 'ACTIVE' | 'CANCELLED' | 'FINISHED';
  valid_from: Date;
  expires_at: Date;
  remaining: number;
};

// the grant is the session's own (its operator, player, game and currency; never a demo
// session's), its campaign active and within its window, with a round left
export const grantUsable = (grant: GrantFacts, fact: { mode: 'REAL' | 'DEMO'; operator_id: string; player_ref: string; game_code: string; currency: string }, now: Date): boolean =>
  fact.mode === 'REAL' &&
  grant.operator_id === fact.operator_id &&
  grant.player_ref === fact.player_ref &&
  grant.game_code === fact.game_code &&
  grant.currency === fact.currency &&
  grant.state === 'ACTIVE' &&
  grant.valid_from <= now &&
  now < grant.expires_at &&
  grant.remaining > 0;
