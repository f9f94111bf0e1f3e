import { MULTIPLIER_SCALE, formatMultiplier } from './payout.js';
import type { Side } from './dice.js';

// The par sheet of a round (D32, D38): its cycle's configuration snapshot (contract 2.12,
// 8.6) and the return to player of each side, exact (a reduced fraction) and as a decimal.
//
// How the return follows from the payout arithmetic (contract 8.4, domain/payout.ts): a bet
// of stake S on side X wins with probability P(X) = wX / (wLOW + wHIGH) (contract 2.12, D2);
// a winning bet is credited net = gross - commission, where gross = S * m (the multiplier,
// payoutMultiplier) already includes the stake and commission = gross * c / 100000 is taken
// on it; a losing bet is credited nothing. The stake is debited either way, so the return
// per unit staked is
//
//   RTP(X) = P(X) * net / S = wX / (wLOW + wHIGH) * m * (100000 - c) / 100000
//
// (nothing is added for the stake: gross returns it). With m = multiplierScaled / 100000 the
// exact fraction is wX * multiplierScaled * (100000 - c) / ((wLOW + wHIGH) * 100000 * 100000).
//
// The reference stake: the par sheet is the game's, not the bet's, so it gives this nominal
// return, which does not depend on the stake. The wallet is credited the truncated net of
// contract 8.4 (gross truncated down, then the commission truncated down), which differs from
// S * m * (100000 - c) / 100000 by less than 1 micro-unit for any stake; the dispute pack's
// verifier recomputes the disputed bet's own payout with payout() (D32). P(X) is the weight
// ratio the derivation implements to within 2^-32 (D2: a 32-bit draw compared exactly).

const COMMISSION_SCALE = 100000n;
// the decimal form: 6 places, rounded half up (the exact value is the fraction)
const DECIMAL_PLACES = 6;

export type ParSheetInput = {
  gameCode: string;
  lowWeight: bigint;
  highWeight: bigint;
  payoutMultiplierScaled: bigint;
  commissionMicro: bigint;
};

export type Rtp = { fraction: string; decimal: string };

// D38: bigints travel as decimal strings (D18, as the proof's weights, D19), the multiplier as
// its configured decimal text
export type ParSheet = {
  gameCode: string;
  lowWeight: string;
  highWeight: string;
  payoutMultiplier: string;
  commissionMicro: string;
  rtp: Record<Side, Rtp>;
};

export type Fraction = { numerator: bigint; denominator: bigint };

const gcd = (a: bigint, b: bigint): bigint => {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
};

export function sideRtp(input: Omit<ParSheetInput, 'gameCode'>, side: Side): Fraction {
  const { lowWeight, highWeight, payoutMultiplierScaled, commissionMicro } = input;
  if (lowWeight < 0n || highWeight < 0n || lowWeight + highWeight === 0n) {
    throw new RangeError(`weights must be non-negative and not both zero: ${lowWeight}:${highWeight}`);
  }
  if (payoutMultiplierScaled <= 0n) throw new RangeError(`payout multiplier must be positive: ${payoutMultiplierScaled}`);
  if (commissionMicro < 0n || commissionMicro > COMMISSION_SCALE) throw new RangeError(`commission must be 0 to 100000 micro: ${commissionMicro}`);
  const weight = side === 'LOW' ? lowWeight : highWeight;
  return reducedFraction(weight * payoutMultiplierScaled * (COMMISSION_SCALE - commissionMicro), (lowWeight + highWeight) * MULTIPLIER_SCALE * COMMISSION_SCALE);
}

// n/d in lowest terms (n >= 0, d > 0); 0 is 0/1
export function reducedFraction(numerator: bigint, denominator: bigint): Fraction {
  const divisor = numerator === 0n ? denominator : gcd(numerator, denominator);
  return { numerator: numerator / divisor, denominator: denominator / divisor };
}

// "n/d" in lowest terms; "0/1" for a side that never wins
export const fractionText = ({ numerator, denominator }: Fraction): string => `${numerator}/${denominator}`;

// the fraction to DECIMAL_PLACES places, rounded half up (a non-negative fraction)
export function decimalText({ numerator, denominator }: Fraction, places = DECIMAL_PLACES): string {
  const scale = 10n ** BigInt(places);
  const scaled = (2n * numerator * scale + denominator) / (2n * denominator);
  const whole = scaled / scale;
  return `${whole}.${(scaled % scale).toString().padStart(places, '0')}`;
}

// the fraction as the par sheet writes it: "n/d" and its decimal
export const rtpText = (fraction: Fraction): Rtp => ({ fraction: fractionText(fraction), decimal: decimalText(fraction) });

export function parSheet(input: ParSheetInput): ParSheet {
  const rtp = (side: Side): Rtp => rtpText(sideRtp(input, side));
  return {
    gameCode: input.gameCode,
    lowWeight: input.lowWeight.toString(),
    highWeight: input.highWeight.toString(),
    payoutMultiplier: formatMultiplier(input.payoutMultiplierScaled),
    commissionMicro: input.commissionMicro.toString(),
    rtp: { LOW: rtp('LOW'), HIGH: rtp('HIGH') },
  };
}
