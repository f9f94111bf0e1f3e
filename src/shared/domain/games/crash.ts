import { MAX_MICRO } from '../money.js';
import { reducedFraction, rtpText } from '../par-sheet.js';
import type { CrashProofOutcome } from '../proof.js';
import { betLimitsCheck, configSchema, integerField, msField, stakeStepFields, type ConfigField, type PayoutRounding } from './config.js';
import { curveCents, curveTime } from './crash-curve.js';
import { InvalidBetError, type ExactRtp, type GameModule, type Settlement } from './types.js';

// The crash game (D40), pure: the crash point of a round from its `h` (D2), the settlement of a
// bet, and the exact par sheet. The clock, the flight and the cash-out message are the
// engine's; the curve is crash-curve.ts. Multipliers are held in cents (1.00x is 100n), as D40
// writes crashCents.

export const CRASH_RNG_VERSION = 'crash-hmac-sha256-v1';
export const CRASH_MATH_VERSION = 'crash-1.0.0';

// D40: x is the first 52 bits of h, so the space of outcomes has 2^52 points
export const CRASH_SPACE_BITS = 52n;
// D40: the crash point is clamped to [1.00x, 1000.00x]
export const CRASH_MIN_CENTS = 100n;
export const CRASH_MAX_CENTS = 100000n;
// the commission is in units of 1/100000 (contract 2.12: commissionMicro / 100000)
const COMMISSION_SCALE = 100000n;

export type CrashConfig = {
  bettingWindowMs: number;
  cooldownMs: number;
  minBetMicro: bigint;
  maxBetMicro: bigint;
  // D40: the house edge e, in the crash distribution itself; nothing is deducted from a win
  commissionMicro: bigint;
  // D40 maxMultiplier, in cents: a bet still flying there is cashed out there
  maxMultiplierCents: bigint;
  maxPayoutMicro: bigint;
  // D46
  stakeStepMicro: bigint;
  payoutRounding: PayoutRounding;
};

// autoCashOutCents null: no auto cash-out (the bet rides until the player cashes out, the
// crash, maxMultiplier or maxPayoutMicro)
export type CrashBet = { autoCashOutCents: bigint | null };

export type CrashOutcome = { x: bigint; crashCents: bigint; hmacHex: string };

// cashOutCents: the multiplier the bet was cashed out at (null when lost)
export type CrashSettlement = Settlement & { cashOutCents: bigint | null };

// "2.37" for 237n: D40 writes multipliers with two decimals
export const centsText = (cents: bigint): string => `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;

// the inverse of centsText; undefined for anything but a multiplier with exactly two decimals
export function centsOf(text: unknown): bigint | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^([0-9]{1,7})\.([0-9]{2})$/.exec(text);
  return match ? BigInt(match[1]!) * 100n + BigInt(match[2]!) : undefined;
}

// D40: crashCents = floor(100 * (100000 - e) * 2^52 / ((2^52 - x) * 100000)), clamped to
// [100, 100000]. `bits` is the size of the space, 52 in the game; a test counts a small space
// by brute force against countAtLeast with it.
export function crashCentsOf(x: bigint, commissionMicro: bigint, bits = CRASH_SPACE_BITS): bigint {
  const space = 1n << bits;
  if (x < 0n || x >= space) throw new RangeError(`x must be 0 to 2^${bits} - 1: ${x}`);
  checkCommission(commissionMicro);
  const raw = (100n * (COMMISSION_SCALE - commissionMicro) * space) / ((space - x) * COMMISSION_SCALE);
  return raw < CRASH_MIN_CENTS ? CRASH_MIN_CENTS : raw > CRASH_MAX_CENTS ? CRASH_MAX_CENTS : raw;
}

function checkCommission(commissionMicro: bigint): void {
  if (commissionMicro < 0n || commissionMicro > COMMISSION_SCALE) throw new RangeError(`commission must be 0 to ${COMMISSION_SCALE} micro: ${commissionMicro}`);
}

// D40: x = bytes 0..6 of h, big-endian, shifted right by 4 (the first 52 bits)
export function crashFromHash(h: Buffer, commissionMicro: bigint): CrashOutcome {
  const x = ((BigInt(h.readUInt32BE(0)) << 24n) | BigInt(h.readUIntBE(4, 3))) >> 4n;
  return { x, crashCents: crashCentsOf(x, commissionMicro), hmacHex: h.toString('hex') };
}

// The number of x in [0, 2^bits) whose crash point is at least `cents`, in closed form.
//
// Write N = 2^bits, K = 100 * (100000 - e) * N, raw(x) = floor(K / ((N - x) * 100000)). For
// 101 <= a <= 100000 the clamp changes nothing: it raises a raw point below 100 to 100, which
// is still below a, and lowers one above 100000 to 100000, which is still at least a. And for
// an integer a, floor(y) >= a iff y >= a. So
//   crashCents(x) >= a  iff  K >= a * 100000 * (N - x)  iff  N - x <= q,  q = floor(K / (a * 100000))
// (N - x is an integer), that is iff x >= N - q: the top min(q, N) values of x. Every point is
// at least 100 (the clamp), none above 100000.
export function countAtLeast(cents: bigint, commissionMicro: bigint, bits = CRASH_SPACE_BITS): bigint {
  checkCommission(commissionMicro);
  const space = 1n << bits;
  if (cents <= CRASH_MIN_CENTS) return space;
  if (cents > CRASH_MAX_CENTS) return 0n;
  const q = (100n * (COMMISSION_SCALE - commissionMicro) * space) / (cents * COMMISSION_SCALE);
  return q < space ? q : space;
}

// D40: a bet is cashed out automatically at the first multiplier whose payout,
// floor(stake * cents / 100), reaches maxPayoutMicro: the least cents with
// stake * cents >= 100 * maxPayoutMicro
export const payoutCapCents = (stakeMicro: bigint, maxPayoutMicro: bigint): bigint => (100n * maxPayoutMicro + stakeMicro - 1n) / stakeMicro;

// Where a bet is cashed out when nothing else happens first: its auto cash-out, maxMultiplier,
// or the payout cap, whichever is lowest (D40). The curve is non-decreasing, so the lowest is
// also the first reached.
export function automaticCashOutCents(stakeMicro: bigint, bet: CrashBet, config: CrashConfig): bigint {
  if (stakeMicro <= 0n) throw new RangeError(`stake must be positive: ${stakeMicro}`);
  return min(ridingTarget(bet, config), payoutCapCents(stakeMicro, config.maxPayoutMicro));
}

// the bet's own target, its auto cash-out or maxMultiplier, whichever is lower
const ridingTarget = (bet: CrashBet, config: CrashConfig): bigint => min(bet.autoCashOutCents ?? config.maxMultiplierCents, config.maxMultiplierCents);

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

// D40: a win pays floor(stake * cents / 100), commission already being in the crash point; at
// most maxPayoutMicro
export const crashPayout = (stakeMicro: bigint, cents: bigint, maxPayoutMicro: bigint): bigint => min((stakeMicro * cents) / 100n, maxPayoutMicro);

// The settlement of a bet (D40). With no cash-out message: won at the automatic cash-out
// (autoCashOut, maxMultiplier or the payout cap, the lowest) iff it is at most the crash
// point (`a <= crashMultiplier`), else lost.
//
// cashOutMs, a cash_out's arrival in ms after the flight started, wins at m(cashOutMs) iff it
// comes before the bet has ended: before its crash time t(crashPoint), the first ms at which
// the curve reaches the crash point (so a crash at 1.00x ends the bet at 0 ms: D40 resolves it
// at once), and before the automatic cash-out's time t(a) when that one wins. Before t(crash)
// the curve is below the crash point, so D40's `m(t) <= crashMultiplier` holds. At t(crash)
// itself the bet has ended: a manual cash-out is too late, while an auto cash-out at exactly
// the crash point wins, since D40 decides that one on `a <= crashMultiplier`.
export function settleCrash(stakeMicro: bigint, bet: CrashBet, outcome: CrashOutcome, config: CrashConfig, cashOutMs?: number): CrashSettlement {
  if (cashOutMs !== undefined && (!Number.isSafeInteger(cashOutMs) || cashOutMs < 0)) throw new RangeError(`cashOutMs must be an integer number of ms, at least 0: ${cashOutMs}`);
  const automatic = automaticCashOutCents(stakeMicro, bet, config);
  const reached = automatic <= outcome.crashCents;
  const won = (cents: bigint): CrashSettlement => ({ won: true, payoutMicro: crashPayout(stakeMicro, cents, config.maxPayoutMicro), cashOutCents: cents });
  if (cashOutMs !== undefined && cashOutMs < curveTime(reached ? automatic : outcome.crashCents)) return won(curveCents(cashOutMs));
  return reached ? won(automatic) : { won: false, payoutMicro: 0n, cashOutCents: null };
}

// The exact return to player of a bet whose automatic cash-out is at `a` (D40 par sheet):
//   RTP = P(crashCents >= a) * payout per unit staked = countAtLeast(a) / 2^52 * a / 100,
// over the 2^52 values of x. With countAtLeast's q = floor(100 * (1 - e) * 2^52 / a), this is
// 1 - e less the floor's part, which is under a / (100 * 2^52) (below 2.3e-13 for any a up to
// 1000x): D40's "P(crash >= m) = (1 - e)/m for every m", made exact. Given a stake, the payout
// cap applies too: a is then at most the cap's cents, and the payout per unit staked
// min(a / 100, maxPayoutMicro / stake).
//
// With `payoutUnitMicro` (D46 minor_unit), the payout is counted as paid: floor(stake * a /
// 100), at most maxPayoutMicro, rounded down to the unit.
export function crashRtp(config: CrashConfig, bet: CrashBet, stakeMicro?: bigint, payoutUnitMicro?: bigint): ExactRtp {
  const space = 1n << CRASH_SPACE_BITS;
  let fraction;
  if (stakeMicro === undefined) {
    const target = ridingTarget(bet, config);
    fraction = reducedFraction(countAtLeast(target, config.commissionMicro) * target, 100n * space);
  } else if (payoutUnitMicro !== undefined) {
    const target = automaticCashOutCents(stakeMicro, bet, config);
    const paid = crashPayout(stakeMicro, target, config.maxPayoutMicro);
    fraction = reducedFraction(countAtLeast(target, config.commissionMicro) * (paid - (paid % payoutUnitMicro)), space * stakeMicro);
  } else {
    const target = automaticCashOutCents(stakeMicro, bet, config);
    const paid = min(target * stakeMicro, 100n * config.maxPayoutMicro);
    fraction = reducedFraction(countAtLeast(target, config.commissionMicro) * paid, 100n * space * stakeMicro);
  }
  return { ...fraction, ...rtpText(fraction) };
}

// D40: "1.01" to "1000.00", with two decimals
const multiplierField: ConfigField<bigint> = {
  form: 'a multiplier with two decimals, as a string ("2.00")',
  read: centsOf,
  write: centsText,
  min: 101n,
  max: CRASH_MAX_CENTS,
};

// Defaults: D40 (windows, edge, maxMultiplier, maxPayoutMicro) and D9 (bets, as dice's).
// Bounds where D40 is silent: the windows and amounts as dice's (their columns' ranges), the
// commission 0% to 100% as dice's (D9), and maxPayoutMicro at least what the largest bet wins
// at 1.01x, the least auto cash-out, so that the cap never cashes a bet out below it.
const config = configSchema<CrashConfig>(
  'crash',
  {
    bettingWindowMs: { ...msField(1), default: 6000 },
    cooldownMs: { ...msField(0), default: 3000 },
    minBetMicro: { ...integerField(1n), default: 10000n },
    maxBetMicro: { ...integerField(1n), default: 100000000n },
    commissionMicro: { ...integerField(0n, COMMISSION_SCALE), default: 3000n },
    maxMultiplierCents: { ...multiplierField, key: 'maxMultiplier', default: CRASH_MAX_CENTS },
    maxPayoutMicro: { ...integerField(1n), default: (c) => min(c.maxBetMicro * 1000n, MAX_MICRO) },
    ...stakeStepFields,
  },
  [
    betLimitsCheck,
    (c) => {
      const least = (c.maxBetMicro * 101n + 99n) / 100n;
      return c.maxPayoutMicro < least ? `maxPayoutMicro must be at least ${least} (maxBetMicro * 1.01, rounded up): got ${c.maxPayoutMicro}` : undefined;
    },
  ],
);

export const crashModule = {
  gameCode: 'crash' as const,
  kind: 'shared',
  name: 'Crash',
  rngVersion: CRASH_RNG_VERSION,
  mathVersion: CRASH_MATH_VERSION,
  features: ['auto_cash_out'],
  flight: true,
  config,
  bet: {
    keys: [{ key: 'autoCashOut', description: 'the multiplier at which the bet cashes out by itself, two decimals ("2.00"), 1.01 to maxMultiplier', example: '2.00' }],
    parse(input, c) {
      const unknown = Object.keys(input).filter((key) => key !== 'autoCashOut');
      if (unknown.length) throw new InvalidBetError(`a crash bet has no ${unknown.join(', ')}: its parameter is autoCashOut`);
      if (input.autoCashOut === undefined || input.autoCashOut === null) return { autoCashOutCents: null };
      const cents = centsOf(input.autoCashOut);
      if (cents === undefined || cents < 101n || cents > c.maxMultiplierCents) {
        throw new InvalidBetError(`autoCashOut must be a multiplier with two decimals, 1.01 to ${centsText(c.maxMultiplierCents)}: got ${JSON.stringify(input.autoCashOut)}`);
      }
      return { autoCashOutCents: cents };
    },
    write: (bet) => ({ autoCashOut: bet.autoCashOutCents === null ? null : centsText(bet.autoCashOutCents) }),
  },
  derive: (h, c) => crashFromHash(h, c.commissionMicro),
  // D40: u = x / 2^52 exactly (x < 2^52: a double holds it, and the division by a power of two
  // is exact); the multiplier as a JSON number (2.37), which a verifier compares in cents
  proofOutcome: (outcome): CrashProofOutcome => ({ type: 'CRASH', crashMultiplier: Number(outcome.crashCents) / 100, u: Number(outcome.x) / 2 ** 52 }),
  rtp: crashRtp,
  maxMultiplier: (c) => centsText(c.maxMultiplierCents),
  settle: (stakeMicro, bet, outcome, c, play) => settleCrash(stakeMicro, bet, outcome, c, play?.cashOutMs),
} as const satisfies GameModule<CrashConfig, CrashBet, CrashOutcome, CrashSettlement>;
