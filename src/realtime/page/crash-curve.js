// @ts-check
// The crash game's numbers on the page (D40): the curve the page draws, multipliers as the
// player reads and types them, and what a win at a multiplier pays. Pure: no DOM, so the unit
// tests check it against the service's own curve and settlement.

import { centsText } from './fair.js';

// m(t) = floor(100 * e^(0.00006 t)) / 100, t in ms since the flight started; 0.00006 = 3 / 50000
const RATE_PER_MS = 3 / 50000;
const ONE_CENTS = 100n;
// D40: an auto cash-out is at least 1.01x
export const MIN_AUTO_CASH_OUT_CENTS = 101n;

// The curve in cents at `ms` into the flight, as the page shows it. The service decides every
// cash-out with the curve in exact integers (src/shared/domain/games/crash-curve.ts), because
// Math.exp is not specified to its last bit; the page only displays, and what it grants is
// always the service's answer (the cash-out's ack). This one agrees with the exact curve at
// every ms of a flight in V8, Chromium's engine (test/unit/page-crash.test.ts).
/** @param {number} ms */
export function curveCents(ms) {
  const t = Math.floor(ms);
  if (!(t > 0)) return ONE_CENTS;
  return BigInt(Math.floor(100 * Math.exp((3 * t) / 50000)));
}

// The curve's value at `ms` as a number, unfloored: what the drawing's line follows
/** @param {number} ms */
export const curveValue = (ms) => Math.exp(RATE_PER_MS * Math.max(0, ms));

// The first ms at which the curve reaches `cents` (where a crash point or a cash-out sits on
// the drawing): the logarithm's guess, corrected against curveCents on both sides
/** @param {bigint} cents */
export function curveTime(cents) {
  if (cents <= ONE_CENTS) return 0;
  let t = Math.max(0, Math.ceil(Math.log(Number(cents) / 100) / RATE_PER_MS));
  while (t > 0 && curveCents(t - 1) >= cents) t -= 1;
  while (curveCents(t) < cents) t += 1;
  return t;
}

// "2.37" on the wire (D40: two decimals) -> 237n; null for anything else
/** @param {string | null | undefined} text */
export function centsOf(text) {
  const match = /^(\d{1,7})\.(\d{2})$/.exec(String(text ?? ''));
  return match ? BigInt(match[1]) * ONE_CENTS + BigInt(match[2]) : null;
}

// 237n -> "2.37", the wire's form of a multiplier
export const wireMultiplier = centsText;

// 237n -> "2.37×" in the language's decimal separator ("2,37×" in German): a multiplier is
// always read with its two decimals
/**
 * @param {bigint} cents
 * @param {string} decimal
 */
export const multiplierText = (cents, decimal) => `${multiplierInput(cents, decimal)}×`;

// what the auto cash-out field holds: "2.00", "2,00"
/**
 * @param {bigint} cents
 * @param {string} decimal
 */
export const multiplierInput = (cents, decimal) => wireMultiplier(cents).replace('.', decimal);

// The player's auto cash-out as typed -> cents: digits, then at most two decimals after a "."
// or the language's own separator ("2", "2.5", "2,50"); a trailing "×" or "x" is allowed. More
// decimals are refused, never cut. An empty field is no auto cash-out (null).
/**
 * @param {string} text
 * @param {string} decimal
 * @returns {{ ok: true, cents: bigint | null } | { ok: false, error: 'format' | 'decimals' }}
 */
export function parseMultiplier(text, decimal) {
  const trimmed = String(text ?? '')
    .trim()
    .replace(/\s*[×xX]$/, '');
  if (trimmed === '') return { ok: true, cents: null };
  const separators = [...new Set(['.', decimal])].map((sign) => sign.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const match = new RegExp(`^(\\d{1,7})(?:(?:${separators})(\\d*))?$`).exec(trimmed);
  if (!match) return { ok: false, error: 'format' };
  const fraction = match[2] ?? '';
  if (fraction.length > 2) return { ok: false, error: 'decimals' };
  return { ok: true, cents: BigInt(match[1]) * ONE_CENTS + BigInt(fraction.padEnd(2, '0')) };
}

// D40: a win at `cents` pays floor(stake * cents / 100), at most maxPayoutMicro
/**
 * @param {bigint} stakeMicro
 * @param {bigint} cents
 * @param {bigint | null} maxPayoutMicro
 */
export function crashPayout(stakeMicro, cents, maxPayoutMicro) {
  const payout = (stakeMicro * cents) / ONE_CENTS;
  return maxPayoutMicro !== null && payout > maxPayoutMicro ? maxPayoutMicro : payout;
}
