// @ts-check
// The player's language (the session's `lang`, contract 2.2 and 5.6: a language tag such as
// "de" or "pt-BR"). Every word the page shows comes from a language file here; English is
// built in and is the fallback for any language the page does not speak. Templates take
// {name} placeholders.
//
// Every key is written out where it is used, as t('key') or data-i18n="key" (so that a unit
// test can check that each key used exists in every language and no language has more).

import en from './lang-en.js';
import { canonicalLocale } from './money.js';

// a language file's strings, read by any key: one the language lacks is undefined
/** @typedef {Record<string, string | undefined>} Strings */
/** @type {Strings} */
const english = en;

// each language file is loaded only by a page that speaks it
/** @type {Record<string, () => Promise<{ default: Strings }>>} */
const LOADERS = {
  de: () => import('./lang-de.js'),
  es: () => import('./lang-es.js'),
  fr: () => import('./lang-fr.js'),
  it: () => import('./lang-it.js'),
  pt: () => import('./lang-pt.js'),
  sv: () => import('./lang-sv.js'),
};
export const LANGUAGES = ['en', ...Object.keys(LOADERS)];

let strings = english;
let current = 'en';
let requests = 0;

// A tag -> the page's language and the locale its numbers and money follow: "de-AT" is
// German with Austrian numbers; a language the page does not speak reads as English, numbers
// included, so that a sentence and the amount in it agree.
/** @param {string | null | undefined} tag */
export function resolveLanguage(tag) {
  const text = String(tag ?? '').replace(/_/g, '-');
  const primary = text.split('-')[0].toLowerCase();
  if (!LANGUAGES.includes(primary)) return { language: 'en', locale: 'en' };
  const locale = canonicalLocale(text);
  return { language: primary, locale: locale.toLowerCase().split('-')[0] === primary ? locale : primary };
}

export const language = () => current;

// Loads the tag's language and puts it on the document: <html lang>, the title and every
// element marked data-i18n (text) or data-i18n-label (aria-label). The last call wins.
/** @param {string | null | undefined} tag */
export async function setLanguage(tag) {
  const { language: wanted, locale } = resolveLanguage(tag);
  const request = ++requests;
  let table = english;
  if (wanted !== 'en') {
    try {
      table = (await LOADERS[wanted]()).default;
    } catch {
      // a language file that cannot load leaves the page in English rather than wordless
    }
  }
  if (request !== requests) return current;
  strings = table;
  current = table === english ? 'en' : wanted;
  document.documentElement.lang = current === wanted ? locale : 'en';
  // each element the selector finds has the attribute, so its dataset has the key
  for (const el of /** @type {NodeListOf<HTMLElement & { dataset: { i18n: string } }>} */ (document.querySelectorAll('[data-i18n]'))) el.textContent = t(el.dataset.i18n);
  for (const el of /** @type {NodeListOf<HTMLElement & { dataset: { i18nLabel: string } }>} */ (document.querySelectorAll('[data-i18n-label]'))) el.setAttribute('aria-label', t(el.dataset.i18nLabel));
  document.title = gameTitle();
  return current;
}

// The name of the page's game (D39): the body's data-game, which the launch page sets from
// the game's address and the page from the session's gameCode; dice without it
export const gameTitle = () => {
  const game = document.body?.dataset.game;
  return game === 'crash' ? t('title_crash') : game === 'gems' ? t('title_gems') : t('title');
};

/**
 * @param {string} key
 * @param {Record<string, unknown>} [vars]
 */
export function t(key, vars = {}) {
  const template = strings[key] ?? english[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, name) => String(vars[name] ?? ''));
}

// the connection states of the page (game.js setConnection)
/** @param {string | undefined} kind */
export function connectionText(kind) {
  switch (kind) {
    case 'live':
      return t('conn_live');
    case 'reconnecting':
      return t('conn_reconnecting');
    case 'closed':
      return t('conn_closed');
    default:
      return t('conn_connecting');
  }
}

// D4 round_state phases; one the page does not know reads as waiting
/** @param {string | null | undefined} phase */
export function phaseText(phase) {
  switch (phase) {
    case 'PENDING':
      return t('phase_PENDING');
    case 'BETTING_OPEN':
      return t('phase_BETTING_OPEN');
    case 'ROLLING':
      return t('phase_ROLLING');
    case 'RESULT':
      return t('phase_RESULT');
    case 'COOLDOWN':
      return t('phase_COOLDOWN');
    default:
      return t('phase_WAITING');
  }
}

// D4: the handshake refusals that no retry can cure, and 'reload': a page without its token
// (contract 5.6: the token is held in memory only, so a reload has none)
/** @param {string} reason */
export function refusalText(reason) {
  if (reason === 'reload') return t('refused_reload');
  if (reason === 'session_expired') return t('refused_session_expired');
  if (reason === 'session_terminated') return t('refused_session_terminated');
  return t('refused_invalid_token');
}

// a refusal of place_bet or rotate_seed (contract 8.2, D4, D28, D37) in words; vars fill
// bet_out_of_range, and jurisdictionMax stake_above_jurisdiction_max
/**
 * @param {string} reason
 * @param {Record<string, unknown>} [vars]
 */
export function reasonText(reason, vars = {}) {
  switch (reason) {
    case 'bet_out_of_range':
      return t('reason_bet_out_of_range', vars);
    case 'session_not_found':
      return t('reason_session_not_found');
    case 'session_terminated':
      return t('reason_session_terminated');
    case 'session_expired':
      return t('reason_session_expired');
    case 'phase_not_open':
      return t('reason_phase_not_open');
    case 'already_bet_this_round':
      return t('reason_already_bet_this_round');
    case 'rg_limit_reached':
      return t('reason_rg_limit_reached');
    case 'wallet_timeout':
      return t('reason_wallet_timeout');
    case 'invalid_payload':
      return t('reason_invalid_payload');
    case 'rate_limited':
      return t('reason_rate_limited');
    case 'bet_in_progress':
      return t('reason_bet_in_progress');
    case 'service_unavailable':
      return t('reason_service_unavailable');
    case 'service_busy':
      return t('reason_service_busy');
    case 'free_bet_unavailable':
      return t('reason_free_bet_unavailable');
    case 'round_too_soon':
      return t('reason_round_too_soon');
    case 'reality_check_due':
      return t('reason_reality_check_due');
    // the bound of the session's jurisdiction profile, in its currency, when the page has it
    case 'stake_above_jurisdiction_max':
      return vars.jurisdictionMax ? t('reason_stake_above_jurisdiction_max', { max: vars.jurisdictionMax }) : t('reason_stake_above_jurisdiction_max_any');
    case 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY':
      return t('reason_not_enough_money');
    case 'wallet_rejected:RS_ERROR_LIMIT_REACHED':
      return t('reason_limit_reached');
  }
  if (String(reason).startsWith('wallet_rejected:')) return t('reason_wallet_other', { status: reason.slice('wallet_rejected:'.length) });
  return t('reason_other', { reason });
}

// session_ended reasons (D4, D28): terminated | expired | replaced | wallet_status:<RS_status>
/** @param {string} reason */
export function endText(reason) {
  if (reason === 'terminated') return t('end_terminated');
  if (reason === 'expired') return t('end_expired');
  if (reason === 'replaced') return t('end_replaced');
  if (String(reason).startsWith('wallet_status:')) return t('end_wallet', { status: reason.slice('wallet_status:'.length) });
  return t('end_other', { reason });
}
