// @ts-check
// The recall page (D33): one finished round as the player lived it, from the data the
// service embedded in the page (replay-page.ts). Words from i18n.js in the language the link
// names (`lang`, English without it), money from money.js in that language and the round's
// currency (D38), the proof checked here with fair.js as the game page checks it (D2).

import { deriveCrash, deriveRound } from './fair.js';
import { resolveLanguage, setLanguage, t } from './i18n.js';
import { moneyFormat } from './money.js';
import { balanceText, roundStateText, utcTime } from './rounds.js';
import { byId, renderCrashVerification, renderVerification } from './panels.js';

// the data block replay-page.ts fills: the round as src/game/reports/recall.ts records it
/** @type {{ round: import('../../shared/domain/player-channel.js').RecalledRound, linkExpiresAt: string }} */
const { round, linkExpiresAt } = JSON.parse(byId('recall-data').textContent ?? '');
const lang = new URLSearchParams(location.search).get('lang');
const money = moneyFormat(resolveLanguage(lang).locale, round.currency);
/** @param {string | null} side */
const sideName = (side) => (side === 'LOW' ? t('low') : t('high'));
const locale = resolveLanguage(lang).locale;
// D38: numbers as the page's language writes them: a multiplier with its two decimals ("2.37"
// as "2,37" in German), a flight's time in seconds to the ms
/** @param {string} text */
const multiplierText = (text) => new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(Number(text));
/** @param {number} ms */
const secondsText = (ms) => new Intl.NumberFormat(locale, { minimumFractionDigits: 3, maximumFractionDigits: 3 }).format(ms / 1000);
// D40: a crash round carries its flight (the crash point, the cash-out); a dice round does not
const isFlight = round.crashMultiplier !== undefined;

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [text]
 * @param {string} [className]
 * @returns {HTMLElementTagNameMap[K]}
 */
function node(tag, text, className) {
  const element = document.createElement(tag);
  if (text !== undefined) element.textContent = text;
  if (className) element.className = className;
  return element;
}

// each fact: its label, its value and, where given, the name it can be found by (data-fact)
/**
 * @param {HTMLElement} list
 * @param {[label: string, value: string, name?: string][]} entries
 */
function facts(list, entries) {
  list.replaceChildren(
    ...entries.flatMap(([label, value, name]) => {
      const dd = node('dd', value);
      if (name) dd.dataset.fact = name;
      return [node('dt', label), dd];
    }),
  );
}

function renderRound() {
  const stake = round.isFree ? t('free_bet') : money.amount(round.amountMicro);
  const state = byId('recall-state');
  state.textContent = roundStateText(round);
  state.dataset.state = round.state === 'VOIDED' ? 'voided' : round.won ? 'won' : 'lost';
  if (isFlight) return renderFlight(stake);
  const die = byId('die');
  die.dataset.face = String(round.outcome?.face ?? 0);
  die.dataset.outcome = round.outcome && round.won !== null ? (round.won ? 'won' : 'lost') : '';
  die.setAttribute('aria-label', round.outcome ? t('die_label', { face: round.outcome.face }) : t('die_blank'));
  byId('die-caption').textContent = t('caption_bet', { side: sideName(round.side), stake });
  facts(byId('recall-facts'), [
    [t('recall_game'), round.gameCode === 'dice' ? t('title') : round.gameCode, 'game'],
    [t('recall_round_id'), round.roundId, 'round'],
    [t('recall_player'), round.playerRef, 'player'],
    [t('recall_placed_at'), utcTime(round.placedAt), 'placed'],
    [t('recall_finished_at'), round.finishedAt ? utcTime(round.finishedAt) : '—', 'finished'],
    [t('recall_bet'), t('recall_bet_value', { side: sideName(round.side), stake }), 'bet'],
    [t('recall_balance_before'), balanceText(round.balanceBefore, money.amount), 'balance-before'],
    [t('recall_balance_after'), balanceText(round.balanceAfter, money.amount), 'balance-after'],
    [t('recall_outcome'), round.outcome ? t('recall_outcome_value', { face: round.outcome.face, side: sideName(round.outcome.side) }) : t('recall_no_outcome'), 'outcome'],
    [t('recall_payout'), payoutText(), 'payout'],
    [t('recall_state'), roundStateText(round), 'state'],
  ]);
}

const payoutText = () => (round.payoutMicro !== null ? money.amount(round.payoutMicro) : round.state === 'VOIDED' ? t('recall_payout_voided') : '—');

// A crash round (D40): the flight in place of the die (the crash point, and the cash-out with
// its time into the flight), and the bet's auto cash-out
/** @param {string} stake */
function renderFlight(stake) {
  byId('die').hidden = true;
  const flight = byId('flight');
  flight.hidden = false;
  flight.dataset.outcome = round.won === null ? '' : round.won ? 'won' : 'lost';
  const crash = round.crashMultiplier ? t('recall_flight_crash', { crash: multiplierText(round.crashMultiplier) }) : t('recall_no_flight');
  const cashOut =
    round.cashOutMultiplier && round.cashOutMs !== null && round.cashOutMs !== undefined
      ? t('recall_cash_out_value', { multiplier: multiplierText(round.cashOutMultiplier), seconds: secondsText(round.cashOutMs) })
      : t('recall_cash_out_none');
  byId('flight-crash').textContent = crash;
  byId('flight-cash-out').textContent = round.crashMultiplier ? cashOut : '';
  const bet = round.autoCashOut
    ? t('recall_bet_crash', { autoCashOut: multiplierText(round.autoCashOut), stake })
    : t('recall_bet_crash_manual', { stake });
  byId('die-caption').textContent = bet;
  facts(byId('recall-facts'), [
    [t('recall_game'), t('title_crash'), 'game'],
    [t('recall_round_id'), round.roundId, 'round'],
    [t('recall_player'), round.playerRef, 'player'],
    [t('recall_placed_at'), utcTime(round.placedAt), 'placed'],
    [t('recall_finished_at'), round.finishedAt ? utcTime(round.finishedAt) : '—', 'finished'],
    [t('recall_bet'), bet, 'bet'],
    [t('recall_balance_before'), balanceText(round.balanceBefore, money.amount), 'balance-before'],
    [t('recall_balance_after'), balanceText(round.balanceAfter, money.amount), 'balance-after'],
    [t('recall_outcome'), crash, 'outcome'],
    [t('recall_cash_out'), round.crashMultiplier ? cashOut : '—', 'cash-out'],
    [t('recall_payout'), payoutText(), 'payout'],
    [t('recall_state'), roundStateText(round), 'state'],
  ]);
}

// the seeds every game's check starts from (D2)
/** @param {NonNullable<typeof round.proof>} proof @returns {[string, string][]} */
const seedFacts = (proof) => [
  [t('server_seed_hash'), proof.serverSeedHash],
  [t('revealed_seed'), proof.serverSeed ?? '—'],
  [t('client_seed_current'), proof.clientSeed],
  [t('th_nonce'), String(proof.nonce)],
];

async function renderProof() {
  const proof = round.proof;
  const status = byId('recall-proof-status');
  if (isFlight) return renderCrashProof();
  if (!proof || !round.outcome) {
    status.textContent = t('recall_proof_none');
    byId('recall-proof').replaceChildren();
    return;
  }
  facts(byId('recall-proof'), [...seedFacts(proof), [t('recall_weights'), `${proof.lowWeight} : ${proof.highWeight}`]]);
  if (!proof.serverSeed) {
    status.textContent = t('recall_proof_hidden', { at: utcTime(proof.revealableAfter) });
    return;
  }
  status.textContent = t('recall_proof_check');
  let derived = null;
  try {
    derived = await deriveRound({
      serverSeed: proof.serverSeed,
      committedHash: proof.serverSeedHash,
      clientSeed: proof.clientSeed,
      nonce: proof.nonce,
      low: BigInt(proof.lowWeight),
      high: BigInt(proof.highWeight),
    });
  } catch {
    // no Web Crypto (an insecure page): renderVerification says so
  }
  const output = byId('verify-output');
  renderVerification(output, { nonce: proof.nonce, seedHash: proof.serverSeedHash, outcome: round.outcome }, { serverSeed: proof.serverSeed, clientSeed: proof.clientSeed }, derived, false);
  output.hidden = false;
}

// D40: the crash point recomputed in the page from the revealed seed and the round's edge
async function renderCrashProof() {
  const proof = round.proof;
  const status = byId('recall-proof-status');
  if (!proof || !round.crashMultiplier || proof.commissionMicro === undefined) {
    status.textContent = t('recall_proof_none');
    byId('recall-proof').replaceChildren();
    return;
  }
  facts(byId('recall-proof'), [...seedFacts(proof), [t('recall_edge'), proof.commissionMicro]]);
  if (!proof.serverSeed) {
    status.textContent = t('recall_proof_hidden', { at: utcTime(proof.revealableAfter) });
    return;
  }
  status.textContent = t('recall_proof_check');
  const output = byId('verify-output');
  let derived = null;
  try {
    derived = await deriveCrash({
      serverSeed: proof.serverSeed,
      committedHash: proof.serverSeedHash,
      clientSeed: proof.clientSeed,
      nonce: proof.nonce,
      commissionMicro: BigInt(proof.commissionMicro),
    });
  } catch {
    // no Web Crypto (an insecure page): the check says so
  }
  const shown = { nonce: proof.nonce, seedHash: proof.serverSeedHash, crashMultiplier: round.crashMultiplier, commissionMicro: proof.commissionMicro };
  renderCrashVerification(output, shown, { serverSeed: proof.serverSeed, clientSeed: proof.clientSeed }, derived, multiplierText);
  output.hidden = false;
}

await setLanguage(lang);
document.title = t('recall_title');
byId('recall-validity').textContent = t('recall_valid_until', { at: utcTime(linkExpiresAt) });
renderRound();
await renderProof();
