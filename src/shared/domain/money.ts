// Money is bigint micro-units end to end (contract 1 rule 2, DECISIONS D18).

// contract 2.1 MicroAmount, at most 20 digits (D9).
export const MICRO_AMOUNT_PATTERN = '^-?[0-9]{1,20}$';
const MICRO_AMOUNT = new RegExp(MICRO_AMOUNT_PATTERN);

export const isMicroAmount = (value: unknown): value is string => typeof value === 'string' && MICRO_AMOUNT.test(value);

export function parseMicro(value: string): bigint {
  if (!MICRO_AMOUNT.test(value)) throw new RangeError(`not a MicroAmount: ${JSON.stringify(value)}`);
  return BigInt(value);
}

// D24: a stake a client sends is a string of digits with no leading zero ("0" itself is
// well-formed), at most 2^63-1, or a number that is a safe non-negative integer. Anything
// else is refused at the edge, before any statement runs (a value a bigint column refuses
// fails the whole batched statement it is in). A zero stake is not refused here: it is money,
// and the bet rules refuse it bet_out_of_range for every game (contract 8.2, bet-rules.ts).
export const MAX_MICRO = 2n ** 63n - 1n;
export const STAKE_MICRO_PATTERN = '^(0|[1-9][0-9]{0,18})$';
const STAKE_MICRO = new RegExp(STAKE_MICRO_PATTERN);

export function parseStakeMicro(value: unknown): bigint | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : null;
  if (typeof value !== 'string' || !STAKE_MICRO.test(value)) return null;
  const amount = BigInt(value);
  return amount <= MAX_MICRO ? amount : null;
}
