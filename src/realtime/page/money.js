// @ts-check
// Money on the page (contract 1 rule 2, D18): amounts are decimal strings of integer
// micro-units (1.00 = 100000), held as BigInt. Number and parseFloat never touch an amount.
//
// A person reads an amount in the currency's own digits (D46): Intl.NumberFormat in the
// player's language (the session's `lang`, contract 2.2) gives the symbol, its place, the
// separators and the number of decimals the currency has (two for EUR, none for JPY, three
// for BHD). The micro-units beyond them are cut off, toward zero: a balance of 997.55996
// EUR reads "€997.55", never rounded up to money the player does not have, and -997.55996
// reads "-€997.55". A currency Intl does not know (contract 2.1: crypto symbols such as
// USDT) has the micro-unit as its smallest unit (D46), so it shows the digits it has: at
// least two decimals and up to five, as a number followed by its code. The stake field
// shows and reads the same digits: a stake with more decimals than the currency has is
// refused, never cut. Intl only ever sees the whole major units, as a BigInt; the fraction
// is spliced in as text, so an amount of any size keeps every digit it shows.

export const MICRO_PER_UNIT = 100000n;
const MICRO_DIGITS = 5;
// a currency Intl knows: an ISO 4217 code that Intl lists (where the browser can list them)
const ISO_CURRENCY = /^[A-Z]{3}$/;
const KNOWN_CURRENCIES = typeof Intl.supportedValuesOf === 'function' ? new Set(Intl.supportedValuesOf('currency')) : null;
// the decimals shown at least for a currency Intl does not know, like most currencies'
const UNKNOWN_MIN_DIGITS = 2;

/** @param {string} code */
const knownCurrency = (code) => ISO_CURRENCY.test(code) && (KNOWN_CURRENCIES === null || KNOWN_CURRENCIES.has(code));

// The formatter of a session: `locale` a BCP 47 tag (an unreadable one reads as English),
// `currency` the session's currency.
/**
 * @param {string | null | undefined} locale
 * @param {string | null | undefined} currency
 */
export function moneyFormat(locale, currency) {
  const tag = canonicalLocale(locale);
  // the page parses what it formats: Latin digits in every language
  const base = { numberingSystem: 'latn' };
  const code = String(currency ?? '');
  /** @type {Intl.NumberFormatOptions | null} */
  const iso = knownCurrency(code) ? { ...base, style: 'currency', currency: code } : null;
  // the currency's own decimals; a currency format always resolves its maximumFractionDigits
  // (only a format by significant digits leaves it out, which the type allows for)
  const fractionDigits = iso ? Math.min(new Intl.NumberFormat(tag, iso).resolvedOptions().maximumFractionDigits ?? 2, MICRO_DIGITS) : MICRO_DIGITS;
  // the decimals always shown: all of a known currency's ("€5.00"), two of another's ("5.00 USDT")
  const minimumDigits = iso ? fractionDigits : UNKNOWN_MIN_DIGITS;
  const withCurrency = iso ? splicer(tag, iso) : null;
  const grouped = splicer(tag, base);
  const plain = splicer(tag, { ...base, useGrouping: false });
  const decimal = plain.decimal;
  // the currency as amounts show it ("€", "kr", "CHF"), for labels such as the stake's
  const symbol = iso ? (new Intl.NumberFormat(tag, iso).formatToParts(0).find((part) => part.type === 'currency')?.value ?? code) : code;

  // in the currency's digits, cut toward zero, by one of the styles above
  /**
   * @param {ReturnType<typeof splicer>} style
   * @param {bigint | string} value
   */
  const show = (style, value) => style.format(BigInt(value), minimumDigits, fractionDigits);
  /** @param {bigint | string} value */
  const amount = (value) => (withCurrency ? show(withCurrency, value) : `${show(grouped, value)}${code ? `\u00a0${code}` : ''}`);
  // a gain or a loss, in the currency with its sign: "+€1.50", "-€1.50", and "€0.00" for an
  // amount that shows as zero (a player's net position, which is read for its sign)
  /** @param {bigint | string} value */
  const signed = (value) => {
    const shown = amount(value);
    const cut = 10n ** BigInt(MICRO_DIGITS - fractionDigits);
    return BigInt(value) >= cut ? `+${shown}` : shown;
  };
  // without the currency, a whole amount without decimals: "5", "0,10" (chips)
  /** @param {bigint | string} value */
  const short = (value) => (BigInt(value) % MICRO_PER_UNIT === 0n ? grouped.format(BigInt(value), 0, 0) : show(grouped, value));
  // a number scaled by 100000 that is not money (D18: the payout multiplier; a percentage),
  // with only the decimals it has, every one: "2", "1,98", "2,5"
  /** @param {bigint | string} value */
  const ratio = (value) => grouped.format(BigInt(value), 0, MICRO_DIGITS);
  // without the currency, grouped: the history table's column
  /** @param {bigint | string} value */
  const number = (value) => show(grouped, value);
  // what the stake field holds: no grouping, the language's decimal separator ("2,50")
  /** @param {bigint | string} value */
  const input = (value) => show(plain, value);

  // The player's stake text -> micro-units, with at most the currency's decimals (D46: what
  // the page shows is what it takes; more is refused, never cut). The language's decimal
  // separator is the decimal point; "." or "," is one too unless exactly three digits follow
  // it, which reads as a thousands separator ("1,000" in English, "1.000" in German): that
  // is refused, never guessed.
  /**
   * @param {string} text
   * @returns {{ ok: true, micro: bigint } | { ok: false, error: 'format' | 'decimals' }}
   */
  function parse(text) {
    const separators = [...new Set(['.', ',', decimal])].map(escape).join('|');
    const match = new RegExp(`^(\\d*)(?:(${separators})(\\d*))?$`).exec(String(text ?? '').trim());
    if (!match || (match[1] === '' && !match[3])) return { ok: false, error: 'format' };
    const [, whole, separator, fraction = ''] = match;
    if (separator !== undefined && separator !== decimal && fraction.length === 3) return { ok: false, error: 'format' };
    if (fraction.length > fractionDigits) return { ok: false, error: 'decimals' };
    return { ok: true, micro: BigInt(whole || '0') * MICRO_PER_UNIT + BigInt(fraction.padEnd(MICRO_DIGITS, '0')) };
  }

  return { locale: tag, currency: code, symbol, fractionDigits, decimal, amount, signed, short, ratio, number, input, parse };
}

// The locale Intl will use for a tag: the tag itself when Intl can read it, else English.
/** @param {string | null | undefined} tag */
export function canonicalLocale(tag) {
  try {
    const [canonical] = Intl.getCanonicalLocales(String(tag ?? ''));
    return canonical && Intl.NumberFormat.supportedLocalesOf(canonical).length > 0 ? canonical : 'en';
  } catch {
    return 'en';
  }
}

// Formats whole units with Intl (BigInt in, so no digit is lost) and puts the micro-unit
// fraction after the last integer digit, with the separator this style uses.
/**
 * @param {string} locale
 * @param {Intl.NumberFormatOptions} options
 */
function splicer(locale, options) {
  const whole = new Intl.NumberFormat(locale, { ...options, minimumFractionDigits: 0, maximumFractionDigits: 0 });
  const separator = new Intl.NumberFormat(locale, { ...options, minimumFractionDigits: 1, maximumFractionDigits: 1 })
    .formatToParts(1.5)
    .find((part) => part.type === 'decimal');
  const decimal = separator ? separator.value : '.';
  return {
    decimal,
    // `micro` with at least minimumDigits decimals and at most maximumDigits, the rest cut
    // off toward zero; the trailing zeros between them left out
    /**
     * @param {bigint} micro
     * @param {number} minimumDigits
     * @param {number} maximumDigits
     */
    format(micro, minimumDigits, maximumDigits) {
      const abs = micro < 0n ? -micro : micro;
      const units = abs / MICRO_PER_UNIT;
      const kept = (abs % MICRO_PER_UNIT).toString().padStart(MICRO_DIGITS, '0').slice(0, maximumDigits);
      const fraction = kept.replace(/0+$/, '').padEnd(minimumDigits, '0');
      // an amount cut to zero is shown as zero, without a sign; a negative one below one
      // unit keeps its sign through Number's -0 (-0n is 0n)
      const negative = micro < 0n && (units > 0n || /[1-9]/.test(kept));
      const parts = whole.formatToParts(negative ? (units === 0n ? -0 : -units) : units);
      const last = parts.map((part) => part.type).lastIndexOf('integer');
      return parts.map((part, index) => (index === last && fraction ? `${part.value}${decimal}${fraction}` : part.value)).join('');
    },
  };
}

/** @param {string} text */
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// A decimal of the service's wire (payoutMultiplier, "1.98") scaled by 100000 (D18)
/** @param {string} text */
export function parseScaled(text) {
  const match = /^(\d+)(?:\.(\d{1,5}))?$/.exec(String(text));
  if (!match) return null;
  return BigInt(match[1]) * MICRO_PER_UNIT + BigInt((match[2] ?? '').padEnd(MICRO_DIGITS, '0'));
}

// contract 8.4 with D18: the multiplier is scaled by 100000, every division truncates
/** @type {(stakeMicro: bigint, multiplierScaled: bigint, commissionMicro: bigint) => bigint} */
export function netPayout(stakeMicro, multiplierScaled, commissionMicro) {
  const gross = (stakeMicro * multiplierScaled) / MICRO_PER_UNIT;
  return gross - (gross * commissionMicro) / MICRO_PER_UNIT;
}
