// A currency's minor unit in micro-units (D46). Amounts are micro-units of 10^-5 of a unit
// (contract 1: 1.00 = 100000); a currency with d decimals (ISO 4217, as Intl knows it: EUR
// 2, JPY 0, BHD 3) books amounts in steps of 10^(5-d) micro-units. A code Intl does not know
// (contract 2.1 allows any 3 to 8 letters: USDT) has no minor unit but the micro-unit itself.

const MICRO_DIGITS = 5;
const KNOWN = new Set(Intl.supportedValuesOf('currency'));

// the currency's decimals, or undefined for a code Intl does not know; a format is costly to
// build, and the answer never changes, so each known code's is kept
const DIGITS = new Map<string, number>();

export function currencyDigits(currency: string): number | undefined {
  if (!KNOWN.has(currency)) return undefined;
  let digits = DIGITS.get(currency);
  if (digits === undefined) {
    digits = Math.min(new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? MICRO_DIGITS, MICRO_DIGITS);
    DIGITS.set(currency, digits);
  }
  return digits;
}

export function minorUnitMicro(currency: string | undefined): bigint {
  const digits = currency === undefined ? undefined : currencyDigits(currency);
  return digits === undefined ? 1n : 10n ** BigInt(MICRO_DIGITS - digits);
}

// D46 payoutRounding: a win as the wallet books it, exact to the micro-unit (contract 8.4) or
// rounded down to the currency's minor unit
export function roundedPayout(payoutMicro: bigint, rounding: 'exact' | 'minor_unit', currency: string): bigint {
  if (rounding === 'exact') return payoutMicro;
  const unit = minorUnitMicro(currency);
  return payoutMicro - (payoutMicro % unit);
}
