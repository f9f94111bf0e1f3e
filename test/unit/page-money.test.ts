import { expect } from 'chai';
import fc from 'fast-check';
import { MICRO_PER_UNIT, canonicalLocale, moneyFormat, netPayout, parseScaled } from '../../src/realtime/page/money.js';

// The game page's money (src/realtime/page/money.js): amounts arrive as strings of integer
// micro-units (contract 1 rule 2, D18; 1.00 = 100000) and are shown in the session's
// language and currency with Intl.NumberFormat, in the currency's own digits, the rest cut
// off toward zero (D46), and the player's stake is read back from text in the same digits.

const NBSP = '\u00a0';

// the micro-unit string as an exact decimal of major units: "-250001" -> "-2.50001"
const decimalOf = (micro: bigint) => {
  const abs = micro < 0n ? -micro : micro;
  return `${micro < 0n ? '-' : ''}${abs / MICRO_PER_UNIT}.${(abs % MICRO_PER_UNIT).toString().padStart(5, '0')}`;
};

describe('the game page formats money in the session language and currency (contract 2.2, D18, D46)', () => {
  it('shows a balance the way each market writes it', () => {
    expect(moneyFormat('en', 'EUR').amount('100000000')).to.equal('€1,000.00');
    expect(moneyFormat('de', 'EUR').amount('100000000')).to.equal(`1.000,00${NBSP}€`);
    expect(moneyFormat('en-US', 'USD').amount('99750000')).to.equal('$997.50');
    expect(moneyFormat('pt-BR', 'BRL').amount('1250000')).to.equal(`R$${NBSP}12,50`);
    expect(moneyFormat('de-CH', 'CHF').amount('123450000')).to.match(/^CHF.1.234\.50$/);
  });

  it("shows the currency's own digits, the rest cut off toward zero, never rounded up", () => {
    // 997.55996 EUR: the player has 997.55 to spend, not 997.56
    expect(moneyFormat('en', 'EUR').amount('99755996')).to.equal('€997.55');
    expect(moneyFormat('de', 'EUR').amount('99755996')).to.equal(`997,55${NBSP}€`);
    expect(moneyFormat('en', 'EUR').amount('99999999')).to.equal('€999.99');
    expect(moneyFormat('en', 'EUR').amount('485000')).to.equal('€4.85');
    expect(moneyFormat('en', 'EUR').amount('250001')).to.equal('€2.50');
    expect(moneyFormat('en', 'EUR').amount('1')).to.equal('€0.00');
    // a yen has no decimals
    expect(moneyFormat('en', 'JPY').amount('100000000')).to.equal('¥1,000');
    expect(moneyFormat('en', 'JPY').amount('99999999')).to.equal('¥999');
    expect(moneyFormat('en', 'JPY').amount('12345')).to.equal('¥0');
    // a Bahraini dinar has three
    expect(moneyFormat('en', 'BHD').amount('100000')).to.equal(`BHD${NBSP}1.000`);
    expect(moneyFormat('en', 'BHD').amount('123456789')).to.equal(`BHD${NBSP}1,234.567`);
    expect(moneyFormat('en', 'EUR').fractionDigits).to.equal(2);
    expect(moneyFormat('en', 'JPY').fractionDigits).to.equal(0);
    expect(moneyFormat('en', 'BHD').fractionDigits).to.equal(3);
  });

  it('cuts a negative amount toward zero too, and shows one cut to nothing as zero', () => {
    expect(moneyFormat('en', 'EUR').amount('-99755996')).to.equal('-€997.55');
    expect(moneyFormat('de', 'EUR').amount('-99755996')).to.equal(`-997,55${NBSP}€`);
    expect(moneyFormat('en', 'EUR').amount('-1999')).to.equal('-€0.01');
    expect(moneyFormat('en', 'JPY').amount('-150000')).to.equal('-¥1');
    expect(moneyFormat('en', 'EUR').amount('-5')).to.equal('€0.00');
    expect(moneyFormat('en', 'EUR').number('-5')).to.equal('0.00');
  });

  it("signs a gain or a loss (a player's net position), and shows one cut to nothing as zero, unsigned", () => {
    expect(moneyFormat('en', 'EUR').signed('150000')).to.equal('+€1.50');
    expect(moneyFormat('en', 'EUR').signed('-150000')).to.equal('-€1.50');
    expect(moneyFormat('de', 'EUR').signed('-150000')).to.equal(`-1,50${NBSP}€`);
    expect(moneyFormat('de', 'EUR').signed('250000')).to.equal(`+2,50${NBSP}€`);
    expect(moneyFormat('en', 'EUR').signed('0')).to.equal('€0.00');
    // less than a cent either way shows as zero, so it takes no sign
    expect(moneyFormat('en', 'EUR').signed('999')).to.equal('€0.00');
    expect(moneyFormat('en', 'EUR').signed('-999')).to.equal('€0.00');
    expect(moneyFormat('en', 'EUR').signed('1000')).to.equal('+€0.01');
    // a currency Intl does not know shows its micro-units, so any gain is signed
    expect(moneyFormat('en', 'USDT').signed('1')).to.equal(`+0.00001${NBSP}USDT`);
  });

  it('keeps every integer digit of an amount far beyond 2^53', () => {
    expect(moneyFormat('en', 'EUR').amount('12345678901234567890')).to.equal('€123,456,789,012,345.67');
    expect(moneyFormat('de', 'EUR').amount('-99999999999999999999')).to.equal(`-999.999.999.999.999,99${NBSP}€`);
    expect(moneyFormat('en', 'USDT').amount('12345678901234567891')).to.equal(`123,456,789,012,345.67891${NBSP}USDT`);
  });

  it('matches Intl cutting the exact decimal toward zero, for any amount, language and currency', () => {
    // Node formats a decimal string exactly (Intl.NumberFormat v3, roundingMode 'trunc');
    // the page must not rely on every browser doing so, and formats whole units as a BigInt
    const locales = ['en', 'en-GB', 'de', 'de-AT', 'de-CH', 'es', 'fr', 'it', 'pt', 'pt-BR', 'sv', 'fi', 'pl', 'tr', 'ja', 'hi'];
    const currencies = ['EUR', 'USD', 'GBP', 'SEK', 'JPY', 'BHD', 'CHF', 'BRL', 'TRY', 'PLN', 'KWD', 'CLP'];
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.constantFrom(...locales),
        fc.constantFrom(...currencies),
        (micro, locale, currency) => {
          const money = moneyFormat(locale, currency);
          // roundingMode and signDisplay 'negative' (a minus only before an amount not shown
          // as zero) are Intl.NumberFormat v3's, which the type check's lib does not list
          const v3 = { roundingMode: 'trunc', signDisplay: 'negative' } as unknown as Intl.NumberFormatOptions;
          const intl = new Intl.NumberFormat(locale, { style: 'currency', currency, numberingSystem: 'latn', ...v3 });
          expect(intl.resolvedOptions().maximumFractionDigits).to.equal(money.fractionDigits);
          expect(money.amount(micro)).to.equal(intl.format(decimalOf(micro) as unknown as number));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('shows a currency Intl does not know (a crypto symbol, contract 2.1) in micro-units, its smallest unit (D46)', () => {
    const usdt = moneyFormat('en', 'USDT');
    expect(usdt.fractionDigits).to.equal(5);
    expect(usdt.amount('100000000')).to.equal(`1,000.00${NBSP}USDT`);
    expect(usdt.amount('99755996')).to.equal(`997.55996${NBSP}USDT`);
    expect(usdt.amount('250000')).to.equal(`2.50${NBSP}USDT`);
    expect(usdt.amount('250010')).to.equal(`2.5001${NBSP}USDT`);
    expect(usdt.amount('1')).to.equal(`0.00001${NBSP}USDT`);
    expect(usdt.amount('-1')).to.equal(`-0.00001${NBSP}USDT`);
    expect(usdt.input('99755996')).to.equal('997.55996');
    expect(moneyFormat('de', 'USDT').amount('250000')).to.equal(`2,50${NBSP}USDT`);
    expect(moneyFormat('de', 'USDT').symbol).to.equal('USDT');
    expect(moneyFormat('en', 'EUR').symbol).to.equal('€');
    // a code of three letters that is no currency Intl lists is one it does not know
    expect(moneyFormat('en', 'XYZ').amount('123456')).to.equal(`1.23456${NBSP}XYZ`);
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
    expect(moneyFormat('en', 'EUR').input('123456789')).to.equal('1234.56');
    expect(moneyFormat('en', 'JPY').input('100000000')).to.equal('1000');
    expect(moneyFormat('en', 'JPY').short('100000000')).to.equal('1,000');
    expect(moneyFormat('en', 'BHD').input('250000')).to.equal('2.500');
    expect(moneyFormat('en', 'EUR').short('12345')).to.equal('0.12');
    expect(moneyFormat('en', 'USDT').short('12345')).to.equal('0.12345');
    // not money: every decimal of the multiplier or the percentage
    expect(moneyFormat('en', 'JPY').ratio('198765')).to.equal('1.98765');
  });
});

describe("the game page reads the player's stake in the currency's digits (contract 8.1, D46)", () => {
  const micro = (text: string, locale = 'en', currency = 'EUR') => {
    const parsed = moneyFormat(locale, currency).parse(text);
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
    expect(micro('0.01')).to.equal(1000n);
    expect(micro('1.000', 'en', 'BHD')).to.equal(100000n);
    expect(micro('1,000', 'de', 'BHD')).to.equal(100000n);
    expect(micro('0.00001', 'en', 'USDT')).to.equal(1n);
  });

  it('refuses what reads as a thousands separator rather than guess a stake a thousand times off', () => {
    expect(micro('1,000')).to.equal('format');
    expect(micro('1.000', 'de')).to.equal('format');
    expect(micro('1.000', 'fr')).to.equal('format');
    expect(micro('1,000,000')).to.equal('format');
    expect(micro('1,000', 'en', 'BHD')).to.equal('format');
  });

  it('refuses anything but a plain non-negative number', () => {
    for (const text of ['', ' ', '.', 'abc', '-1', '+1', '1e3', '0x10', '1 000', '€5', '5 €', '1.2.3', '١٢']) {
      expect(micro(text), JSON.stringify(text)).to.equal('format');
    }
  });

  it('refuses more decimals than the currency has, rather than cut the stake', () => {
    expect(micro('2.505')).to.equal('decimals');
    expect(micro('2,505', 'de')).to.equal('decimals');
    expect(micro('0.00001')).to.equal('decimals');
    expect(micro('2.500')).to.equal('decimals');
    expect(micro('5.5', 'en', 'JPY')).to.equal('decimals');
    expect(micro('5', 'en', 'JPY')).to.equal(500000n);
    expect(micro('1.2345', 'en', 'BHD')).to.equal('decimals');
    expect(micro('2.123456', 'en', 'USDT')).to.equal('decimals');
  });

  it('reads back every stake it writes, in every language and currency', () => {
    const currencies = ['EUR', 'JPY', 'BHD', 'USDT'];
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.constantFrom('en', 'de', 'es', 'fr', 'it', 'pt-BR', 'sv', 'de-CH'), fc.constantFrom(...currencies), (value, locale, currency) => {
        const money = moneyFormat(locale, currency);
        // what it writes is the stake cut to the currency's digits
        const step = 10n ** BigInt(5 - money.fractionDigits);
        expect(money.parse(money.input(value))).to.deep.equal({ ok: true, micro: value - (value % step) });
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
