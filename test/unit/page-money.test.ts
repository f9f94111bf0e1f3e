import { expect } from 'chai';
import fc from 'fast-check';
import { MICRO_PER_UNIT, canonicalLocale, moneyFormat, netPayout, parseScaled } from '../../src/realtime/page/money.js';

// The game page's money (src/realtime/page/money.js): amounts arrive as strings of integer
// micro-units (contract 1 rule 2, D18) and are shown in the session's language and currency
// with Intl.NumberFormat, every digit kept, and the player's stake is read back from text.

const NBSP = '\u00a0';

// the micro-unit string as an exact decimal of major units: "-250001" -> "-2.50001"
const decimalOf = (micro: bigint) => {
  const abs = micro < 0n ? -micro : micro;
  return `${micro < 0n ? '-' : ''}${abs / MICRO_PER_UNIT}.${(abs % MICRO_PER_UNIT).toString().padStart(5, '0')}`;
};

describe('the game page formats money in the session language and currency (contract 2.2, D18)', () => {
  it('shows a balance the way each market writes it', () => {
    expect(moneyFormat('en', 'EUR').amount('100000000')).to.equal('€1,000.00');
    expect(moneyFormat('de', 'EUR').amount('100000000')).to.equal(`1.000,00${NBSP}€`);
    expect(moneyFormat('en-US', 'USD').amount('99750000')).to.equal('$997.50');
    expect(moneyFormat('pt-BR', 'BRL').amount('1250000')).to.equal(`R$${NBSP}12,50`);
    expect(moneyFormat('de-CH', 'CHF').amount('123450000')).to.match(/^CHF.1.234\.50$/);
  });

  it("keeps at least the currency's own decimals and every further micro-unit digit, unrounded", () => {
    expect(moneyFormat('en', 'JPY').amount('100000000')).to.equal('¥1,000');
    expect(moneyFormat('en', 'BHD').amount('100000')).to.equal(`BHD${NBSP}1.000`);
    expect(moneyFormat('en', 'EUR').amount('250001')).to.equal('€2.50001');
    expect(moneyFormat('en', 'EUR').amount('485000')).to.equal('€4.85');
    expect(moneyFormat('en', 'EUR').amount('1')).to.equal('€0.00001');
    expect(moneyFormat('en', 'EUR').fractionDigits).to.equal(2);
    expect(moneyFormat('en', 'JPY').fractionDigits).to.equal(0);
  });

  it('keeps every digit of an amount far beyond 2^53', () => {
    expect(moneyFormat('en', 'EUR').amount('12345678901234567890')).to.equal('€123,456,789,012,345.6789');
    expect(moneyFormat('de', 'EUR').amount('-99999999999999999999')).to.equal(`-999.999.999.999.999,99999${NBSP}€`);
    expect(moneyFormat('en', 'EUR').amount('-5')).to.equal('-€0.00005');
  });

  it('matches Intl on the exact decimal for any amount, language and currency', () => {
    // Node formats a decimal string exactly (Intl.NumberFormat v3); the page must not rely
    // on every browser doing so, and formats whole units as a BigInt instead
    const locales = ['en', 'en-GB', 'de', 'de-AT', 'de-CH', 'es', 'fr', 'it', 'pt', 'pt-BR', 'sv', 'fi', 'pl', 'tr', 'ja', 'hi'];
    const currencies = ['EUR', 'USD', 'GBP', 'SEK', 'JPY', 'BHD', 'CHF', 'BRL', 'TRY', 'PLN'];
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.constantFrom(...locales),
        fc.constantFrom(...currencies),
        (micro, locale, currency) => {
          const money = moneyFormat(locale, currency);
          const intl = new Intl.NumberFormat(locale, {
            style: 'currency',
            currency,
            numberingSystem: 'latn',
            minimumFractionDigits: money.fractionDigits,
            maximumFractionDigits: 5,
          });
          expect(money.amount(micro)).to.equal(intl.format(decimalOf(micro) as unknown as number));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('shows a currency Intl does not know (a crypto symbol, contract 2.1) as a number and its code', () => {
    expect(moneyFormat('en', 'USDT').amount('100000000')).to.equal(`1,000.00${NBSP}USDT`);
    expect(moneyFormat('de', 'USDT').amount('250000')).to.equal(`2,50${NBSP}USDT`);
    expect(moneyFormat('de', 'USDT').symbol).to.equal('USDT');
    expect(moneyFormat('en', 'EUR').symbol).to.equal('€');
  });

  it('reads an unreadable or unknown locale as English', () => {
    expect(canonicalLocale('not a tag!')).to.equal('en');
    expect(canonicalLocale(undefined)).to.equal('en');
    expect(canonicalLocale('de-at')).to.equal('de-AT');
    expect(moneyFormat('not a tag!', 'EUR').amount('100000')).to.equal('€1.00');
  });

  it('gives the chips, the table and the stake field their own shapes', () => {
    const de = moneyFormat('de', 'EUR');
    expect(de.short('500000')).to.equal('5');
    expect(de.short('10000')).to.equal('0,10');
    expect(de.number('100000000')).to.equal('1.000,00');
    expect(de.input('100000000')).to.equal('1000,00');
    expect(de.input('250000')).to.equal('2,50');
    expect(de.ratio('198000')).to.equal('1,98');
    expect(de.ratio('200000')).to.equal('2');
    expect(moneyFormat('en', 'EUR').input('123456789')).to.equal('1234.56789');
  });
});

describe("the game page reads the player's stake (contract 8.1: at most 5 decimals)", () => {
  const micro = (text: string, locale = 'en') => {
    const parsed = moneyFormat(locale, 'EUR').parse(text);
    return parsed.ok ? parsed.micro : parsed.error;
  };

  it("takes the language's decimal separator, and the other one when it cannot be a thousands separator", () => {
    expect(micro('2.50')).to.equal(250000n);
    expect(micro('2,5')).to.equal(250000n);
    expect(micro(' 12 ')).to.equal(1200000n);
    expect(micro('.5')).to.equal(50000n);
    expect(micro('7.')).to.equal(700000n);
    expect(micro('2,50', 'de')).to.equal(250000n);
    expect(micro('2.5', 'de')).to.equal(250000n);
    expect(micro('1,000', 'de')).to.equal(100000n);
    expect(micro('1.000')).to.equal(100000n);
    expect(micro('0.00001')).to.equal(1n);
  });

  it('refuses what reads as a thousands separator rather than guess a stake a thousand times off', () => {
    expect(micro('1,000')).to.equal('format');
    expect(micro('1.000', 'de')).to.equal('format');
    expect(micro('1.000', 'fr')).to.equal('format');
    expect(micro('1,000,000')).to.equal('format');
  });

  it('refuses anything but a plain non-negative number', () => {
    for (const text of ['', ' ', '.', 'abc', '-1', '+1', '1e3', '0x10', '1 000', '€5', '5 €', '1.2.3', '١٢']) {
      expect(micro(text), JSON.stringify(text)).to.equal('format');
    }
    expect(micro('2.123456')).to.equal('decimals');
  });

  it('reads back every stake it writes, in every language', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.constantFrom('en', 'de', 'es', 'fr', 'it', 'pt-BR', 'sv', 'de-CH'), (value, locale) => {
        const money = moneyFormat(locale, 'EUR');
        expect(money.parse(money.input(value))).to.deep.equal({ ok: true, micro: value });
      }),
      { numRuns: 300 },
    );
  });
});

describe('the game page payout arithmetic (contract 8.4, D18)', () => {
  it('reads the multiplier scaled by 100000 and truncates like the service', () => {
    expect(parseScaled('2')).to.equal(200000n);
    expect(parseScaled('1.98')).to.equal(198000n);
    expect(parseScaled('1.5x')).to.equal(null);
    // 2.50 at x2 less 3 %: 5.00 - 0.15
    expect(netPayout(250000n, 200000n, 3000n)).to.equal(485000n);
    // 1.11 at x2 = 2.22; commission 0.0666 -> 2.1534
    expect(netPayout(111000n, 200000n, 3000n)).to.equal(215340n);
  });
});
