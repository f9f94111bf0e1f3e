// @ts-check
// A round's details in words, as the game page's history and the recall page both show them
// (D33): its time in UTC, its state, and the balances the wallet answered.

import { t } from './i18n.js';

// an ISO 8601 instant as "2026-11-27 14:03:12 UTC", the same in every language
/** @param {string | null | undefined} iso */
export const utcTime = (iso) => (typeof iso === 'string' && iso.length >= 19 ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '—');

// settled (won or lost), voided with its reason (D22: a bet the wallet refused, with why), or in play
/** @param {{ state?: string, won?: boolean | null, voidReason?: string | null, rejectReason?: string | null }} round */
export function roundStateText(round) {
  if (round.state === 'VOIDED') {
    const reason = round.rejectReason ? `${round.voidReason}: ${round.rejectReason}` : round.voidReason;
    return t('state_voided', { reason });
  }
  if (round.state === 'SETTLED') return round.won ? t('state_won') : t('state_lost');
  return t('result_pending');
}

// a balance the wallet answered, written by `format` (a money.js formatter's amount or
// number), or why there is none
/**
 * @param {import('../../shared/domain/player-channel.js').RecalledBalance | undefined} balance
 * @param {(micro: string) => string} format
 */
export function balanceText(balance, format) {
  if (!balance) return '—';
  if (balance.micro !== null && balance.micro !== undefined) return format(balance.micro);
  switch (balance.gap) {
    case 'demo':
      return t('balance_gap_demo');
    case 'in_play':
      return t('balance_gap_in_play');
    case 'pending':
      return t('balance_gap_pending');
    case 'no_answer':
      return t('balance_gap_no_answer');
    default:
      return t('balance_gap_not_reported');
  }
}
