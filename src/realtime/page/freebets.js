// @ts-check
// The session's free bets on the game page: the grants the service names in `connected` and
// in each `free_bets` message after a change, as a panel with one button per grant that plays
// it (drawn by panels.js renderFreeBets). The page never counts a grant down itself: every
// number shown is the service's, from its last message (a bet's ack carries no count).

import { t } from './i18n.js';

/** @typedef {import('./money.js').MoneyFormat} MoneyFormat */

// a grant as the service sends it (the player channel's map): its stake in micro-units, the
// rounds left, its expiry (ISO)
/** @typedef {import('../../shared/domain/player-channel.js').FreeBet} FreeBet */

// a grant's row of the panel, in words: its campaign as the operator named it (campaignRef);
// feature: its rounds buy the game's feature (D42, Gem Vault's campaigns of bought features)
/** @typedef {{ grantId: string, campaign: string, stake: string, remaining: string, expires: string, expired: boolean, feature: boolean }} FreeBetRow */

// the game's own parameters of a bet: dice's side, crash's auto cash-out ("2.00")
/** @typedef {{ side?: 'LOW' | 'HIGH', autoCashOut?: string }} GameParams */

/** @param {unknown} value */
const isGrant = (value) => {
  if (typeof value !== 'object' || value === null) return false;
  const grant = /** @type {Record<string, unknown>} */ (value);
  return (
    typeof grant.grantId === 'string' &&
    grant.grantId !== '' &&
    typeof grant.stakeMicro === 'string' &&
    /^\d+$/.test(grant.stakeMicro) &&
    typeof grant.remaining === 'number' &&
    Number.isInteger(grant.remaining) &&
    typeof grant.expiresAt === 'string'
  );
};

// The grants of a message's freeBets, as the panel shows them: those with a round left. A
// message without the field (a service from before free bets) has none; an entry that is not
// a grant is left out rather than drawn wrong.
/**
 * @param {unknown} value
 * @returns {FreeBet[]}
 */
export function readFreeBets(value) {
  if (!Array.isArray(value)) return [];
  return value.filter(isGrant).map((grant) => ({
    grantId: grant.grantId,
    campaignRef: typeof grant.campaignRef === 'string' ? grant.campaignRef : '',
    stakeMicro: grant.stakeMicro,
    remaining: grant.remaining,
    expiresAt: grant.expiresAt,
    // D42: a campaign of bought features (an instant game's), played with `play`
    ...(grant.featureBuy === true ? { featureBuy: /** @type {const} */ (true) } : {}),
  })).filter((grant) => grant.remaining > 0);
}

// The panel's rows: the stake in the currency's own digits, the rounds left, the expiry in the
// player's local time (timeZone: the tests' fixed zone; the browser's own without it)
/**
 * @param {FreeBet[]} grants
 * @param {MoneyFormat} money
 * @param {{ now: number, timeZone?: string }} options
 * @returns {FreeBetRow[]}
 */
export function freeBetRows(grants, money, { now, timeZone }) {
  const when = new Intl.DateTimeFormat(money.locale, { dateStyle: 'medium', timeStyle: 'short', ...(timeZone ? { timeZone } : {}) });
  return grants.map((grant) => {
    const expiresAt = Date.parse(grant.expiresAt);
    const known = Number.isFinite(expiresAt);
    return {
      grantId: grant.grantId,
      campaign: grant.campaignRef,
      stake: money.amount(grant.stakeMicro),
      remaining: grant.remaining === 1 ? t('free_bet_round_one', { count: grant.remaining }) : t('free_bet_rounds', { count: grant.remaining }),
      expires: known ? t('free_bet_expires', { at: when.format(expiresAt) }) : '',
      expired: known && expiresAt <= now,
      feature: grant.featureBuy === true,
    };
  });
}

// place_bet for a free bet: the grant in place of a stake (its stake is the grant's), with the
// game's own parameters; never an amountMicro
/**
 * @param {string} grantId
 * @param {string} clientBetId
 * @param {GameParams & { amountMicro?: unknown }} params
 */
export function freeBetPayload(grantId, clientBetId, params) {
  const { amountMicro: _ignored, ...game } = params;
  return { ...game, freeBetGrantId: grantId, clientBetId };
}

// What a free bet is played on, said under the panel's choice (D42: a free bet has the game's
// own parameters, and the panel's are the ones it takes). Dice: the side chosen in the panel,
// with its faces.
/** @param {'LOW' | 'HIGH'} side */
export function freeBetSideCaption(side) {
  return side === 'HIGH' ? t('free_bet_plays_side', { side: t('high'), range: t('high_range') }) : t('free_bet_plays_side', { side: t('low'), range: t('low_range') });
}

// Crash: the auto cash-out field's multiplier as the page shows it ("×2.00"), or null when the
// field is empty (cashed out by hand)
/** @param {string | null} multiplier */
export function freeBetCashOutCaption(multiplier) {
  return multiplier === null ? t('free_bet_plays_manual') : t('free_bet_plays_auto', { multiplier });
}

// The grants of the panel's last list that a new one no longer names, which the page says
// are no longer available (withdrawn by the operator, expired, or spent in another tab of the
// session): all of them but the grant whose last round the page itself just spent (`spent`,
// the grant of its last accepted free bet).
/**
 * @param {FreeBet[]} previous
 * @param {FreeBet[]} next
 * @param {string | null} spent
 * @returns {FreeBet[]}
 */
export function goneFreeBets(previous, next, spent) {
  const named = new Set(next.map((grant) => grant.grantId));
  return previous.filter((grant) => !named.has(grant.grantId) && !(grant.grantId === spent && grant.remaining === 1));
}

// What a screen reader is told when the panel's counts change (its live region): each grant's
// campaign and rounds left
/** @param {FreeBetRow[]} rows */
export function freeBetAnnouncement(rows) {
  return rows.map((row) => `${row.campaign}: ${row.remaining}`).join('. ');
}
