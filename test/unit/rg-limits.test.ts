import { expect } from 'chai';
import { RG_FIELDS, looseRgFields, maximaFor, parseRgMaxSpec, type RgLimits, type RgMaxima } from '../../src/shared/domain/rg-limits.js';

// DECISIONS D7: rgLimits looser than the operator's per-jurisdiction maxima, or a required
// limit missing, is 422 rg_limit_set_too_loose. A listed field is required and may not
// exceed its maximum. Maxima are set with `rgs operator update --rg-max JUR:field=N,...`.

describe('rg limits (D7)', () => {
  describe('looseRgFields', () => {
    const big = 9007199254740993n; // 2^53 + 1: compared as bigint, not as a Number
    const table: { name: string; limits: RgLimits; maxima: RgMaxima | undefined; loose: string[] }[] = [
      { name: 'no maxima for the jurisdiction', limits: {}, maxima: undefined, loose: [] },
      { name: 'empty maxima', limits: {}, maxima: {}, loose: [] },
      { name: 'required session time missing', limits: {}, maxima: { sessionTimeSeconds: 600 }, loose: ['sessionTimeSeconds'] },
      { name: 'session time equal to the maximum', limits: { sessionTimeSeconds: 600 }, maxima: { sessionTimeSeconds: 600 }, loose: [] },
      { name: 'session time below the maximum', limits: { sessionTimeSeconds: 60 }, maxima: { sessionTimeSeconds: 600 }, loose: [] },
      { name: 'session time above the maximum', limits: { sessionTimeSeconds: 601 }, maxima: { sessionTimeSeconds: 600 }, loose: ['sessionTimeSeconds'] },
      { name: 'loss limit missing', limits: { sessionTimeSeconds: 60 }, maxima: { dailyLossMicro: 100n }, loose: ['dailyLossMicro'] },
      { name: 'loss limit equal', limits: { dailyLossMicro: 100n }, maxima: { dailyLossMicro: 100n }, loose: [] },
      { name: 'loss limit one micro above', limits: { dailyLossMicro: 101n }, maxima: { dailyLossMicro: 100n }, loose: ['dailyLossMicro'] },
      { name: 'loss limit zero', limits: { dailyLossMicro: 0n }, maxima: { dailyLossMicro: 0n }, loose: [] },
      { name: 'wager limit above, exactly beyond 2^53', limits: { dailyWagerMicro: big }, maxima: { dailyWagerMicro: big - 1n }, loose: ['dailyWagerMicro'] },
      { name: 'wager limit equal beyond 2^53', limits: { dailyWagerMicro: big }, maxima: { dailyWagerMicro: big }, loose: [] },
      {
        name: 'unlisted fields are free',
        limits: { dailyLossMicro: 10n ** 18n, dailyWagerMicro: 10n ** 18n },
        maxima: { sessionTimeSeconds: 3600 },
        loose: ['sessionTimeSeconds'],
      },
      {
        name: 'every field loose, reported in a fixed order',
        limits: { sessionTimeSeconds: 3600, dailyWagerMicro: 2n },
        maxima: { dailyLossMicro: 1n, dailyWagerMicro: 1n, sessionTimeSeconds: 60 },
        loose: ['dailyLossMicro', 'dailyWagerMicro', 'sessionTimeSeconds'],
      },
      {
        name: 'all within',
        limits: { dailyLossMicro: 1n, dailyWagerMicro: 1n, sessionTimeSeconds: 60 },
        maxima: { dailyLossMicro: 1n, dailyWagerMicro: 1n, sessionTimeSeconds: 60 },
        loose: [],
      },
    ];
    for (const row of table) {
      it(row.name, () => {
        expect(looseRgFields(row.limits, row.maxima)).to.deep.equal(row.loose);
      });
    }
  });

  describe('maximaFor', () => {
    const stored = { MT: { sessionTimeSeconds: '600', dailyLossMicro: '12345678901234567890' }, GB: { dailyWagerMicro: '5' } };

    it('reads the jurisdiction entry, amounts as bigint', () => {
      expect(maximaFor(stored, 'MT')).to.deep.equal({
        sessionTimeSeconds: 600,
        dailyLossMicro: 12345678901234567890n,
        dailyWagerMicro: undefined,
      });
      expect(maximaFor(stored, 'GB')).to.deep.equal({ sessionTimeSeconds: undefined, dailyLossMicro: undefined, dailyWagerMicro: 5n });
    });

    it('has no maxima for other jurisdictions or an empty setting', () => {
      expect(maximaFor(stored, 'SE')).to.equal(undefined);
      expect(maximaFor(stored, 'mt')).to.equal(undefined);
      expect(maximaFor({}, 'MT')).to.equal(undefined);
      expect(maximaFor(null, 'MT')).to.equal(undefined);
      expect(maximaFor(undefined, 'MT')).to.equal(undefined);
      expect(maximaFor('MT', 'MT')).to.equal(undefined);
    });
  });

  describe('parseRgMaxSpec (the CLI form)', () => {
    it('parses JUR:field=N,...', () => {
      expect(parseRgMaxSpec('MT:sessionTimeSeconds=600,dailyLossMicro=100000,dailyWagerMicro=12345678901234567890')).to.deep.equal({
        jurisdiction: 'MT',
        maxima: { sessionTimeSeconds: '600', dailyLossMicro: '100000', dailyWagerMicro: '12345678901234567890' },
      });
      expect(parseRgMaxSpec('US-NJ:dailyLossMicro=0')).to.deep.equal({ jurisdiction: 'US-NJ', maxima: { dailyLossMicro: '0' } });
      expect(RG_FIELDS).to.deep.equal(['dailyLossMicro', 'dailyWagerMicro', 'sessionTimeSeconds']);
    });

    const errors: [string, RegExp][] = [
      ['', /JUR:/],
      ['MT', /JUR:/],
      ['MT:', /JUR:/],
      [':sessionTimeSeconds=600', /JUR:/],
      ['A-VERY-LONG-JURISDICTION:sessionTimeSeconds=600', /JUR:/], // 24 characters > 16
      ['M T:sessionTimeSeconds=600', /JUR:/],
      ['MT:sessionSeconds=600', /unknown field "sessionSeconds"/],
      ['MT:sessionTimeSeconds=600,', /unknown field ""/],
      ['MT:sessionTimeSeconds', /sessionTimeSeconds needs a non-negative integer/],
      ['MT:sessionTimeSeconds=', /sessionTimeSeconds needs a non-negative integer/],
      ['MT:sessionTimeSeconds=-1', /non-negative integer/],
      ['MT:dailyLossMicro=1.5', /non-negative integer/],
      ['MT:dailyLossMicro=100.00', /non-negative integer/],
      ['MT:dailyLossMicro=1e6', /non-negative integer/],
      ['MT:dailyLossMicro=123456789012345678901', /non-negative integer/], // 21 digits
    ];
    for (const [spec, message] of errors) {
      it(`refuses ${JSON.stringify(spec)}`, () => {
        expect(() => parseRgMaxSpec(spec)).to.throw(Error, message);
      });
    }
  });
});
