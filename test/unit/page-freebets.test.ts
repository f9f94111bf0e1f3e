import { expect } from 'chai';
import {
  freeBetAnnouncement,
  freeBetCashOutCaption,
  freeBetPayload,
  freeBetRows,
  freeBetSideCaption,
  goneFreeBets,
  readFreeBets,
  type FreeBet,
} from '../../src/realtime/page/freebets.js';
import { LANGUAGES, reasonText, setLanguage } from '../../src/realtime/page/i18n.js';
import { moneyFormat } from '../../src/realtime/page/money.js';

// The game page's free bets (src/realtime/page/freebets.js, D42): the grants the service names
// in `connected` and `free_bets` as the panel shows them, and the place_bet that plays one.

const PAGE_DIR = new URL('../../src/realtime/page/', import.meta.url);
const load = async (language: string) =>
  ((await import(new URL(`lang-${language}.js`, PAGE_DIR).href)) as { default: Record<string, string> }).default;

const grant = (over: Partial<FreeBet> = {}): FreeBet => ({
  grantId: 'g-1',
  campaignRef: 'welcome-2026',
  stakeMicro: '250000',
  remaining: 3,
  expiresAt: '2026-12-05T18:30:00.000Z',
  ...over,
});
const NOW = Date.parse('2026-11-29T12:00:00.000Z');

describe('the game page shows and plays free bets (D42)', () => {
  it('reads the grants of a message, none when the field is absent or not a list', () => {
    expect(readFreeBets(undefined)).to.deep.equal([]);
    expect(readFreeBets(null)).to.deep.equal([]);
    expect(readFreeBets({})).to.deep.equal([]);
    expect(readFreeBets([grant()])).to.deep.equal([grant()]);
  });

  it('leaves out a grant with no round left and an entry that is not a grant', () => {
    const grants = readFreeBets([
      grant({ grantId: 'used', remaining: 0 }),
      { grantId: 'no-stake', remaining: 2, expiresAt: '2026-12-05T18:30:00.000Z' },
      { ...grant({ grantId: 'decimal' }), stakeMicro: '2.5' },
      { ...grant({ grantId: 'count-as-text' }), remaining: '2' },
      'g-2',
      grant({ grantId: 'kept', remaining: 1 }),
    ]);
    expect(grants.map((entry) => entry.grantId)).to.deep.equal(['kept']);
  });

  it("shows each grant's stake in the currency's own digits, its rounds left and its expiry", () => {
    const [eur] = freeBetRows([grant()], moneyFormat('en', 'EUR'), { now: NOW, timeZone: 'UTC' });
    expect(eur).to.include({ grantId: 'g-1', campaign: 'welcome-2026', stake: '€2.50', remaining: '3 rounds left', expired: false });
    expect(eur!.expires).to.match(/^Expires Dec 5, 2026, 6:30\sPM$/);
    // a yen has no decimals; one round left is said in the singular
    const [jpy] = freeBetRows([grant({ stakeMicro: '10000000', remaining: 1 })], moneyFormat('en', 'JPY'), { now: NOW, timeZone: 'UTC' });
    expect(jpy).to.include({ stake: '¥100', remaining: '1 round left' });
    // German money; the expiry in the player's own time zone (Tokyo: already the next day)
    const [de] = freeBetRows([grant()], moneyFormat('de', 'EUR'), { now: NOW, timeZone: 'Asia/Tokyo' });
    expect(de!.stake).to.equal('2,50\u00a0€');
    expect(de!.expires).to.match(/06\.12\.2026, 03:30/);
  });

  it('keeps a Gem Vault grant of bought features marked as one, and marks no other (D41, D42)', () => {
    const [feature, spin] = readFreeBets([{ ...grant({ grantId: 'feature' }), featureBuy: true }, { ...grant({ grantId: 'spin' }), featureBuy: false }]);
    expect(feature).to.deep.equal(grant({ grantId: 'feature', featureBuy: true }));
    expect(spin).to.deep.equal(grant({ grantId: 'spin' }));
    const rows = freeBetRows([feature!, spin!], moneyFormat('en', 'EUR'), { now: NOW, timeZone: 'UTC' });
    expect(rows.map((row) => row.feature)).to.deep.equal([true, false]);
    // a Gem Vault free play names its grant alone: its stake and feature buy are its campaign's
    expect(freeBetPayload('feature', 'c-5', {})).to.deep.equal({ freeBetGrantId: 'feature', clientBetId: 'c-5' });
  });

  it('marks a grant past its expiry on the clock given, and shows none when there is none', () => {
    const [row] = freeBetRows([grant()], moneyFormat('en', 'EUR'), { now: Date.parse('2026-12-05T18:30:00.000Z') });
    expect(row!.expired).to.equal(true);
    expect(freeBetRows(readFreeBets([]), moneyFormat('en', 'EUR'), { now: NOW })).to.deep.equal([]);
  });

  it('plays a grant with place_bet naming it and the game parameters, never an amount', () => {
    expect(freeBetPayload('g-1', 'c-1', { side: 'HIGH' })).to.deep.equal({ side: 'HIGH', freeBetGrantId: 'g-1', clientBetId: 'c-1' });
    expect(freeBetPayload('g-1', 'c-2', { autoCashOut: '2.00' })).to.deep.equal({ autoCashOut: '2.00', freeBetGrantId: 'g-1', clientBetId: 'c-2' });
    // crash without an auto cash-out
    expect(freeBetPayload('g-1', 'c-3', {})).to.deep.equal({ freeBetGrantId: 'g-1', clientBetId: 'c-3' });
    // an amount that reached it is left out: the stake is the grant's
    const payload = freeBetPayload('g-1', 'c-4', { side: 'LOW', amountMicro: '100000' });
    expect(payload).to.not.have.property('amountMicro');
    expect(payload).to.deep.equal({ side: 'LOW', freeBetGrantId: 'g-1', clientBetId: 'c-4' });
  });

  it('explains free_bet_unavailable in words, in every language', async () => {
    expect(reasonText('free_bet_unavailable')).to.equal('This free bet is no longer available: it has expired, been used or been withdrawn.');
    const english = (await load('en')).reason_free_bet_unavailable;
    for (const language of LANGUAGES) {
      const text = (await load(language)).reason_free_bet_unavailable;
      expect(text, language).to.be.a('string').and.not.match(/free_bet_unavailable|\bD\d{1,2}\b/);
      if (language !== 'en') expect(text, language).to.not.equal(english);
    }
  });

  it('says what a free bet is played on: dice\'s side chosen in the panel, crash\'s auto cash-out or none', () => {
    expect(freeBetSideCaption('LOW')).to.equal('Free bets are played on LOW (Die 1 – 3).');
    expect(freeBetSideCaption('HIGH')).to.equal('Free bets are played on HIGH (Die 4 – 6).');
    expect(freeBetCashOutCaption('×2.00')).to.equal('Free bets cash out automatically at ×2.00.');
    expect(freeBetCashOutCaption(null)).to.equal('Free bets have no auto cash-out: cash them out by hand.');
  });

  describe("in the page's every language", () => {
    // setLanguage() puts the language on the document too: the little of it that it touches
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'document');
    before(() => {
      Object.defineProperty(globalThis, 'document', {
        configurable: true,
        value: { documentElement: { lang: 'en' }, querySelectorAll: () => [], title: '', body: undefined },
      });
    });
    after(async () => {
      await setLanguage('en');
      if (saved) Object.defineProperty(globalThis, 'document', saved);
      else Reflect.deleteProperty(globalThis, 'document');
    });

    it("names the free bet's side and its faces, or its auto cash-out, in the language's own words", async () => {
      const english = await load('en');
      for (const language of LANGUAGES) {
        expect(await setLanguage(language), language).to.equal(language);
        const words = await load(language);
        const low = freeBetSideCaption('LOW');
        const high = freeBetSideCaption('HIGH');
        expect(low, language).to.include(words.low).and.include(words.low_range).and.not.include(words.high!);
        expect(high, language).to.include(words.high).and.include(words.high_range);
        expect(freeBetCashOutCaption('×2.00'), language).to.include('×2.00');
        for (const text of [low, high, freeBetCashOutCaption('×2.00'), freeBetCashOutCaption(null)]) expect(text, language).to.not.match(/[{}]|free_bet_/);
        if (language !== 'en') {
          expect(low, language).to.not.equal(english.free_bet_plays_side!.replace('{side}', english.low!).replace('{range}', english.low_range!));
          expect(freeBetCashOutCaption(null), language).to.not.equal(english.free_bet_plays_manual);
        }
      }
    });
  });

  it('finds the grants that left the list, but for the last round the page spent itself', () => {
    const welcome = grant({ grantId: 'welcome', remaining: 2 });
    const last = grant({ grantId: 'last', remaining: 1 });
    // a cancelled campaign's grant leaves the list with rounds left
    expect(goneFreeBets([welcome, last], [last], null)).to.deep.equal([welcome]);
    // the page's own free bet spent the grant's last round: expected, not said
    expect(goneFreeBets([welcome, last], [welcome], 'last')).to.deep.equal([]);
    // the page's free bet spent a round of two, yet the grant is gone: withdrawn meanwhile
    expect(goneFreeBets([welcome], [], 'welcome')).to.deep.equal([welcome]);
    // a last round spent elsewhere (another tab of the session)
    expect(goneFreeBets([last], [], null)).to.deep.equal([last]);
    // counted down, still there
    expect(goneFreeBets([welcome], [grant({ grantId: 'welcome', remaining: 1 })], 'welcome')).to.deep.equal([]);
  });

  it("tells a screen reader each grant's campaign and rounds left", () => {
    const rows = freeBetRows([grant({ remaining: 2 }), grant({ grantId: 'g-2', campaignRef: 'vip:nov', remaining: 1 })], moneyFormat('en', 'EUR'), { now: NOW });
    expect(freeBetAnnouncement(rows)).to.equal('welcome-2026: 2 rounds left. vip:nov: 1 round left');
    expect(freeBetAnnouncement([])).to.equal('');
  });
});
