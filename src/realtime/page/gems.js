// @ts-check
// Gem Vault's part of the game page (D41; D39: each game brings its part of the page). The
// page's shell (game.js) keeps the connection, the words, the money, the stake field, the
// balance, the history and the seeds; this module draws the 3x3 grid and runs Gem Vault's own
// controls: the Spin and Buy feature buttons, a play's events shown one after the other (each
// line win, the feature's trigger, each free spin, the jackpot) with a Skip, the total win,
// and the jackpot's meter. The free-bets panel plays a grant here too (D42): `play` naming it.
// A play's steps and grids are gems-play.js's, which the recall page shares.
//
// An instant game has no shared clock (D41): a play is its own round, sent with `play` and
// answered by its ack (the debit's verdict) and its round_result (the whole outcome at once).
// The page holds the buttons while a play is in flight and for minRoundMs after it, as the
// service refuses a play sooner (round_too_soon).

import { freeBetPayload } from './freebets.js';
import { drawGems, gridLabel, lightGems, playSteps, ROWS, REELS } from './gems-play.js';
import { t } from './i18n.js';
import { byId } from './panels.js';

/** @typedef {import('../../shared/domain/player-channel.js').MultiRoundResult} MultiRoundResult */
/** @typedef {import('../../shared/domain/player-channel.js').Jackpot} Jackpot */
/** @typedef {import('../../shared/domain/player-channel.js').Play} Play */
/** @typedef {import('../../shared/domain/player-channel.js').PlaceBetAck} PlaceBetAck */
/** @typedef {import('./money.js').MoneyFormat} MoneyFormat */
/** @typedef {import('./panels.js').HistoryRound} HistoryRound */
/** @typedef {import('./gems-play.js').Step} Step */

/**
 * What the page's shell gives Gem Vault
 * @typedef {object} Shell
 * @property {() => MoneyFormat} money the session's money.js formatter
 * @property {() => boolean} playing connected to a session that has not ended
 * @property {(options?: { quiet?: boolean }) => bigint | null} readStake the stake field, checked (null: refused, said unless quiet)
 * @property {(text: string, kind: 'info' | 'error' | '') => void} showMessage
 * @property {(text: string, outcome: 'won' | 'lost' | '') => void} showResult
 * @property {(payload: Play & { clientBetId: string }, answer: (ack: PlaceBetAck | null) => void) => void} play sends `play`; null: no answer in time
 * @property {(reason: string, clientBetId?: string) => void} reportRejection a refusal in words, once per play (the ack and bet_rejected both say it)
 * @property {() => void} renderFreeBets draws the free-bets panel, whose buttons follow canPlay (D42)
 */

// how long each step of a play's events stays on screen before the next; Skip shows the end
const STEP_MS = 700;
const SPIN_MS = 450;

/** @param {Shell} shell */
export function gemsGame(shell) {
  const el = {
    felt: byId('gems'),
    grid: byId('gems-grid'),
    feature: byId('gems-feature'),
    events: byId('gems-events'),
    skip: byId('gems-skip', HTMLButtonElement),
    meter: byId('gems-jackpot'),
    banner: byId('gems-jackpot-banner'),
    spin: byId('gems-spin', HTMLButtonElement),
    buy: byId('gems-buy', HTMLButtonElement),
    buyCost: byId('gems-buy-cost'),
    potential: byId('potential'),
    freeBetCaption: byId('free-bet-caption'),
  };
  const cells = /** @type {HTMLElement[]} */ ([...el.grid.querySelectorAll('.gem')]);
  if (cells.length !== ROWS * REELS) throw new Error("the page's #gems-grid has not 9 cells");

  // the session's terms (connected.config, D41)
  const terms = { minRoundMs: 0, featureBuyCost: /** @type {bigint | null} */ (null), maxMultiplier: /** @type {bigint | null} */ (null) };
  // the jackpot's pool as the service last said it
  let poolMicro = /** @type {string | null} */ (null);
  // the play in flight: its clientBetId until its round_result or its refusal
  let inFlight = /** @type {string | null} */ (null);
  // this page's clock before which a play would come within minRoundMs of the previous one
  let nextPlayAt = 0;
  /** @type {ReturnType<typeof setTimeout> | null} */
  let wake = null;
  // the play being shown: its steps, how many are shown, and its end in words
  let show = /** @type {{ steps: Step[], shown: number, timer: ReturnType<typeof setTimeout> | null, done: boolean, result: MultiRoundResult } | null} */ (null);
  let grid = /** @type {string[][] | null} */ (null);
  // Skip had the focus when the play's end hid it: Spin takes it once it can play
  let refocus = false;
  // the rounds of this page's plays, whose jackpot is told by their own JACKPOT event
  const ownRounds = new Set();
  // a hit told while this page's play is in flight or shown: said after the play's end, unless
  // it was that play's (its JACKPOT step says it then, not before the events get there)
  let laterHit = /** @type {{ roundId: string, payoutMicro: string } | null} */ (null);

  const money = () => shell.money();
  const canPlay = () => shell.playing() && inFlight === null && Date.now() >= nextPlayAt;

  // ---- the session -----------------------------------------------------------------------

  /**
   * @param {{ minRoundMs?: number, featureBuyCost?: string, maxMultiplier?: string }} config
   * @param {Jackpot | undefined} jackpot
   */
  function configure(config, jackpot) {
    terms.minRoundMs = typeof config.minRoundMs === 'number' && config.minRoundMs > 0 ? config.minRoundMs : 0;
    terms.featureBuyCost = config.featureBuyCost && /^\d+$/.test(config.featureBuyCost) ? BigInt(config.featureBuyCost) : null;
    terms.maxMultiplier = config.maxMultiplier && /^\d+$/.test(config.maxMultiplier) ? BigInt(config.maxMultiplier) : null;
    if (jackpot) poolMicro = jackpot.poolMicro;
    render();
  }

  // the pool after a play fed it or a hit paid it; a hit is said in a banner (D41)
  /** @param {Jackpot} jackpot */
  function onJackpot(jackpot) {
    poolMicro = jackpot.poolMicro;
    const hit = jackpot.hit;
    if (hit && !ownRounds.has(hit.roundId)) {
      if (inFlight !== null || (show !== null && !show.done)) laterHit = hit;
      else tellHit(hit);
    }
    renderMeter();
  }

  // a hit held while a play was in flight or shown, once that play is over
  function tellLaterHit() {
    if (laterHit && !ownRounds.has(laterHit.roundId)) tellHit(laterHit);
    laterHit = null;
  }

  // another player's hit, in the banner
  /** @param {{ roundId: string, payoutMicro: string }} hit */
  function tellHit(hit) {
    el.banner.textContent = t('gems_jackpot_hit', { amount: money().amount(hit.payoutMicro) });
    el.banner.hidden = false;
  }

  // ---- a play ------------------------------------------------------------------------------

  /** @param {boolean} featureBuy */
  function play(featureBuy) {
    if (!canPlay()) return;
    if (featureBuy && terms.featureBuyCost === null) return;
    const stake = shell.readStake();
    if (stake === null) return;
    send(featureBuy ? { amountMicro: stake.toString(), featureBuy: true } : { amountMicro: stake.toString() });
  }

  // D42: a free play of the panel's grant: the grant in place of the stake field's amount; its
  // stake, and whether it buys the feature, are its campaign's (freebets.js freeBetPayload)
  /** @param {string} grantId */
  function playFree(grantId) {
    if (!canPlay()) return;
    send(freeBetPayload(grantId, randomId(), {}));
  }

  // `play`, held in flight until its round_result or its refusal; its result is shown alike,
  // paid or free
  /** @param {Play & { clientBetId?: string }} params */
  function send(params) {
    // a play shown still is finished at once: the new one is the one on screen
    finish();
    const clientBetId = params.clientBetId ?? randomId();
    inFlight = clientBetId;
    el.banner.hidden = true;
    shell.showMessage(t('placing'), 'info');
    shell.showResult('', '');
    render();
    /** @type {Play & { clientBetId: string }} */
    const payload = { ...params, clientBetId };
    shell.play(payload, (ack) => {
      // the service counts minRoundMs from the play's placing, which is before this answer
      nextPlayAt = Math.max(nextPlayAt, Date.now() + terms.minRoundMs);
      if (ack === null) {
        if (inFlight === clientBetId) inFlight = null;
        shell.showMessage(t('no_answer'), 'error');
      } else if (!ack.ok) {
        if (inFlight === clientBetId) inFlight = null;
        shell.reportRejection(ack.reason, clientBetId);
        tellLaterHit();
      } else ownRounds.add(ack.roundId);
      // accepted: the play stays in flight until its round_result (which may come first)
      render();
    });
  }

  // bet_rejected (D4): the play it names is no longer in flight
  /** @param {string | undefined} clientBetId */
  function onRejected(clientBetId) {
    if (clientBetId !== undefined && clientBetId === inFlight) {
      inFlight = null;
      tellLaterHit();
    }
    render();
  }

  // the play's outcome, all at once (D41): shown step by step
  /** @param {MultiRoundResult} result */
  function onResult(result) {
    ownRounds.add(result.roundId);
    inFlight = null;
    nextPlayAt = Math.max(nextPlayAt, Date.now() + terms.minRoundMs);
    finish();
    shell.showMessage('', '');
    shell.showResult('', '');
    el.events.replaceChildren();
    el.feature.hidden = true;
    show = { steps: playSteps(result, money()), shown: 0, timer: null, done: false, result };
    el.felt.dataset.state = 'showing';
    el.skip.hidden = false;
    // a player at the keyboard whose Spin or Buy button is now held goes on from Skip
    if (document.activeElement === el.spin || document.activeElement === el.buy || document.activeElement === document.body) el.skip.focus();
    next();
    render();
  }

  // the next step, and the one after it in STEP_MS; after the last, the total
  function next() {
    if (!show) return;
    if (show.shown >= show.steps.length) return end();
    const step = show.steps[show.shown];
    show.shown += 1;
    apply(step, true);
    show.timer = setTimeout(next, step.type === 'BASE' ? SPIN_MS : STEP_MS);
  }

  // Skip: every step left at once, then the total
  function finish() {
    if (!show || show.done) return;
    if (show.timer !== null) clearTimeout(show.timer);
    show.timer = null;
    while (show.shown < show.steps.length) {
      apply(show.steps[show.shown], false);
      show.shown += 1;
    }
    end();
  }

  function end() {
    if (!show || show.done) return;
    const { result } = show;
    if (show.timer !== null) clearTimeout(show.timer);
    show.timer = null;
    show.done = true;
    // the focus Skip had goes back to Spin (once minRoundMs lets it play) rather than to the body
    refocus = document.activeElement === el.skip;
    el.skip.hidden = true;
    el.felt.dataset.state = 'done';
    if (result.won) shell.showResult(t('gems_total_win', { amount: money().amount(result.payoutMicro) }), 'won');
    else shell.showResult(t('gems_no_win'), 'lost');
    tellLaterHit();
    render();
  }

  /**
   * @param {Step} step
   * @param {boolean} animate
   */
  function apply(step, animate) {
    if (step.grid) drawGrid(step.grid, animate);
    lightGems(cells, step.cells, step.type === 'FEATURE_TRIGGER' ? 'scatter' : 'hit');
    if (step.feature !== null) {
      el.feature.textContent = step.feature;
      el.feature.hidden = false;
    }
    if (step.jackpot !== null) {
      el.banner.textContent = step.jackpot;
      el.banner.hidden = false;
    }
    if (step.text) {
      const item = document.createElement('li');
      item.textContent = step.text;
      item.dataset.type = step.type;
      item.dataset.won = String(step.won);
      el.events.append(item);
    }
  }

  // the grid drawn (gems-play.js, shared with the recall page), its landing replayed on every spin
  /**
   * @param {string[][]} next
   * @param {boolean} motion
   */
  function drawGrid(next, motion) {
    grid = next;
    drawGems(cells, next, { motion });
    labelGrid();
  }

  // the grid in words, row by row, for a screen reader (the drawing is aria-hidden)
  function labelGrid() {
    el.grid.setAttribute('aria-label', gridLabel(grid));
  }

  // ---- the controls --------------------------------------------------------------------------

  function render() {
    renderMeter();
    renderBetting();
  }

  function renderMeter() {
    const text = poolMicro === null ? '—' : money().amount(poolMicro);
    if (el.meter.textContent !== text) el.meter.textContent = text;
  }

  // the Spin and Buy buttons (held while a play is in flight and for minRoundMs after it),
  // the feature's price at the stake typed, and what a spin may pay at most
  function renderBetting() {
    const open = canPlay();
    el.spin.disabled = !open;
    if (refocus && open) {
      refocus = false;
      if (document.activeElement === document.body || document.activeElement === el.skip) el.spin.focus();
    }
    el.buy.hidden = terms.featureBuyCost === null;
    el.buy.disabled = !open || terms.featureBuyCost === null;
    el.felt.dataset.busy = String(inFlight !== null);
    const stake = shell.readStake({ quiet: true });
    const cost = terms.featureBuyCost !== null && stake !== null ? money().amount(stake * terms.featureBuyCost) : '';
    if (el.buyCost.textContent !== cost) el.buyCost.textContent = cost;
    el.buy.setAttribute('aria-label', cost ? t('gems_buy_label', { cost }) : t('gems_buy'));
    el.potential.textContent = stake !== null && terms.maxMultiplier !== null ? t('gems_potential', { amount: money().amount(stake * terms.maxMultiplier) }) : '';
    // D42: a free play takes its grant's stake, and a grant of bought features buys the feature
    el.freeBetCaption.textContent = t('free_bet_plays_gems');
    shell.renderFreeBets();
    if (!grid) labelGrid();
    // the buttons open again once minRoundMs has passed
    if (wake === null && inFlight === null && Date.now() < nextPlayAt) {
      wake = setTimeout(() => {
        wake = null;
        renderBetting();
      }, nextPlayAt - Date.now() + 10);
    }
  }

  el.spin.addEventListener('click', () => play(false));
  el.buy.addEventListener('click', () => play(true));
  el.skip.addEventListener('click', finish);

  // S spins and Escape skips, unless the player is typing (as L and H bet in dice); buying the
  // feature, at featureBuyCost stakes, takes its button
  /** @param {string} key */
  function shortcut(key) {
    if (key === 's') play(false);
    else if (key === 'escape') finish();
  }

  // ---- the history ---------------------------------------------------------------------------

  // a play's cells: a spin or a bought feature, and what it paid once known
  /** @param {HistoryRound} round */
  function historyCells(round) {
    const tag = document.createElement('span');
    tag.className = round.featureBuy ? 'tag feature' : 'tag spin';
    tag.textContent = round.featureBuy ? t('gems_history_feature') : t('gems_history_spin');
    return { bet: [tag], result: [] };
  }

  return { configure, onJackpot, onResult, onRejected, render, renderBetting, shortcut, historyCells, labelGrid, canPlay, playFree };
}

function randomId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
