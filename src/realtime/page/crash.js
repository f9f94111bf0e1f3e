// @ts-check
// The crash game's part of the game page (D40; D39: each game brings its part of the page).
// The page's shell (game.js) keeps the connection, the words, the money, the balance, the
// history and the seeds; this module draws the flight and runs crash's own controls: the auto
// cash-out, the bet, the cash-out, the result in words, and the crash columns of the history.
//
// There is no tick stream: round_state ROLLING carries flightStartedAt and serverTime, and
// the page draws m(t) itself on its own clock, set to the service's by serverTime minus the
// moment the message arrived. Every player has a crash point of their own; the curve is the
// same for all, so the page runs it until the phase ends or until its player's round_result
// names that player's crash point.

import { freeBetCashOutCaption } from './freebets.js';
import { reasonText, t } from './i18n.js';
import { byId } from './panels.js';
import {
  MIN_AUTO_CASH_OUT_CENTS,
  centsOf,
  crashPayout,
  curveCents,
  curveTime,
  curveValue,
  multiplierInput,
  multiplierText,
  parseMultiplier,
  wireMultiplier,
} from './crash-curve.js';

/** @typedef {import('../../shared/domain/player-channel.js').ServerToClientEvents} ServerToClientEvents */
/** @typedef {import('../../shared/domain/player-channel.js').RoundState} RoundState */
/** @typedef {import('../../shared/domain/player-channel.js').CrashRoundResult} CrashRoundResult */
/** @typedef {import('../../shared/domain/player-channel.js').CashOutAck} CashOutAck */
/** @typedef {import('../../shared/domain/player-channel.js').RoundPhase} RoundPhase */
/** @typedef {import('./money.js').MoneyFormat} MoneyFormat */
/** @typedef {import('./panels.js').HistoryRound} HistoryRound */

/**
 * What the page's shell gives the crash game
 * @typedef {object} Shell
 * @property {() => MoneyFormat} money the session's money.js formatter
 * @property {() => { cycleId: string, phase: RoundPhase } | null} round the current cycle and its phase
 * @property {() => boolean} playing connected to a session that has not ended
 * @property {() => boolean} canBet the betting window is open to this player
 * @property {(options?: { quiet?: boolean }) => bigint | null} readStake the stake field, checked (null: refused, said unless quiet)
 * @property {(text: string, kind: 'info' | 'error' | '') => void} showMessage
 * @property {(text: string, outcome: 'won' | 'lost' | '') => void} showResult
 * @property {(params: { autoCashOut?: string }) => void} placeBet a bet of the stake field's amount with these parameters
 * @property {(answer: (ack: CashOutAck | null) => void) => void} cashOut sends cash_out; null: no answer in time
 * @property {(cycleId: string) => HistoryRound | undefined} betOf the player's round of the cycle
 */

// a screen reader hears the rising multiplier at most this often (the drawing changes every frame)
const SPOKEN_EVERY_MS = 1000;
// the drawing's least span, so that the first seconds of a flight do not fill it at once
const MIN_SPAN_MS = 8000;
const MIN_SPAN_CENTS = 200n;

/** @param {Shell} shell */
export function crashGame(shell) {
  const el = {
    felt: byId('flight'),
    canvas: byId('flight-canvas', HTMLCanvasElement),
    multiplier: byId('flight-multiplier'),
    live: byId('flight-live'),
    caption: byId('flight-caption'),
    autoCashOut: byId('auto-cash-out', HTMLInputElement),
    autoHint: byId('auto-cash-out-hint'),
    placeBet: byId('place-bet', HTMLButtonElement),
    cashOut: byId('cash-out', HTMLButtonElement),
    cashOutLabel: byId('cash-out-label'),
    cashOutDetail: byId('cash-out-detail'),
    potential: byId('potential'),
    freeBetCaption: byId('free-bet-caption'),
  };

  // the session's terms (connected.config): the highest multiplier and the payout cap
  const terms = { maxCents: 100000n, maxPayoutMicro: /** @type {bigint | null} */ (null) };
  // the flight of the current cycle on the service's clock: its start (ms) and the offset of
  // the service's clock from this page's; endedMs: where the drawing stopped when ROLLING ended
  const flight = {
    cycleId: /** @type {string | null} */ (null),
    startedAt: /** @type {number | null} */ (null),
    offsetMs: 0,
    endedMs: /** @type {number | null} */ (null),
  };
  let cashingOut = false;
  let spokenAt = 0;
  /** @type {number | null} */
  let frame = null;

  const money = () => shell.money();
  const decimal = () => money().decimal;
  /** @param {bigint} cents */
  const shown = (cents) => multiplierText(cents, decimal());
  /** @param {string | null | undefined} text a multiplier on the wire ("2.37") */
  const shownText = (text) => {
    const cents = centsOf(text);
    return cents === null ? '—' : shown(cents);
  };
  // ms of the flight now, on the service's clock
  const flightMs = () => (flight.startedAt === null ? 0 : Date.now() + flight.offsetMs - flight.startedAt);
  const myBet = () => (flight.cycleId === null ? undefined : shell.betOf(flight.cycleId));

  // ---- the session and the rounds ----------------------------------------------------------

  /** @param {{ maxMultiplier?: string, maxPayoutMicro?: string }} config */
  function configure(config) {
    terms.maxCents = centsOf(config.maxMultiplier) ?? 100000n;
    terms.maxPayoutMicro = config.maxPayoutMicro ? BigInt(config.maxPayoutMicro) : null;
  }

  // round_state (and the connected message's): a new cycle clears the last flight; ROLLING with
  // flightStartedAt starts the drawing; the phase after it stops the drawing where it was
  /**
   * @param {RoundState} roundState
   * @param {number} receivedAt this page's clock when the message arrived
   */
  function onRoundState(roundState, receivedAt) {
    if (roundState.cycleId !== flight.cycleId) {
      Object.assign(flight, { cycleId: roundState.cycleId, startedAt: null, offsetMs: 0, endedMs: null });
      cashingOut = false;
    }
    if (roundState.phase === 'ROLLING' && roundState.flightStartedAt) {
      const serverTime = Date.parse(roundState.serverTime ?? '');
      flight.startedAt = Date.parse(roundState.flightStartedAt);
      flight.offsetMs = Number.isFinite(serverTime) ? serverTime - receivedAt : 0;
      flight.endedMs = null;
    } else if (roundState.phase !== 'ROLLING' && flight.startedAt !== null && flight.endedMs === null) {
      flight.endedMs = Math.max(0, flightMs());
    }
    render();
  }

  // bet_placed in words: the stake (with its currency, or "free bet") and the auto cash-out
  /**
   * @param {string} stakeText
   * @param {string | null | undefined} autoCashOut
   */
  function betPlacedText(stakeText, autoCashOut) {
    return autoCashOut ? t('crash_bet_placed_auto', { stake: stakeText, multiplier: shownText(autoCashOut) }) : t('crash_bet_placed', { stake: stakeText });
  }

  // the player's round is resolved (D40): at its cash-out, by hand or by itself, or at its crash
  /** @param {CrashRoundResult} result */
  function onResult(result) {
    if (result.won && result.cashOutMultiplier) {
      shell.showResult(t('crash_won', { multiplier: shownText(result.cashOutMultiplier), amount: money().amount(result.payoutMicro) }), 'won');
    } else {
      shell.showResult(t('crash_lost', { multiplier: shownText(result.crashMultiplier) }), 'lost');
    }
    render();
  }

  // ---- the flight ----------------------------------------------------------------------------

  // where the drawing is: its ms of the flight, its multiplier, and why it stopped if it did
  function position() {
    const round = shell.round();
    if (flight.startedAt === null || !round || round.cycleId !== flight.cycleId) return { kind: /** @type {const} */ ('waiting'), ms: 0, cents: 100n };
    const bet = myBet();
    const crashCents = centsOf(bet?.flight?.crashMultiplier);
    const now = Math.max(0, flightMs());
    const crashMs = crashCents === null ? Infinity : curveTime(crashCents);
    const endedMs = flight.endedMs ?? Infinity;
    // the player's own crash point, once round_result named it, stops the curve there
    if (crashCents !== null && crashMs <= Math.min(now, endedMs)) return { kind: /** @type {const} */ ('crashed'), ms: crashMs, cents: crashCents };
    if (endedMs <= now) return { kind: /** @type {const} */ ('over'), ms: endedMs, cents: curveCents(endedMs) };
    return { kind: /** @type {const} */ ('flying'), ms: now, cents: curveCents(now) };
  }

  // the player's cash-out in this flight, granted (the ack's or round_result's multiplier)
  const cashedOutCents = () => centsOf(myBet()?.flight?.cashOutMultiplier);

  function render() {
    const at = position();
    // once cashed out, the player's multiplier is the one granted, whatever the curve does next
    const cashed = cashedOutCents();
    el.felt.dataset.state = at.kind;
    el.felt.dataset.cashed = String(cashed !== null);
    const text = shown(cashed ?? at.cents);
    if (el.multiplier.textContent !== text) el.multiplier.textContent = text;
    if (at.kind === 'flying' && !myBet()?.flight) {
      if (Date.now() - spokenAt >= SPOKEN_EVERY_MS) {
        spokenAt = Date.now();
        el.live.textContent = text;
      }
    } else if (el.live.textContent !== '') {
      spokenAt = 0;
      el.live.textContent = '';
    }
    draw(at);
    renderCaption();
    renderCashOut(at);
    // the next frame while the curve rises
    if (at.kind === 'flying' && frame === null) {
      frame = requestAnimationFrame(() => {
        frame = null;
        render();
      });
    }
  }

  function renderCaption() {
    const round = shell.round();
    const bet = round ? shell.betOf(round.cycleId) : undefined;
    let text;
    if (bet && bet.amountMicro !== null) {
      const stake = bet.isFree ? t('free_bet') : money().amount(bet.amountMicro);
      const crash = bet.flight?.crashMultiplier;
      if (crash && bet.flight?.won) text = t('crash_caption_crash_point', { multiplier: shownText(crash) });
      else if (bet.autoCashOut) text = t('crash_caption_bet_auto', { stake, multiplier: shownText(bet.autoCashOut) });
      else text = t('crash_caption_bet', { stake });
    } else if (!round || round.phase === 'PENDING') {
      return; // the shell says when the round starts
    } else {
      text = ['ROLLING', 'RESULT', 'COOLDOWN'].includes(round.phase) ? t('caption_no_bet') : t('crash_caption_idle');
    }
    if (el.caption.textContent !== text) el.caption.textContent = text;
  }

  // the Cash out button: live during the player's flight, with the multiplier and what it
  // would pay now; after the cash-out, what the service granted
  /** @param {ReturnType<typeof position>} at */
  function renderCashOut(at) {
    const bet = myBet();
    const granted = cashedOutCents();
    let label = t('crash_cash_out');
    let detail = '';
    if (granted !== null && bet?.flight?.payoutMicro) {
      label = t('crash_cashed_out');
      detail = `${shown(granted)} · ${money().amount(bet.flight.payoutMicro)}`;
    } else if (cashingOut) {
      label = t('crash_cashing_out');
    } else if (at.kind === 'flying' && bet && bet.amountMicro !== null && !bet.flight && !bet.voided) {
      const stake = bet.isFree ? 0n : BigInt(bet.amountMicro);
      detail = bet.isFree ? shown(at.cents) : `${shown(at.cents)} · ${money().amount(crashPayout(stake, at.cents, terms.maxPayoutMicro))}`;
    }
    if (el.cashOutLabel.textContent !== label) el.cashOutLabel.textContent = label;
    if (el.cashOutDetail.textContent !== detail) el.cashOutDetail.textContent = detail;
    el.cashOut.disabled = !canCashOut(at);
  }

  /** @param {ReturnType<typeof position>} [at] */
  function canCashOut(at = position()) {
    const bet = myBet();
    return shell.playing() && !cashingOut && at.kind === 'flying' && bet !== undefined && bet.amountMicro !== null && !bet.flight && !bet.voided;
  }

  function cashOut() {
    if (!canCashOut()) return;
    const cycleId = flight.cycleId;
    cashingOut = true;
    render();
    shell.cashOut((ack) => {
      cashingOut = false;
      const bet = cycleId === null ? undefined : shell.betOf(cycleId);
      if (ack === null) shell.showMessage(t('no_answer'), 'error');
      else if (ack.ok) {
        // the service's decision, durable before this answer: its multiplier and payout
        if (bet) bet.flight = { crashMultiplier: bet.flight?.crashMultiplier ?? null, cashOutMultiplier: ack.cashOutMultiplier, won: true, payoutMicro: ack.payoutMicro };
        shell.showMessage('', '');
        shell.showResult(t('crash_won', { multiplier: shownText(ack.cashOutMultiplier), amount: money().amount(ack.payoutMicro) }), 'won');
      } else shell.showMessage(cashOutRefusalText(ack.reason), 'error');
      render();
    });
  }

  // ---- the drawing ---------------------------------------------------------------------------

  let width = 0;
  let height = 0;
  // the canvas's pixels follow its box and the screen's density
  new ResizeObserver(() => {
    const ratio = window.devicePixelRatio || 1;
    width = el.canvas.clientWidth;
    height = el.canvas.clientHeight;
    el.canvas.width = Math.round(width * ratio);
    el.canvas.height = Math.round(height * ratio);
    el.canvas.getContext('2d')?.setTransform(ratio, 0, 0, ratio, 0, 0);
    draw(position());
  }).observe(el.canvas);

  // the colours of game.css, read once
  const colour = (() => {
    const style = getComputedStyle(el.felt);
    /** @param {string} name @param {string} fallback */
    const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
    return { line: read('--gold', '#f6c453'), win: read('--win', '#41d98a'), loss: read('--loss', '#ff8a8a'), grid: 'rgba(167, 179, 201, 0.18)', label: read('--muted', '#a7b3c9') };
  })();

  /** @param {ReturnType<typeof position>} at */
  function draw(at) {
    const context = el.canvas.getContext('2d');
    if (!context || width === 0 || height === 0) return;
    context.clearRect(0, 0, width, height);
    const pad = { left: 46, right: 14, top: 14, bottom: 24 };
    const plotW = Math.max(1, width - pad.left - pad.right);
    const plotH = Math.max(1, height - pad.top - pad.bottom);
    // the span grows with the flight, so the head stays in view
    const spanMs = Math.max(MIN_SPAN_MS, at.ms * 1.15);
    const topCents = at.cents * 115n / 100n > MIN_SPAN_CENTS ? at.cents * 115n / 100n : MIN_SPAN_CENTS;
    const top = Number(topCents) / 100;
    /** @param {number} ms */
    const x = (ms) => pad.left + (ms / spanMs) * plotW;
    /** @param {number} value */
    const y = (value) => pad.top + plotH - ((value - 1) / (top - 1)) * plotH;

    // the grid: multipliers up the side, seconds along the bottom
    context.font = '11px system-ui, sans-serif';
    context.fillStyle = colour.label;
    context.strokeStyle = colour.grid;
    context.lineWidth = 1;
    const step = niceStep(top - 1);
    for (let value = 1; value <= top + 1e-9; value += step) {
      const cents = BigInt(Math.round(value * 100));
      context.beginPath();
      context.moveTo(pad.left, y(value));
      context.lineTo(pad.left + plotW, y(value));
      context.stroke();
      context.textAlign = 'right';
      context.textBaseline = 'middle';
      context.fillText(shown(cents), pad.left - 6, y(value));
    }
    const seconds = niceStep(spanMs / 1000);
    context.textAlign = 'center';
    context.textBaseline = 'top';
    for (let s = 0; s * 1000 <= spanMs; s += seconds) context.fillText(t('countdown', { seconds: Math.round(s) }), x(s * 1000), pad.top + plotH + 6);

    // the player's auto cash-out, as a dashed line where it would fire
    const bet = myBet();
    const auto = centsOf(bet?.autoCashOut);
    if (auto !== null && Number(auto) / 100 <= top) {
      context.save();
      context.setLineDash([5, 5]);
      context.strokeStyle = colour.win;
      context.globalAlpha = 0.6;
      context.beginPath();
      context.moveTo(pad.left, y(Number(auto) / 100));
      context.lineTo(pad.left + plotW, y(Number(auto) / 100));
      context.stroke();
      context.restore();
    }
    if (at.kind === 'waiting') return;

    // the curve from take-off to where it is, filled below
    const points = 96;
    const ending = at.kind === 'crashed' ? Number(at.cents) / 100 : null;
    context.beginPath();
    context.moveTo(x(0), y(1));
    for (let i = 1; i <= points; i++) {
      const ms = (at.ms * i) / points;
      context.lineTo(x(ms), y(i === points && ending !== null ? ending : curveValue(ms)));
    }
    const line = at.kind === 'crashed' ? colour.loss : colour.line;
    context.lineWidth = 3;
    context.strokeStyle = line;
    context.stroke();
    context.lineTo(x(at.ms), y(1));
    context.closePath();
    context.globalAlpha = 0.15;
    context.fillStyle = line;
    context.fill();
    context.globalAlpha = 1;

    // the head of the curve, and the player's cash-out on it
    const headY = y(ending ?? curveValue(at.ms));
    context.beginPath();
    context.arc(x(at.ms), headY, 5, 0, Math.PI * 2);
    context.fillStyle = line;
    context.fill();
    const out = cashedOutCents();
    if (out !== null) {
      const ms = Math.min(curveTime(out), at.ms);
      context.beginPath();
      context.arc(x(ms), y(Number(out) / 100), 6, 0, Math.PI * 2);
      context.fillStyle = colour.win;
      context.fill();
    }
  }

  // ---- the bet -------------------------------------------------------------------------------

  // the auto cash-out field, checked (D40: two decimals, 1.01 to maxMultiplier): its cents,
  // null for none, or undefined when refused (said unless quiet)
  function readAutoCashOut({ quiet = false } = {}) {
    const parsed = parseMultiplier(el.autoCashOut.value, decimal());
    let problem = '';
    if (!parsed.ok) problem = t('crash_auto_format', { example: multiplierInput(200n, decimal()) });
    else if (parsed.cents !== null && (parsed.cents < MIN_AUTO_CASH_OUT_CENTS || parsed.cents > terms.maxCents)) {
      problem = t('crash_auto_range', { min: shown(MIN_AUTO_CASH_OUT_CENTS), max: shown(terms.maxCents) });
    } else {
      el.autoCashOut.removeAttribute('aria-invalid');
      return parsed.cents;
    }
    if (!quiet) {
      el.autoCashOut.setAttribute('aria-invalid', 'true');
      shell.showMessage(problem, 'error');
    }
    return undefined;
  }

  // a bet's own parameters from the form (a free bet's too): the auto cash-out when one is set;
  // undefined when the field is refused (said)
  function betParams() {
    const auto = readAutoCashOut();
    if (auto === undefined) return undefined;
    return auto === null ? {} : { autoCashOut: wireMultiplier(auto) };
  }

  function placeBet() {
    if (!shell.canBet()) return;
    const stake = shell.readStake();
    if (stake === null) return;
    const params = betParams();
    if (params) shell.placeBet(params);
  }

  // the bet form's state: the buttons, and what an auto cash-out would pay
  function renderBetting() {
    el.autoCashOut.placeholder = multiplierInput(200n, decimal());
    el.autoHint.textContent = t('crash_auto_hint', { min: shown(MIN_AUTO_CASH_OUT_CENTS), max: shown(terms.maxCents) });
    el.placeBet.disabled = !shell.canBet();
    el.autoCashOut.disabled = !shell.playing();
    const stake = shell.readStake({ quiet: true });
    const auto = readAutoCashOut({ quiet: true });
    if (stake === null || auto === undefined) el.potential.textContent = '';
    else if (auto === null) el.potential.textContent = t('crash_potential_manual');
    else el.potential.textContent = t('crash_potential_auto', { multiplier: shown(auto), amount: money().amount(crashPayout(stake, auto, terms.maxPayoutMicro)) });
    // what a free bet is played with (D42): this field's auto cash-out, or none
    el.freeBetCaption.textContent = auto === undefined ? '' : freeBetCashOutCaption(auto === null ? null : shown(auto));
    renderCashOut(position());
  }

  const tidyAutoCashOut = () => {
    const parsed = parseMultiplier(el.autoCashOut.value, decimal());
    if (parsed.ok && parsed.cents !== null) el.autoCashOut.value = multiplierInput(parsed.cents, decimal());
    renderBetting();
  };

  el.placeBet.addEventListener('click', placeBet);
  el.cashOut.addEventListener('click', cashOut);
  el.autoCashOut.addEventListener('input', () => {
    el.autoCashOut.removeAttribute('aria-invalid');
    renderBetting();
  });
  el.autoCashOut.addEventListener('blur', tidyAutoCashOut);
  el.autoCashOut.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    tidyAutoCashOut();
  });

  // B bets and C cashes out, unless the player is typing (as L and H bet in dice)
  /** @param {string} key */
  function shortcut(key) {
    if (key === 'b') placeBet();
    else if (key === 'c') cashOut();
  }

  // ---- the history ---------------------------------------------------------------------------

  // a crash round's cells: the stake with its auto cash-out, the crash point and the cash-out
  /** @param {HistoryRound} round */
  function historyCells(round) {
    const auto = round.autoCashOut ? t('crash_history_auto', { multiplier: shownText(round.autoCashOut) }) : t('crash_history_manual');
    const bet = [tag(round.autoCashOut === undefined ? '—' : auto, 'auto')];
    /** @type {Node[]} */
    const result = [];
    const crash = round.flight?.crashMultiplier;
    if (crash && !round.voided) result.push(span(t('crash_history_crash', { multiplier: shownText(crash) }), 'face'));
    const out = round.flight?.cashOutMultiplier;
    if (out && !round.voided) result.push(document.createTextNode(' '), tag(t('crash_history_out', { multiplier: shownText(out) }), 'cashed'));
    return { bet, result };
  }

  // a wire multiplier ("2.37") in the language's figures, without its sign: a check's numbers
  /** @param {string} text */
  const multiplierFigures = (text) => {
    const cents = centsOf(text);
    return cents === null ? text : multiplierInput(cents, decimal());
  };

  return { configure, onRoundState, onResult, betPlacedText, render, renderBetting, historyCells, shortcut, multiplierFigures, betParams };
}

// the canvas's grid: 1, 2 or 5 times a power of ten, four to eight lines over the span
/** @param {number} span */
function niceStep(span) {
  const rough = Math.max(span, 1e-6) / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const factor = rough / power;
  return power * (factor < 1.5 ? 1 : factor < 3.5 ? 2 : factor < 7.5 ? 5 : 10);
}

/**
 * @param {string} text
 * @param {string} className
 */
function span(text, className) {
  const node = document.createElement('span');
  node.textContent = text;
  node.className = className;
  return node;
}

/**
 * @param {string} text
 * @param {string} kind
 */
const tag = (text, kind) => span(text, `tag ${kind}`);

// a refused cash_out (D40), or a refusal of any message (D4, D28), in words
/** @param {string} reason */
export function cashOutRefusalText(reason) {
  switch (reason) {
    case 'too_late':
      return t('crash_refused_too_late');
    case 'already_cashed_out':
      return t('crash_refused_already_cashed_out');
    case 'no_active_bet':
      return t('crash_refused_no_active_bet');
    case 'not_flying':
      return t('crash_refused_not_flying');
    case 'invalid_payload':
      return t('crash_refused_invalid_payload');
  }
  // a refusal of the channel itself (rate_limited, a session no longer valid): the words of
  // the bet's refusals
  return reasonText(reason);
}
