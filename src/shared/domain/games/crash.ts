import { minorUnitMicro, roundedPayout } from '../currency.js';
import { MAX_MICRO } from '../money.js';
import { MICRO, isRecord, unprovenCheck, winCallsCheck, type PackCheck, type PackFacts } from '../pack-checks.js';
import { reducedFraction, rtpText, type Rtp } from '../par-sheet.js';
import { bookedPayout } from '../payout.js';
import { openProof, type CrashProof, type CrashProofOutcome, type ProofVerdict } from '../proof.js';
import { roundHash } from '../seeds.js';
import {
  GameConfigError,
  PAYOUT_ROUNDINGS,
  betLimitsCheck,
  configSchema,
  integerField,
  msField,
  stakeStepFields,
  type ConfigField,
  type PayoutRounding,
} from './config.js';
import { curveCents, curveTime } from './crash-curve.js';
import { simulate } from './simulation.js';
import { InvalidBetError, type ExactRtp, type GameModule, type PlayView, type ProofInput, type RoundRecord, type Settlement } from './types.js';

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
// Only the crash point of the outcome is read: a stored round settles from its stored point.
export function settleCrash(stakeMicro: bigint, bet: CrashBet, outcome: Pick<CrashOutcome, 'crashCents'>, config: CrashConfig, cashOutMs?: number): CrashSettlement {
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

// ---- the reads of a stored round (D39): its views, its proof, its dispute pack -------------

// a round's result is known from RESULT on (D40: at its cash-out or its crash); a voided round
// is over too. Before that its crash point is the player's secret to come, shown nowhere.
const isOver = (state: RoundRecord['state']): boolean => state === 'RESULT' || state === 'SETTLED' || state === 'VOIDED';

function crashView(record: RoundRecord): PlayView {
  return {
    crashMultiplier: isOver(record.state) && record.crashCents !== null ? centsText(record.crashCents) : null,
    cashOutMultiplier: record.cashOutCents === null ? null : centsText(record.cashOutCents),
    cashOutMs: record.cashOutMs,
    won: crashWon(record),
  };
}

// D40: a bet won iff it was cashed out (by hand, or by itself at its automatic cash-out)
const crashWon = (record: RoundRecord): boolean | null =>
  record.state === 'RESULT' || record.state === 'SETTLED' ? record.cashOutCents !== null : null;

const textOrNull = (cents: bigint | null): string | null => (cents === null ? null : centsText(cents));

// D40, contract 2.11: the proof of a crash round. The crash point is the stored one, not
// recomputed, so that a verifier checks it; u is x / 2^52 of the round's h, which the round
// does not store.
export function buildCrashProof(input: ProofInput<CrashConfig>): CrashProof {
  const { record, config } = input;
  if (record.crashCents === null) throw new Error(`round ${input.roundId} has no crash point`);
  const derived = crashFromHash(roundHash(input), config.commissionMicro);
  const voided = record.state === 'VOIDED';
  return {
    roundId: input.roundId,
    gameCode: input.gameCode,
    rngVersion: CRASH_RNG_VERSION,
    mathVersion: CRASH_MATH_VERSION,
    serverSeed: input.serverSeed,
    serverSeedHash: input.serverSeedHash,
    clientSeed: input.clientSeed,
    nonce: input.nonce,
    outcome: crashProofOutcome({ ...derived, crashCents: record.crashCents }),
    commissionMicro: config.commissionMicro.toString(),
    maxMultiplier: centsText(config.maxMultiplierCents),
    maxPayoutMicro: config.maxPayoutMicro.toString(),
    payoutRounding: config.payoutRounding,
    currency: input.currency,
    bet: {
      amountMicro: input.stakeMicro.toString(),
      autoCashOut: textOrNull(record.autoCashOutCents),
      cashOutMultiplier: textOrNull(record.cashOutCents),
      cashOutMs: record.cashOutMs,
      payoutMicro: voided ? '0' : input.payoutMicro.toString(),
      voided,
      // D42: a free bet is paid its net (contract 8.4); a paid bet's proof is as it always was
      ...(input.isFree ? { isFree: true as const } : {}),
    },
    sessionId: input.sessionId,
  };
}

// D40: u = x / 2^52 exactly (x < 2^52: a double holds it, and the division by a power of two
// is exact); the multiplier as a JSON number (2.37), which a verifier compares in cents
const crashProofOutcome = (outcome: CrashOutcome): CrashProofOutcome => ({
  type: 'CRASH',
  crashMultiplier: Number(outcome.crashCents) / 100,
  u: Number(outcome.x) / 2 ** 52,
});

// what `rgs verify` recomputed of a crash proof
export type CrashDerivation = {
  serverSeedHash: string;
  hmacHex: string;
  // D40's x (below 2^52), as a decimal string as the service writes every integer it computes
  // in bigints (D18)
  x: string;
  u: number;
  crashMultiplier: string;
  // the bet settled again from the proof's terms (null for a voided round, which settles nothing)
  cashOutMultiplier: string | null;
  won: boolean | null;
  payoutMicro: string;
};

const cents = (text: unknown, min: bigint, max: bigint): bigint | undefined => {
  const value = centsOf(text);
  return value !== undefined && value >= min && value <= max ? value : undefined;
};

// The fields a crash proof needs beside 2.11's, with their types; one problem per bad field.
function crashShapeProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const outcome = body.outcome as Record<string, unknown>;
  if (typeof outcome.crashMultiplier !== 'number' || !(outcome.crashMultiplier >= 1 && outcome.crashMultiplier <= 1000)) {
    problems.push('outcome.crashMultiplier must be a number, 1 to 1000');
  }
  if (typeof outcome.u !== 'number' || !(outcome.u >= 0 && outcome.u < 1)) problems.push('outcome.u must be a number, at least 0 and below 1');
  if (typeof body.commissionMicro !== 'string' || !MICRO.test(body.commissionMicro) || BigInt(body.commissionMicro) > COMMISSION_SCALE) {
    problems.push('commissionMicro must be a decimal string, 0 to 100000');
  }
  if (cents(body.maxMultiplier, 101n, CRASH_MAX_CENTS) === undefined) problems.push('maxMultiplier must be a multiplier with two decimals, 1.01 to 1000.00');
  if (typeof body.maxPayoutMicro !== 'string' || !MICRO.test(body.maxPayoutMicro) || body.maxPayoutMicro === '0') problems.push('maxPayoutMicro must be a positive decimal string');
  if (!(PAYOUT_ROUNDINGS as readonly unknown[]).includes(body.payoutRounding)) problems.push(`payoutRounding must be one of ${PAYOUT_ROUNDINGS.join(', ')}`);
  if (typeof body.currency !== 'string' || body.currency === '') problems.push('currency must be a non-empty string');
  const bet = body.bet;
  if (!isRecord(bet)) return [...problems, 'bet must be an object'];
  if (typeof bet.amountMicro !== 'string' || !MICRO.test(bet.amountMicro) || bet.amountMicro === '0') problems.push('bet.amountMicro must be a positive decimal string');
  if (bet.autoCashOut !== null && cents(bet.autoCashOut, 101n, CRASH_MAX_CENTS) === undefined) problems.push('bet.autoCashOut must be null or a multiplier, 1.01 to 1000.00');
  if (bet.cashOutMultiplier !== null && cents(bet.cashOutMultiplier, CRASH_MIN_CENTS, CRASH_MAX_CENTS) === undefined) {
    problems.push('bet.cashOutMultiplier must be null or a multiplier, 1.00 to 1000.00');
  }
  if (bet.cashOutMs !== null && (!Number.isSafeInteger(bet.cashOutMs) || (bet.cashOutMs as number) < 0)) problems.push('bet.cashOutMs must be null or an integer, minimum 0');
  if (typeof bet.payoutMicro !== 'string' || !MICRO.test(bet.payoutMicro)) problems.push('bet.payoutMicro must be a decimal string');
  if (typeof bet.voided !== 'boolean') problems.push('bet.voided must be a boolean');
  if (bet.isFree !== undefined && bet.isFree !== true) problems.push('bet.isFree must be true or absent');
  return problems;
}

// the configuration a crash proof states, for the settlement (D40); the keys it leaves out do
// not enter the crash point nor the payout
const proofConfig = (proof: CrashProof): CrashConfig => ({
  ...config.defaults,
  commissionMicro: BigInt(proof.commissionMicro),
  maxMultiplierCents: centsOf(proof.maxMultiplier)!,
  maxPayoutMicro: BigInt(proof.maxPayoutMicro),
  payoutRounding: proof.payoutRounding,
});

// The settlement of a stored crash bet (D40) as the service books it: settleCrash given the
// stored cash-out's ms, its payout rounded as the configuration says (D46)
function bookedSettlement(stakeMicro: bigint, autoCashOutCents: bigint | null, crashCents: bigint, c: CrashConfig, currency: string, cashOutMs: number | null) {
  const settled = settleCrash(stakeMicro, { autoCashOutCents }, { crashCents }, c, cashOutMs ?? undefined);
  return { ...settled, payoutMicro: settled.won ? roundedPayout(settled.payoutMicro, c.payoutRounding, currency) : 0n };
}

// contract 2.11's rule for a crash proof (D40): sha256(serverSeed) is the committed hash; the
// HMAC gives x, u = x / 2^52 and the crash point of the proof's edge; and the bet, settled
// again from its stake, its auto cash-out and its cash-out's ms under the proof's terms, was
// cashed out at the proof's multiplier and paid the proof's amount (a voided round paid 0).
export function verifyCrashProof(body: unknown): ProofVerdict<CrashDerivation> {
  const opened = openProof<CrashProof>(body, { type: 'CRASH', rngVersion: CRASH_RNG_VERSION, mathVersion: CRASH_MATH_VERSION, shapeProblems: crashShapeProblems });
  if ('verdict' in opened) return opened.verdict;
  const { proof, checks, hash } = opened;

  const c = proofConfig(proof);
  const derived = crashFromHash(roundHash(proof), c.commissionMicro);
  const shown = crashProofOutcome(derived);
  checks.push({ name: 'crash_multiplier', ok: shown.crashMultiplier === proof.outcome.crashMultiplier, expected: shown.crashMultiplier, actual: proof.outcome.crashMultiplier });
  checks.push({ name: 'u', ok: shown.u === proof.outcome.u, expected: shown.u, actual: proof.outcome.u });

  const { bet } = proof;
  let settled: { cashOutMultiplier: string | null; won: boolean | null; payoutMicro: string };
  if (bet.voided) {
    // the stake was refunded: nothing paid, whatever the flight would have given
    settled = { cashOutMultiplier: bet.cashOutMultiplier, won: null, payoutMicro: '0' };
  } else {
    const booked = bookedSettlement(BigInt(bet.amountMicro), centsOf(bet.autoCashOut) ?? null, derived.crashCents, c, proof.currency, bet.cashOutMs);
    // D42: a free bet is booked its net, max(payout - stake, 0) (contract 8.4)
    const paid = bookedPayout(booked.payoutMicro, BigInt(bet.amountMicro), bet.isFree === true);
    settled = { cashOutMultiplier: textOrNull(booked.cashOutCents), won: booked.won, payoutMicro: paid.toString() };
    checks.push({ name: 'cash_out', ok: settled.cashOutMultiplier === bet.cashOutMultiplier, expected: settled.cashOutMultiplier, actual: bet.cashOutMultiplier });
  }
  checks.push({ name: 'payout', ok: settled.payoutMicro === bet.payoutMicro, expected: settled.payoutMicro, actual: bet.payoutMicro });
  return {
    valid: checks.every((check) => check.ok),
    checks,
    derived: {
      serverSeedHash: hash,
      hmacHex: derived.hmacHex,
      x: derived.x.toString(),
      u: shown.u,
      crashMultiplier: centsText(derived.crashCents),
      ...settled,
    },
  };
}

// D32: a crash round's par sheet is the exact return to player of its own bet (D40's par
// sheet depends on the bet: its auto cash-out, and through the payout cap its stake), with the
// whole configuration it was played under, as written (rgs game config's form), and the
// round's currency, whose minor unit a `minor_unit` configuration rounds each payout to (D46:
// the return is then counted as paid)
export type CrashParSheet = {
  gameCode: string;
  config: Record<string, string | number>;
  currency: string;
  bet: Record<string, string | null>;
  stakeMicro: string;
  rtp: Rtp;
};

function crashParSheet(c: CrashConfig, autoCashOutCents: bigint | null, stakeMicro: bigint, currency: string): CrashParSheet {
  const bet = { autoCashOutCents };
  const unit = c.payoutRounding === 'minor_unit' ? minorUnitMicro(currency) : undefined;
  const { fraction, decimal } = crashRtp(c, bet, stakeMicro, unit);
  return { gameCode: 'crash', config: config.write(c), currency, bet: crashBetWrite(bet), stakeMicro: stakeMicro.toString(), rtp: { fraction, decimal } };
}

const crashBetWrite = (bet: CrashBet) => ({ autoCashOut: textOrNull(bet.autoCashOutCents) });

// The par sheet read back: its configuration parsed by the game's schema, its bet and stake;
// or the problem
function readParSheet(sheet: unknown): { config: CrashConfig; bet: CrashBet; stakeMicro: bigint; currency: string } | string {
  const form = 'par-sheet.json must hold gameCode, config, currency, bet, stakeMicro and rtp';
  if (
    !isRecord(sheet) ||
    !isRecord(sheet.config) ||
    !isRecord(sheet.bet) ||
    !isRecord(sheet.rtp) ||
    typeof sheet.currency !== 'string' ||
    typeof sheet.stakeMicro !== 'string' ||
    !MICRO.test(sheet.stakeMicro) ||
    sheet.stakeMicro === '0'
  ) {
    return form;
  }
  try {
    const c = config.parse(sheet.config, { currency: sheet.currency });
    return { config: c, bet: crashBetParse(sheet.bet, c), stakeMicro: BigInt(sheet.stakeMicro), currency: sheet.currency };
  } catch (err) {
    if (err instanceof GameConfigError || err instanceof InvalidBetError) return `${form}: ${err.message}`;
    throw err;
  }
}

// D32, D40: a crash round's pack. The par sheet's return is the module's for the bet the pack
// holds; the proof (once the seed is revealed) reproduces the crash point and the settlement and
// is this round's; the payout follows from the crash point (the proof's when revealed, else
// round.json's), the stored cash-out's ms and the par sheet's configuration.
function crashPackChecks({ roundId, round, bet, proof, sheet, walletCalls }: PackFacts): PackCheck[] {
  const checks: PackCheck[] = [];
  const check = (name: string, ok: boolean, detail?: unknown) => checks.push(detail === undefined ? { name, ok } : { name, ok, detail });

  const read = readParSheet(sheet);
  const stated = typeof read === 'string' ? undefined : read;
  if (!stated) check('par_sheet', false, read);
  else {
    const expected = crashParSheet(stated.config, stated.bet.autoCashOutCents, stated.stakeMicro, stated.currency);
    const actual = sheet as CrashParSheet;
    const sameRtp = JSON.stringify(expected.rtp) === JSON.stringify(actual.rtp);
    // the sheet is the pack's bet's: its auto cash-out, its stake, its round's currency
    const sameBet = !bet || (bet.autoCashOut === expected.bet.autoCashOut && bet.amountMicro === expected.stakeMicro && round.currency === expected.currency);
    check('par_sheet', sameRtp && sameBet, sameRtp && sameBet ? undefined : sameRtp ? 'par-sheet.json is for another bet or currency than bets.json and round.json' : { expected: expected.rtp, actual: actual.rtp });
  }

  const roundCents = centsOf(round.crashMultiplier);
  let crashCents = roundCents;
  let proven = false;
  const unproven = unprovenCheck(proof, round, round.crashMultiplier !== null);
  if (unproven) checks.push(unproven);
  else {
    const verdict = verifyCrashProof(proof);
    check('proof', verdict.valid, verdict.valid ? undefined : verdict.checks.filter((c) => !c.ok));
    if (verdict.valid) {
      const p = proof as CrashProof;
      const c = stated?.config;
      const same =
        p.roundId === roundId &&
        Number(roundCents) / 100 === p.outcome.crashMultiplier &&
        p.currency === round.currency &&
        (!c || (p.commissionMicro === c.commissionMicro.toString() && p.maxMultiplier === centsText(c.maxMultiplierCents) && p.maxPayoutMicro === c.maxPayoutMicro.toString() && p.payoutRounding === c.payoutRounding)) &&
        (!bet || (p.bet.amountMicro === bet.amountMicro && p.bet.autoCashOut === bet.autoCashOut)) &&
        p.bet.cashOutMultiplier === round.cashOutMultiplier &&
        p.bet.cashOutMs === round.cashOutMs &&
        p.bet.payoutMicro === round.totalPayoutsMicro &&
        (!bet || (p.bet.isFree === true) === (bet.isFree === true));
      check('proof_matches_round', same, same ? undefined : 'the proof\'s round, crash point, terms or bet differ from round.json, bets.json and par-sheet.json');
      crashCents = centsOf(verdict.derived!.crashMultiplier);
      proven = true;
    }
  }

  if (bet && stated) checks.push(...crashPayoutChecks(round, bet, stated.config, crashCents, proven, walletCalls));
  return checks;
}

function crashPayoutChecks(
  round: Record<string, unknown>,
  bet: Record<string, unknown>,
  c: CrashConfig,
  crashCents: bigint | undefined,
  proven: boolean,
  walletCalls: unknown,
): PackCheck[] {
  const autoCashOutCents = bet.autoCashOut === null ? null : cents(bet.autoCashOut, 101n, CRASH_MAX_CENTS);
  if (typeof bet.amountMicro !== 'string' || !MICRO.test(bet.amountMicro) || bet.amountMicro === '0' || autoCashOutCents === undefined) {
    return [{ name: 'payout', ok: false, detail: 'the bet must carry amountMicro and autoCashOut' }];
  }
  if (round.state === 'VOIDED') {
    const ok = round.totalPayoutsMicro === '0';
    return [{ name: 'payout', ok, detail: ok ? 'voided: nothing paid' : { expected: '0', actual: round.totalPayoutsMicro } }];
  }
  if (crashCents === undefined) return [{ name: 'payout', ok: false, detail: 'a settled round must have its crash point' }];
  const cashOutMs = round.cashOutMs === null ? null : Number.isSafeInteger(round.cashOutMs) && (round.cashOutMs as number) >= 0 ? (round.cashOutMs as number) : undefined;
  if (cashOutMs === undefined || typeof round.currency !== 'string') return [{ name: 'payout', ok: false, detail: 'round.json must carry currency and cashOutMs (null or ms)' }];
  const booked = bookedSettlement(BigInt(bet.amountMicro), autoCashOutCents, crashCents, c, round.currency, cashOutMs);
  // D42: a free bet's payout is booked net of its stake (contract 8.4)
  const expected = bookedPayout(booked.payoutMicro, BigInt(bet.amountMicro), bet.isFree === true).toString();
  const cashOutMultiplier = textOrNull(booked.cashOutCents);
  const recorded = bet.payoutMicro ?? '0';
  const ok = recorded === expected && round.totalPayoutsMicro === expected && round.cashOutMultiplier === cashOutMultiplier;
  const checks: PackCheck[] = [
    {
      name: 'payout',
      ok,
      detail: {
        crashMultiplier: centsText(crashCents),
        outcomeProven: proven,
        cashOutMs,
        cashOutMultiplier,
        won: booked.won,
        expected,
        ...(ok ? {} : { betPayoutMicro: recorded, totalPayoutsMicro: round.totalPayoutsMicro, roundCashOutMultiplier: round.cashOutMultiplier }),
      },
    },
  ];
  // the win calls carried that amount (contract 2.7)
  const wins = winCallsCheck(walletCalls, booked.won, expected);
  if (wins) checks.push(wins);
  return checks;
}

const crashBetParse = (input: Readonly<Record<string, unknown>>, c: CrashConfig): CrashBet => {
  const unknown = Object.keys(input).filter((key) => key !== 'autoCashOut');
  if (unknown.length) throw new InvalidBetError(`a crash bet has no ${unknown.join(', ')}: its parameter is autoCashOut`);
  if (input.autoCashOut === undefined || input.autoCashOut === null) return { autoCashOutCents: null };
  const parsed = centsOf(input.autoCashOut);
  if (parsed === undefined || parsed < 101n || parsed > c.maxMultiplierCents) {
    throw new InvalidBetError(`autoCashOut must be a multiplier with two decimals, 1.01 to ${centsText(c.maxMultiplierCents)}: got ${JSON.stringify(input.autoCashOut)}`);
  }
  return { autoCashOutCents: parsed };
};

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
    parse: crashBetParse,
    write: crashBetWrite,
    columns: (bet) => ({ side: null, autoCashOutCents: bet.autoCashOutCents }),
  },
  derive: (h, c) => crashFromHash(h, c.commissionMicro),
  proofOutcome: crashProofOutcome,
  rtp: crashRtp,
  maxMultiplier: (c) => centsText(c.maxMultiplierCents),
  settle: (stakeMicro, bet, outcome, c, play) => settleCrash(stakeMicro, bet, outcome, c, play?.cashOutMs),
  // D39: the bet's automatic cash-out is the only cash-out a simulation plays
  simulate: (input) => simulate({ derive: (h, c) => crashFromHash(h, c.commissionMicro), settle: settleCrash, rtp: crashRtp }, input),
  rounds: {
    recorded: (record) => record.crashCents !== null,
    won: crashWon,
    betParams: (record) => crashBetWrite({ autoCashOutCents: record.autoCashOutCents }),
    view: crashView,
    checkTerms: (commissionMicro) => ({ commissionMicro: commissionMicro.toString() }),
    proof: buildCrashProof,
    verifyProof: verifyCrashProof,
    parSheet: (c, record, stakeMicro, currency) => crashParSheet(c, record.autoCashOutCents, stakeMicro, currency),
    packChecks: crashPackChecks,
    // the crash point and the cash-out (its ms into the flight) as the flight recorded them (D40)
    settlement(stakeMicro, record, c) {
      if (record.crashCents === null) throw new Error('a crash round in RESULT has its crash point');
      return settleCrash(stakeMicro, { autoCashOutCents: record.autoCashOutCents }, { crashCents: record.crashCents }, c, record.cashOutMs ?? undefined);
    },
  },
} as const satisfies GameModule<CrashConfig, CrashBet, CrashOutcome, CrashSettlement>;
