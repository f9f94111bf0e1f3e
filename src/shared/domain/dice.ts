import { drawTable, selectIndex } from './draws.js';
import { roundHash } from './seeds.js';

// The dice derivation (contract 2.12, DECISIONS D2), pure: the same inputs always give the
// same outcome, and a player can recompute it from a revealed proof (contract 2.11).

export const DICE_RNG_VERSION = 'dice-hmac-sha256-v1';
export const DICE_MATH_VERSION = 'dice-1.0.0';

export type Side = 'LOW' | 'HIGH';

export type DiceInput = {
  serverSeed: string;
  clientSeed: string;
  nonce: number;
  lowWeight: bigint;
  highWeight: bigint;
};

export type DiceOutcome = {
  side: Side;
  face: number;
  diceValues: number[];
  outcomeSum: number;
  hmacHex: string;
  a: bigint;
  b: bigint;
};

export const isSide = (value: unknown): value is Side => value === 'LOW' || value === 'HIGH';

// The nonce is checked by roundHash (D2), then the weights, in that order.
export function deriveDice({ serverSeed, clientSeed, nonce, lowWeight, highWeight }: DiceInput): DiceOutcome {
  return diceFromHash(roundHash({ serverSeed, clientSeed, nonce }), lowWeight, highWeight);
}

// The dice outcome of a round's `h` (D2), for a caller that has computed it already (the game
// module, D39).
export function diceFromHash(h: Buffer, lowWeight: bigint, highWeight: bigint): DiceOutcome {
  // D2: weights are non-negative integers, not both zero
  if (lowWeight < 0n || highWeight < 0n || lowWeight + highWeight === 0n) {
    throw new RangeError(`weights must be non-negative and not both zero: ${lowWeight}:${highWeight}`);
  }
  const a = BigInt(h.readUInt32BE(0));
  const b = BigInt(h.readUInt32BE(4));
  // D2: exact integer comparison, so P(LOW) = lowWeight / (lowWeight + highWeight) up to 2^-32
  // (draws.ts: the first index k with a * W < (w_0 + ... + w_k) * 2^32, here LOW = index 0)
  const side: Side = selectIndex(Number(a), drawTable([lowWeight, highWeight])) === 0 ? 'LOW' : 'HIGH';
  // D2: LOW = faces 1..3, HIGH = faces 4..6
  const face = (side === 'LOW' ? 1 : 4) + Number(b % 3n);
  return { side, face, diceValues: [face], outcomeSum: face, hmacHex: h.toString('hex'), a, b };
}
