// Money is bigint micro-units end to end (contract 1 rule 2, DECISIONS D18).

// contract 2.1 MicroAmount, at most 20 digits (D9).
export const MICRO_AMOUNT_PATTERN = '^-?[0-9]{1,20}$';
const MICRO_AMOUNT = new RegExp(MICRO_AMOUNT_PATTERN);

export const isMicroAmount = (value: unknown): value is string => typeof value === 'string' && MICRO_AMOUNT.test(value);

export function parseMicro(value: string): bigint {
  if (!MICRO_AMOUNT.test(value)) throw new RangeError(`not a MicroAmount: ${JSON.stringify(value)}`);
  return BigInt(value);
}
