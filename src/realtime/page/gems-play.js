// @ts-check
// A Gem Vault play (D41) in words and drawings, shared by the two pages that show one: the game
// page (gems.js), which shows a play's steps one after the other as it happens, and the recall
// page (recall.js, D33), which shows a finished play's steps all at once. Both read the same
// MULTI outcome (contract 2.11: the base spin's grid, then every event in order with what it
// paid), so both say each event with the same words and draw each grid the same way.

import { t } from './i18n.js';

/** @typedef {import('../../shared/domain/player-channel.js').MultiEvent} MultiEvent */
/** @typedef {import('./money.js').MoneyFormat} MoneyFormat */

// docs/games/gems.md "Reels and lines": each line's row on reels 1, 2 and 3
export const LINES = [
  [1, 1, 1],
  [0, 0, 0],
  [2, 2, 2],
  [0, 1, 2],
  [2, 1, 0],
];
export const ROWS = 3;
export const REELS = 3;
const SCATTER = 'V';

// a symbol's name in the player's language (docs/games/gems.md "Symbols and pays")
/** @type {Record<string, () => string>} */
const SYMBOL_NAMES = {
  W: () => t('gems_symbol_W'),
  D: () => t('gems_symbol_D'),
  R: () => t('gems_symbol_R'),
  E: () => t('gems_symbol_E'),
  S: () => t('gems_symbol_S'),
  A: () => t('gems_symbol_A'),
  T: () => t('gems_symbol_T'),
  V: () => t('gems_symbol_V'),
};
/** @param {string} symbol */
export const symbolName = (symbol) => (SYMBOL_NAMES[symbol] ?? (() => symbol))();

// ---- the wire's events, read defensively (the map types them as unknown, D41) --------------

/** @param {unknown} value @returns {Record<string, unknown>} */
const record = (value) => (value !== null && typeof value === 'object' ? /** @type {Record<string, unknown>} */ (value) : {});
/** @param {unknown} value */
const num = (value) => (typeof value === 'number' && Number.isFinite(value) ? value : null);
// a grid[row][reel] of symbols, or null when the value is not one
/** @param {unknown} value @returns {string[][] | null} */
export function gridOf(value) {
  if (!Array.isArray(value) || value.length !== ROWS) return null;
  const rows = value.map((row) => (Array.isArray(row) && row.length === REELS && row.every((s) => typeof s === 'string') ? /** @type {string[]} */ (row) : null));
  return rows.every((row) => row !== null) ? /** @type {string[][]} */ (rows) : null;
}
/** @param {unknown} value @returns {{ line: number, symbol: string }[]} */
const lineWinsOf = (value) =>
  Array.isArray(value)
    ? value.flatMap((win) => {
        const line = num(record(win).line);
        const symbol = record(win).symbol;
        return line !== null && LINES[line] && typeof symbol === 'string' ? [{ line, symbol }] : [];
      })
    : [];

/** @param {number} line */
const lineCells = (line) => (LINES[line] ?? []).map((row, reel) => `${row}-${reel}`);

/**
 * One step of a play as the pages show it
 * @typedef {object} Step
 * @property {string} type the event's type, or BASE for the base spin's grid
 * @property {string[][] | null} grid the grid to show (null: keep the one shown)
 * @property {string[]} cells the cells to light, as "row-reel"
 * @property {string} text the event in words ('' for the base spin)
 * @property {string | null} feature the feature's caption from this step on
 * @property {string | null} jackpot a jackpot won, in words
 * @property {boolean} won whether the step paid
 * @property {string} payoutMicro what the step paid ("0" for the base spin, whose lines pay as events)
 */

// A play's outcome as the steps the pages show: the base spin's grid, its line wins one by one,
// the feature's trigger, each free spin, the jackpot (the events' own order, D41). A step for
// an event of a type this page does not know is left out rather than drawn wrong; its payout
// still counts in the play's total, which the service states.
/**
 * @param {{ baseGame: unknown, events: MultiEvent[] }} play
 * @param {MoneyFormat} money
 * @returns {Step[]}
 */
export function playSteps(play, money) {
  /** @type {Step[]} */
  const steps = [];
  const base = gridOf(record(play.baseGame).grid);
  if (base) steps.push({ type: 'BASE', grid: base, cells: [], text: '', feature: null, jackpot: null, won: false, payoutMicro: '0' });
  const spins = play.events.filter((event) => event.type === 'FREE_SPIN').length;
  let freeSpins = spins;
  for (const event of play.events) {
    const sub = record(event.subOutcome);
    const amount = money.amount(event.payoutMicro);
    const won = BigInt(event.payoutMicro) > 0n;
    const paid = { won, payoutMicro: event.payoutMicro };
    if (event.type === 'LINE_WIN') {
      const [win] = lineWinsOf([sub]);
      const line = win ? win.line : -1;
      steps.push({
        type: event.type,
        grid: null,
        cells: win ? lineCells(line) : [],
        text: t('gems_line_win', { line: line + 1, symbol: win ? symbolName(win.symbol) : '—', amount }),
        feature: null,
        jackpot: null,
        ...paid,
      });
    } else if (event.type === 'FEATURE_TRIGGER') {
      const multiplier = num(sub.multiplier) ?? 1;
      freeSpins = num(sub.freeSpins) ?? spins;
      const scatters = num(sub.scatters);
      const text =
        sub.purchased === true || scatters === null
          ? t('gems_trigger_bought', { spins: freeSpins, multiplier })
          : t('gems_trigger', { scatters, spins: freeSpins, multiplier, amount });
      const vaults = base ? base.flatMap((row, r) => row.flatMap((symbol, reel) => (symbol === SCATTER ? [`${r}-${reel}`] : []))) : [];
      steps.push({ type: event.type, grid: null, cells: vaults, text, feature: t('gems_feature_caption', { spins: freeSpins, multiplier }), jackpot: null, ...paid });
    } else if (event.type === 'FREE_SPIN') {
      const spin = (num(sub.spin) ?? 0) + 1;
      const multiplier = num(sub.multiplier) ?? 1;
      const lines = lineWinsOf(sub.lineWins);
      const lit = [...new Set(lines.flatMap((win) => lineCells(win.line)))];
      steps.push({
        type: event.type,
        grid: gridOf(sub.grid),
        cells: lit,
        text: won ? t('gems_free_spin_win', { spin, spins: freeSpins, amount }) : t('gems_free_spin', { spin, spins: freeSpins }),
        feature: t('gems_free_spin_caption', { spin, spins: freeSpins, multiplier }),
        jackpot: null,
        ...paid,
      });
    } else if (event.type === 'JACKPOT') {
      steps.push({ type: event.type, grid: null, cells: [], text: t('gems_jackpot_event', { amount }), feature: null, jackpot: t('gems_jackpot_yours', { amount }), ...paid });
    }
  }
  return steps;
}

// The grid in words, row by row, for a screen reader (its drawing is aria-hidden); null: not
// spun yet
/** @param {string[][] | null} grid */
export function gridLabel(grid) {
  if (!grid) return t('gems_grid_empty');
  const rows = grid.map((row) => row.map(symbolName).join(', ')).join(' / ');
  return t('gems_grid_label', { rows });
}

// Draws a grid into the 9 cells of a .gems-grid (row by row), lighting `cells` ("row-reel") as
// a line's win ('hit') or the feature's Vaults ('scatter'); `motion` replays the landing
/**
 * @param {HTMLElement[]} gems the grid's 9 .gem cells
 * @param {string[][]} grid
 * @param {{ cells?: string[], lit?: 'hit' | 'scatter', motion?: boolean }} [options]
 */
export function drawGems(gems, grid, { cells = [], lit = 'hit', motion = false } = {}) {
  for (let row = 0; row < ROWS; row++) {
    for (let reel = 0; reel < REELS; reel++) {
      const cell = gems[row * REELS + reel];
      if (!cell) continue;
      cell.dataset.symbol = grid[row]?.[reel] ?? '';
      cell.classList.remove('spun', 'hit', 'scatter');
      if (motion) {
        void cell.offsetWidth;
        cell.classList.add('spun');
      }
    }
  }
  lightGems(gems, cells, lit);
}

// lights the cells ("row-reel") of a grid's 9 .gem cells, and no other
/**
 * @param {HTMLElement[]} gems
 * @param {string[]} cells
 * @param {'hit' | 'scatter'} lit
 */
export function lightGems(gems, cells, lit) {
  for (const cell of gems) cell.classList.remove('hit', 'scatter');
  for (const key of cells) {
    const [row, reel] = key.split('-').map(Number);
    gems[row * REELS + reel]?.classList.add(lit);
  }
}

// A new .gems-grid showing a grid (the recall page's, one per spin), named in words
/**
 * @param {string[][]} grid
 * @param {{ cells?: string[], lit?: 'hit' | 'scatter', className?: string }} [options]
 */
export function gemsGridElement(grid, { cells = [], lit = 'hit', className = '' } = {}) {
  const element = document.createElement('div');
  element.className = className ? `gems-grid ${className}` : 'gems-grid';
  element.setAttribute('role', 'img');
  element.setAttribute('aria-label', gridLabel(grid));
  const gems = Array.from({ length: ROWS * REELS }, () => {
    const cell = document.createElement('span');
    cell.className = 'gem';
    cell.setAttribute('aria-hidden', 'true');
    return cell;
  });
  element.append(...gems);
  drawGems(gems, grid, { cells, lit });
  return element;
}

// The sum of the events' payouts: what the play won (D41: the events' payouts sum to the
// play's payout exactly); a free play's booked payout is that less its stake (D42)
/** @param {MultiEvent[]} events */
export function eventsTotal(events) {
  return events.reduce((sum, event) => sum + (/^\d+$/.test(event.payoutMicro) ? BigInt(event.payoutMicro) : 0n), 0n);
}
