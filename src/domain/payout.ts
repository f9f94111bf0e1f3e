// Payout arithmetic of a winning bet (contract 8.4, DECISIONS D18), pure and all bigint:
//   gross      = stake * multiplierScaled / 100000          (truncating)
//   commission = gross * commissionMicro / MICRO_PER_UNIT   (truncating: the remainder stays with the house)
//   net        = gross - commission                         (what the win call credits)
// A losing bet has no payout and no win call; the caller decides whether the bet won.
//
// Free bets (contract 8.4, isFree true): no stake is debited, but the stake basis of the
// arithmetic is the same, so a winning free bet is credited the same net; the player's gain
// is that net on a win and 0 on a loss. The caller knows isFree and reports the gain.

// contract 2.12 and 8.4: the commission fraction is commissionMicro divided by 100000
const MICRO_PER_UNIT = 100000n;

// D18: a payout multiplier is held as an integer scaled by 100000 (2.0 is 200000)
export const MULTIPLIER_SCALE = 100000n;

export type PayoutInput = { stakeMicro: bigint; multiplierScaled: bigint; commissionMicro: bigint };
export type Payout = { grossMicro: bigint; commissionMicro: bigint; netMicro: bigint };

export function payout({ stakeMicro, multiplierScaled, commissionMicro }: PayoutInput): Payout {
  if (stakeMicro < 0n) throw new RangeError(`stake must not be negative: ${stakeMicro}`);
  if (multiplierScaled <= 0n) throw new RangeError(`payout multiplier must be positive: ${multiplierScaled}`);
  if (commissionMicro < 0n || commissionMicro > MICRO_PER_UNIT) {
    throw new RangeError(`commission must be 0 to ${MICRO_PER_UNIT} micro: ${commissionMicro}`);
  }
  const grossMicro = (stakeMicro * multiplierScaled) / MULTIPLIER_SCALE;
  const commission = (grossMicro * commissionMicro) / MICRO_PER_UNIT;
  return { grossMicro, commissionMicro: commission, netMicro: grossMicro - commission };
}
