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

// D18: a payout multiplier is written as a decimal with at most 5 fractional digits ("1.98")
// and held scaled by 100000; its text is read here and written back here (the game
// configuration, the player channel, the dispute pack's par sheet, D32). undefined: not such
// a decimal, or not positive.
export function multiplierScaledOf(text: string): bigint | undefined {
  const match = /^([0-9]{1,6})(?:\.([0-9]{1,5}))?$/.exec(text);
  if (!match) return undefined;
  const scaled = BigInt(match[1]!) * MULTIPLIER_SCALE + BigInt((match[2] ?? '').padEnd(5, '0'));
  return scaled > 0n ? scaled : undefined;
}

export function formatMultiplier(scaled: bigint): string {
  const whole = scaled / MULTIPLIER_SCALE;
  const fraction = (scaled % MULTIPLIER_SCALE).toString().padStart(5, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

// D42, contract 8.4: what a free bet's win books and pays. Its payout (as its game settles it,
// after the cycle's payoutRounding) less the stake that was never debited, never below 0; a
// won free bet still gets its win call with this net, "0" included (contract 2.7). A paid
// bet's payout is booked as it is.
export function bookedPayout(payoutMicro: bigint, stakeMicro: bigint, isFree: boolean): bigint {
  if (!isFree) return payoutMicro;
  const net = payoutMicro - stakeMicro;
  return net > 0n ? net : 0n;
}
