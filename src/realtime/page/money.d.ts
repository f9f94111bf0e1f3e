// Types of money.js for the unit tests (the page itself is plain JavaScript, served as is).

export const MICRO_PER_UNIT: bigint;

export type MoneyFormat = {
  locale: string;
  currency: string;
  symbol: string;
  // the currency's own decimals (EUR 2, JPY 0, BHD 3; 5 for a code Intl does not know, D46)
  fractionDigits: number;
  decimal: string;
  amount(micro: bigint | string): string;
  // with its sign: + for a gain that shows, the locale's minus for a loss
  signed(micro: bigint | string): string;
  short(micro: bigint | string): string;
  ratio(scaled: bigint | string): string;
  number(micro: bigint | string): string;
  input(micro: bigint | string): string;
  parse(text: string): { ok: true; micro: bigint } | { ok: false; error: 'format' | 'decimals' };
};

export function moneyFormat(locale: string | null | undefined, currency: string | null | undefined): MoneyFormat;
export function canonicalLocale(tag: string | null | undefined): string;
export function parseScaled(text: string): bigint | null;
export function netPayout(stakeMicro: bigint, multiplierScaled: bigint, commissionMicro: bigint): bigint;
