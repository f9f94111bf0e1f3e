// Money on the page (contract 1 rule 2, D18): amounts are decimal strings of integer
// micro-units, held as BigInt. Number and parseFloat never touch money.

export const MICRO_PER_UNIT = 100000n;
const FRACTION_DIGITS = 5;

// "5940000" -> "59.40": two decimals, more when non-zero digits follow
export function formatMicro(value) {
  const micro = BigInt(value);
  const abs = micro < 0n ? -micro : micro;
  const fraction = (abs % MICRO_PER_UNIT).toString().padStart(FRACTION_DIGITS, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${micro < 0n ? '-' : ''}${abs / MICRO_PER_UNIT}.${fraction}`;
}

// a short label for a whole amount: "1.00" -> "1", "0.10" stays
export const formatShort = (value) => formatMicro(value).replace(/\.00$/, '');

// a player's major-unit text ("12.5", "12,5", "0.10") -> micro-units; at most 5 decimals,
// since one micro-unit is 0.00001 (contract 8.1)
export function parseMajor(text) {
  const match = /^(\d*)(?:[.,](\d*))?$/.exec(String(text).trim());
  if (!match || (match[1] === '' && !match[2])) return { ok: false, error: 'format' };
  const fraction = match[2] ?? '';
  if (fraction.length > FRACTION_DIGITS) return { ok: false, error: 'decimals' };
  return { ok: true, micro: BigInt(match[1] || '0') * MICRO_PER_UNIT + BigInt(fraction.padEnd(FRACTION_DIGITS, '0')) };
}

// contract 8.4 with D18: the multiplier is scaled by 100000, every division truncates
export function netPayout(stakeMicro, multiplierScaled, commissionMicro) {
  const gross = (stakeMicro * multiplierScaled) / MICRO_PER_UNIT;
  return gross - (gross * commissionMicro) / MICRO_PER_UNIT;
}
