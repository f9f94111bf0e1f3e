// Money is bigint micro-units end to end (contract 1 rule 2, DECISIONS D18).

export const MICRO_PER_UNIT = 100000n;

// contract 2.1 MicroAmount, at most 20 digits (D9).
export const MICRO_AMOUNT_PATTERN = '^-?[0-9]{1,20}$';
const MICRO_AMOUNT = new RegExp(MICRO_AMOUNT_PATTERN);

export const isMicroAmount = (value: unknown): value is string => typeof value === 'string' && MICRO_AMOUNT.test(value);

export function parseMicro(value: string): bigint {
  if (!MICRO_AMOUNT.test(value)) throw new RangeError(`not a MicroAmount: ${JSON.stringify(value)}`);
  return BigInt(value);
}

export const formatMicro = (amount: bigint): string => amount.toString();

// "1000.5" major units -> 100050000n micro; used by the CLI and the demo, never on the wire.
export function majorToMicro(major: string): bigint {
  const match = /^(-?)([0-9]+)(?:\.([0-9]{1,5}))?$/.exec(major);
  if (!match) throw new RangeError(`not a decimal amount with at most 5 fractional digits: ${major}`);
  const [, sign, whole, fraction = ''] = match;
  const micro = BigInt(whole!) * MICRO_PER_UNIT + BigInt(fraction.padEnd(5, '0'));
  return sign === '-' ? -micro : micro;
}
