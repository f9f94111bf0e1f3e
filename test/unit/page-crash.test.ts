import { expect } from 'chai';
import fc from 'fast-check';
import * as page from '../../src/realtime/page/crash-curve.js';
import { curveCents, curveTime } from '../../src/shared/domain/games/crash-curve.js';
import { centsOf, centsText, crashPayout } from '../../src/shared/domain/games/crash.js';

// The crash game's numbers on the game page (src/realtime/page/crash-curve.js, D40): the curve
// it draws agrees with the service's exact one, so the multiplier a player watches is the one
// a cash-out at that ms is judged at; multipliers are written and read as the service writes
// them; and a win at a multiplier is what the service pays.

describe("the crash page's numbers agree with the service's (D40)", () => {
  it("draws the service's curve at every ms of a flight, to the cent", () => {
    // 1000.00x, the highest multiplier, is reached at 115130 ms
    const differ: number[] = [];
    for (let t = 0; t <= 116_000; t++) if (page.curveCents(t) !== curveCents(t)) differ.push(t);
    expect(differ).to.deep.equal([]);
    // before the flight, and between two ms: the ms reached so far
    expect(page.curveCents(-5)).to.equal(100n);
    expect(page.curveCents(11_553.9)).to.equal(curveCents(11_553));
  });

  it("places a multiplier on the curve where the service's inverse does", () => {
    for (const cents of [100n, 101n, 150n, 200n, 237n, 341n, 1000n, 10_000n, 99_999n, 100_000n]) expect(page.curveTime(cents), String(cents)).to.equal(curveTime(cents));
    fc.assert(fc.property(fc.bigInt({ min: 100n, max: 100_000n }), (cents) => page.curveTime(cents) === curveTime(cents)));
  });

  it('writes and reads multipliers as the wire does: two decimals', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 100n, max: 100_000n }), (cents) => {
        expect(page.wireMultiplier(cents)).to.equal(centsText(cents));
        expect(page.centsOf(centsText(cents))).to.equal(centsOf(centsText(cents)));
      }),
    );
    expect(page.centsOf('2.5')).to.equal(null);
    expect(page.centsOf(null)).to.equal(null);
    expect(page.multiplierText(237n, '.')).to.equal('2.37×');
    expect(page.multiplierText(100_000n, ',')).to.equal('1000,00×');
    expect(page.multiplierInput(200n, ',')).to.equal('2,00');
  });

  it("reads the player's auto cash-out with at most two decimals, in the language's separator or a point", () => {
    expect(page.parseMultiplier('', '.')).to.deep.equal({ ok: true, cents: null });
    expect(page.parseMultiplier('  ', ',')).to.deep.equal({ ok: true, cents: null });
    expect(page.parseMultiplier('2', '.')).to.deep.equal({ ok: true, cents: 200n });
    expect(page.parseMultiplier('2.5', '.')).to.deep.equal({ ok: true, cents: 250n });
    expect(page.parseMultiplier('2,50', ',')).to.deep.equal({ ok: true, cents: 250n });
    expect(page.parseMultiplier('2.50', ',')).to.deep.equal({ ok: true, cents: 250n });
    expect(page.parseMultiplier('1.01x', '.')).to.deep.equal({ ok: true, cents: 101n });
    expect(page.parseMultiplier('3 ×', '.')).to.deep.equal({ ok: true, cents: 300n });
    // more decimals are refused, never cut; a comma is no decimal point in English
    expect(page.parseMultiplier('2.005', '.')).to.deep.equal({ ok: false, error: 'decimals' });
    expect(page.parseMultiplier('1,000', ',')).to.deep.equal({ ok: false, error: 'decimals' });
    expect(page.parseMultiplier('2,50', '.')).to.deep.equal({ ok: false, error: 'format' });
    expect(page.parseMultiplier('-2', '.')).to.deep.equal({ ok: false, error: 'format' });
    expect(page.parseMultiplier('2.5.0', '.')).to.deep.equal({ ok: false, error: 'format' });
    expect(page.parseMultiplier('abc', '.')).to.deep.equal({ ok: false, error: 'format' });
  });

  it('pays a win as the service does: floor(stake * cents / 100), at most the cap', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.bigInt({ min: 100n, max: 100_000n }), fc.bigInt({ min: 1n, max: 10n ** 15n }), (stake, cents, cap) => {
        expect(page.crashPayout(stake, cents, cap)).to.equal(crashPayout(stake, cents, cap));
      }),
    );
    expect(page.crashPayout(1_000_000n, 237n, null)).to.equal(2_370_000n);
    expect(page.crashPayout(333_333n, 101n, null)).to.equal(336_666n);
  });
});
