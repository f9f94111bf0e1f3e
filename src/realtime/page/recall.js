// @ts-check
// The recall page (D33): one finished round as the player lived it, from the data the
// service embedded in the page (replay-page.ts). Words from i18n.js in the language the link
// names (`lang`, English without it), money from money.js in that language and the round's
// currency (D38), the proof checked here with fair.js as the game page checks it (D2). A Gem
// Vault round (D41) shows its play, every event with what it paid, drawn by gems-play.js as the
// game page draws them; its proof is checked with `rgs verify`, not in this page.

import { deriveCrash, deriveRound } from './fair.js';
import { eventsTotal, gemsGridElement, playSteps, REELS } from './gems-play.js';
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
// D41: a Gem Vault round carries its play (events: null until its outcome is stored); neither
// a dice nor a crash round has the field
const isPlay = round.events !== undefined;
// docs/games/gems.md "The feature": the feature bought costs 67 x the stake (GEMS_MATH's
// featureBuyCost, fixed by mathVersion gems-1.0.0; a round records what it debited, not the
// stake, D41)
const FEATURE_BUY_COST = 67n;

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
  if (isPlay) return renderPlay();
  const die = byId('die');
  die.dataset.face = String(round.outcome?.face ?? 0);
  die.dataset.outcome = round.outcome && round.won !== null ? (round.won ? 'won' : 'lost') : '';
  die.setAttribute('aria-label', round.outcome ? t('die_label', { face: round.outcome.face }) : t('die_blank'));
  byId('die-caption').textContent = t('caption_bet', { side: sideName(round.side), stake });
  roundFacts(
    round.gameCode === 'dice' ? t('title') : round.gameCode,
    t('recall_bet_value', { side: sideName(round.side), stake }),
    round.outcome ? t('recall_outcome_value', { face: round.outcome.face, side: sideName(round.outcome.side) }) : t('recall_no_outcome'),
  );
}

// The facts every game's round shows, in this order, with the game's own (`own`) between its
// outcome and its payout
/**
 * @param {string} game
 * @param {string} bet
 * @param {string} outcome
 * @param {[label: string, value: string, name: string][]} [own]
 */
function roundFacts(game, bet, outcome, own = []) {
  facts(byId('recall-facts'), [
    [t('recall_game'), game, 'game'],
    [t('recall_round_id'), round.roundId, 'round'],
    [t('recall_player'), round.playerRef, 'player'],
    [t('recall_jurisdiction'), jurisdictionText(), 'jurisdiction'],
    [t('recall_placed_at'), utcTime(round.placedAt), 'placed'],
    [t('recall_finished_at'), round.finishedAt ? utcTime(round.finishedAt) : '—', 'finished'],
    [t('recall_bet'), bet, 'bet'],
    [t('recall_balance_before'), balanceText(round.balanceBefore, money.amount), 'balance-before'],
    [t('recall_balance_after'), balanceText(round.balanceAfter, money.amount), 'balance-after'],
    [t('recall_outcome'), outcome, 'outcome'],
    ...own,
    [t('recall_payout'), payoutText(), 'payout'],
    [t('recall_state'), roundStateText(round), 'state'],
  ]);
}

// D44: the jurisdiction profile the bet was placed under (a recall made before profiles names none)
function jurisdictionText() {
  const named = round.jurisdiction;
  if (!named) return '—';
  return named.profile === 'default'
    ? t('recall_jurisdiction_default', { code: named.code })
    : t('recall_jurisdiction_value', { code: named.code, profile: named.profile });
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
  roundFacts(t('title_crash'), bet, crash, [[t('recall_cash_out'), round.crashMultiplier ? cashOut : '—', 'cash-out']]);
}

// A Gem Vault round (D41): the bet (a spin at its stake, or the feature bought at its price),
// the base spin's grid (none for a bought feature), every event of the play in order with what
// it paid, each free spin with its grid, and the play's total, in place of the die
function renderPlay() {
  byId('round-felt').hidden = true;
  byId('gems-play').hidden = false;
  const bet = gemsBetText();
  byId('gems-bet').textContent = bet;
  const events = round.events ?? null;
  const steps = events ? playSteps({ baseGame: round.baseGame, events }, money) : [];
  const base = steps.find((step) => step.type === 'BASE');
  const baseTitle = byId('gems-base-title');
  const baseBox = byId('gems-base');
  if (base?.grid) {
    baseTitle.textContent = t('recall_gems_base');
    // the base spin's winning lines lit, and its Vaults when they started the feature
    const lines = [...new Set(steps.filter((step) => step.type === 'LINE_WIN').flatMap((step) => step.cells))];
    const grid = gemsGridElement(base.grid, { cells: lines });
    const gems = /** @type {HTMLElement[]} */ ([...grid.querySelectorAll('.gem')]);
    for (const key of steps.find((step) => step.type === 'FEATURE_TRIGGER')?.cells ?? []) {
      const [row, reel] = key.split('-').map(Number);
      gems[row * REELS + reel]?.classList.add('scatter');
    }
    baseBox.replaceChildren(grid);
  } else {
    baseTitle.textContent = events === null ? t('recall_gems_no_play') : t('recall_gems_no_base');
    baseBox.replaceChildren();
  }
  byId('gems-events').replaceChildren(
    ...steps
      .filter((step) => step.type !== 'BASE')
      .map((step) => {
        const item = node('li');
        item.dataset.type = step.type;
        item.dataset.won = String(step.won);
        item.append(node('span', step.text, 'gems-event-text'));
        if (step.type === 'FREE_SPIN' && step.grid) item.append(gemsGridElement(step.grid, { cells: step.cells, className: 'small' }));
        return item;
      }),
  );
  const total = events ? eventsTotal(events) : null;
  const totalText = total === null ? '' : total > 0n ? t('gems_total_win', { amount: money.amount(total) }) : t('gems_no_win');
  const totalLine = byId('gems-total');
  totalLine.textContent = totalText;
  totalLine.dataset.outcome = total === null ? '' : total > 0n ? 'won' : 'lost';
  const outcome = events ? t('recall_gems_outcome', { count: events.length, amount: money.amount(total ?? 0n) }) : t('recall_gems_no_play');
  const contribution = round.jackpotContributionMicro;
  roundFacts(t('title_gems'), bet, outcome, [
    [t('recall_gems_contribution'), contribution && /^\d+$/.test(contribution) ? money.amount(contribution) : '—', 'jackpot-contribution'],
  ]);
}

// The bet of a Gem Vault round: a spin at its stake, or the feature bought and its price. A
// paid round records what it debited (the feature's price, 67 x the stake); a free one its
// campaign's stake, whatever feature it bought (D42)
function gemsBetText() {
  const recorded = BigInt(round.amountMicro);
  if (round.featureBuy !== true) {
    const stake = money.amount(recorded);
    return round.isFree ? t('recall_gems_bet_spin_free', { stake }) : t('recall_gems_bet_spin', { stake });
  }
  const stake = round.isFree ? recorded : recorded / FEATURE_BUY_COST;
  const cost = money.amount(round.isFree ? recorded * FEATURE_BUY_COST : recorded);
  return round.isFree ? t('recall_gems_bet_feature_free', { cost, stake: money.amount(stake) }) : t('recall_gems_bet_feature', { cost, stake: money.amount(stake) });
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
  if (isPlay) return renderPlayProof();
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

// D41: a Gem Vault round's seeds, and where its proof is checked: by `rgs verify` on the round's
// proof (gems-proof.ts replays every draw), which this page does not do
function renderPlayProof() {
  const proof = round.proof;
  const status = byId('recall-proof-status');
  if (!proof || !round.events) {
    status.textContent = t('recall_proof_none');
    byId('recall-proof').replaceChildren();
    return;
  }
  facts(byId('recall-proof'), seedFacts(proof));
  status.textContent = proof.serverSeed ? t('recall_gems_proof') : t('recall_gems_proof_hidden', { at: utcTime(proof.revealableAfter) });
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
