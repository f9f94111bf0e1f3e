import { expect } from 'chai';
import {
  CRASH_MATH_VERSION,
  CRASH_RNG_VERSION,
  centsOf,
  centsText,
  countAtLeast,
  crashCentsOf,
  crashFromHash,
  crashModule,
  crashRtp,
  payoutCapCents,
  settleCrash,
  type CrashConfig,
  type CrashOutcome,
} from '../../src/shared/domain/games/crash.js';
import { curveCents, curveTime } from '../../src/shared/domain/games/crash-curve.js';
import { InvalidBetError, type RoundRecord } from '../../src/shared/domain/games/types.js';
import { roundHash } from '../../src/shared/domain/seeds.js';

// The crash game's pure math (D40): the derivation from h, the exact curve and its inverse,
// the settlement of a bet, and the exact par sheet.

const N = 2n ** 52n;
const DEFAULTS = crashModule.config.defaults;
const withConfig = (changes: Record<string, unknown>): CrashConfig => crashModule.config.parse(changes);
const outcome = (crashCents: bigint): CrashOutcome => ({ x: 0n, crashCents, hmacHex: '' });

describe('crash derivation (D40)', () => {
  it('names its versions', () => {
    expect([crashModule.rngVersion, crashModule.mathVersion]).to.deep.equal(['crash-hmac-sha256-v1', 'crash-1.0.0']);
    expect([CRASH_RNG_VERSION, CRASH_MATH_VERSION]).to.deep.equal(['crash-hmac-sha256-v1', 'crash-1.0.0']);
  });

  // h computed apart with openssl (printf '%s' 'player-seed:N' | openssl dgst -sha256 -hmac
  // "$SEED"), x and the crash points with Python's integers from D40's formula
  const SEED = '1c27fcee55035c1c8c5b0514d102bbfbf16f7eafa981cb8523c654bd16747f6f';
  const VECTORS: [nonce: number, h: string, x: bigint, at3000: bigint, at0: bigint][] = [
    [0, '1e8c732da28131e3', 537417226004499n, 110n, 113n],
    [1, '8c989d1a330b6122', 2473393578520758n, 215n, 221n],
    [4, 'd72629b9b7c4c99b', 3784942540258380n, 607n, 626n],
    [5, '0ef0d88bdf6d3f37', 262841407764179n, 103n, 106n],
    [7, 'bcceb8fb80dc24a0', 3321536844402114n, 369n, 380n],
  ];
  for (const [nonce, prefix, x, at3000, at0] of VECTORS) {
    it(`player-seed:${nonce}: h = ${prefix}..., x = ${x}: ${centsText(at3000)}x at a 3% edge, ${centsText(at0)}x with none`, () => {
      const h = roundHash({ serverSeed: SEED, clientSeed: 'player-seed', nonce });
      expect(h.toString('hex').startsWith(prefix)).to.equal(true);
      expect(crashFromHash(h, 3000n)).to.deep.equal({ x, crashCents: at3000, hmacHex: h.toString('hex') });
      expect(crashFromHash(h, 0n).crashCents).to.equal(at0);
      expect(crashModule.derive(h, DEFAULTS)).to.deep.equal(crashFromHash(h, 3000n));
    });
  }

  it('the proof outcome is {crashMultiplier, u} as JSON numbers, u = x / 2^52 exactly (contract 2.11 CRASH)', () => {
    const h = roundHash({ serverSeed: SEED, clientSeed: 'player-seed', nonce: 0 });
    const proof = crashModule.proofOutcome(crashModule.derive(h, DEFAULTS));
    expect(proof).to.deep.equal({ type: 'CRASH', crashMultiplier: 1.1, u: 537417226004499 / 2 ** 52 });
    expect(BigInt(proof.u * 2 ** 52)).to.equal(537417226004499n);
  });

  it('x = 0 is the 1.00x region: 97 cents raw at a 3% edge, clamped up to 100; exactly 100 with no edge', () => {
    expect(crashCentsOf(0n, 3000n)).to.equal(100n);
    expect(crashCentsOf(0n, 0n)).to.equal(100n);
    // the last x still at 1.00x and the first at 1.01x (x0 = 2^52 - q(101), Python)
    expect(crashCentsOf(178360381282000n - 1n, 3000n)).to.equal(100n);
    expect(crashCentsOf(178360381282000n, 3000n)).to.equal(101n);
    expect(crashCentsOf(44590095320500n - 1n, 0n)).to.equal(100n);
    expect(crashCentsOf(44590095320500n, 0n)).to.equal(101n);
  });

  it('the clamp at 100000 cents: from x0 = 2^52 - q(100000) on, every point is 1000.00x', () => {
    expect(crashCentsOf(4499231135731947n - 1n, 3000n)).to.equal(99999n);
    expect(crashCentsOf(4499231135731947n, 3000n)).to.equal(100000n);
    expect(crashCentsOf(4499096027743126n - 1n, 0n)).to.equal(99999n);
    expect(crashCentsOf(4499096027743126n, 0n)).to.equal(100000n);
    // unclamped this would be 436849163854938112 cents
    expect(crashCentsOf(N - 1n, 3000n)).to.equal(100000n);
  });

  it('2.00x begins where D40 puts it', () => {
    expect(crashCentsOf(2319353808095806n - 1n, 3000n)).to.equal(199n);
    expect(crashCentsOf(2319353808095806n, 3000n)).to.equal(200n);
    expect(crashCentsOf(N / 2n - 1n, 0n)).to.equal(199n);
    expect(crashCentsOf(N / 2n, 0n)).to.equal(200n);
  });

  it('refuses an x outside the space and a commission outside 0 to 100000', () => {
    expect(() => crashCentsOf(N, 3000n)).to.throw(RangeError);
    expect(() => crashCentsOf(-1n, 3000n)).to.throw(RangeError);
    expect(() => crashCentsOf(0n, 100001n)).to.throw(RangeError);
  });
});

describe('the crash curve, exact (D40)', () => {
  // the whole flight up to 1000x, once
  const END = curveTime(100000n);
  const curve: bigint[] = [];
  before(() => {
    for (let t = 0; t <= END; t++) curve.push(curveCents(t));
  });

  it('starts at 1.00x and reaches 2.00x at 11553 ms (ln 2 / 0.00006 = 11552.45), 1000x at 115130 ms', () => {
    expect(curveCents(0)).to.equal(100n);
    expect([curveCents(11552), curveCents(11553)]).to.deep.equal([199n, 200n]);
    expect(curveTime(200n)).to.equal(11553);
    expect([curveCents(115129), curveCents(115130)]).to.deep.equal([99998n, 100004n]);
    expect(END).to.equal(115130);
  });

  // 100 e^(0.00006 t) within 2e-5 of an integer, computed apart with 60-digit decimals
  // (Python's decimal): 739.99999984..., 5475.9999977..., 162.9999976..., 1429.0000115...
  const NEAR_INTEGERS: [number, bigint][] = [
    [33358, 739n],
    [66716, 5475n],
    [8143, 162n],
    [25398, 458n],
    [44326, 1429n],
    [72841, 7908n],
  ];
  for (const [t, cents] of NEAR_INTEGERS) {
    it(`decides the floor where the value is closest to an integer: m(${t}) = ${centsText(cents)}`, () => {
      expect(curveCents(t)).to.equal(cents);
    });
  }

  it('agrees with a double computation wherever that one is not within 1e-6 of an integer', () => {
    for (let t = 0; t <= END; t++) {
      const value = 100 * Math.exp(0.00006 * t);
      if (Math.abs(value - Math.round(value)) < 1e-6) continue;
      if (curve[t] !== BigInt(Math.floor(value))) expect.fail(`m(${t}) = ${curve[t]}, the double gives ${value}`);
    }
  });

  it('is non-decreasing over the whole flight', () => {
    for (let t = 1; t <= END; t++) if (curve[t]! < curve[t - 1]!) expect.fail(`m(${t}) < m(${t - 1})`);
  });

  it('its inverse is the first ms at which the curve reaches each cents value from 100 to 100000', () => {
    let t = 0;
    for (let cents = 100n; cents <= 100000n; cents++) {
      while (curve[t]! < cents) t++;
      if (curveTime(cents) !== t) expect.fail(`t(${centsText(cents)}) = ${curveTime(cents)}, the scan says ${t}`);
    }
  });

  it('refuses a t outside 0 to 10^7 ms and a multiplier above 1000x', () => {
    for (const t of [-1, 0.5, 10_000_001, Number.NaN]) expect(() => curveCents(t)).to.throw(RangeError);
    expect(() => curveTime(100001n)).to.throw(RangeError);
  });
});

describe('crash settlement (D40)', () => {
  const STAKE = 10000n;

  it('an auto cash-out at a <= crash point wins at a, floor(stake * cents / 100); above it the bet is lost', () => {
    expect(settleCrash(STAKE, { autoCashOutCents: 237n }, outcome(500n), DEFAULTS)).to.deep.equal({ won: true, payoutMicro: 23700n, cashOutCents: 237n });
    expect(settleCrash(STAKE, { autoCashOutCents: 500n }, outcome(500n), DEFAULTS)).to.deep.equal({ won: true, payoutMicro: 50000n, cashOutCents: 500n });
    expect(settleCrash(STAKE, { autoCashOutCents: 501n }, outcome(500n), DEFAULTS)).to.deep.equal({ won: false, payoutMicro: 0n, cashOutCents: null });
    // the floor: 333 * 1.01 = 336.33
    expect(settleCrash(333n, { autoCashOutCents: 101n }, outcome(101n), DEFAULTS).payoutMicro).to.equal(336n);
  });

  it('a crash at 1.00x loses every bet, auto or by hand', () => {
    expect(settleCrash(STAKE, { autoCashOutCents: 101n }, outcome(100n), DEFAULTS).won).to.equal(false);
    expect(settleCrash(STAKE, { autoCashOutCents: null }, outcome(100n), DEFAULTS, 0).won).to.equal(false);
  });

  it('a flight reaching maxMultiplier is cashed out there', () => {
    expect(settleCrash(STAKE, { autoCashOutCents: null }, outcome(100000n), DEFAULTS)).to.deep.equal({ won: true, payoutMicro: 10000000n, cashOutCents: 100000n });
    expect(settleCrash(STAKE, { autoCashOutCents: null }, outcome(99999n), DEFAULTS).won).to.equal(false);
    const lower = withConfig({ maxMultiplier: '500.00' });
    expect(settleCrash(STAKE, { autoCashOutCents: null }, outcome(80000n), lower)).to.deep.equal({ won: true, payoutMicro: 5000000n, cashOutCents: 50000n });
  });

  it('maxPayoutMicro: the bet is cashed out at the first multiplier whose payout reaches it, and paid the cap', () => {
    const capped = withConfig({ maxBetMicro: '100000', maxPayoutMicro: '150000' });
    // 10000 * 15.00 = 150000: the cap at 15.00x
    expect(payoutCapCents(10000n, 150000n)).to.equal(1500n);
    expect(settleCrash(10000n, { autoCashOutCents: 2000n }, outcome(3000n), capped)).to.deep.equal({ won: true, payoutMicro: 150000n, cashOutCents: 1500n });
    // 7000 * 21.42 = 149940 < 150000 <= 7000 * 21.43 = 150010: cashed at 21.43x, paid 150000
    expect(payoutCapCents(7000n, 150000n)).to.equal(2143n);
    expect(settleCrash(7000n, { autoCashOutCents: null }, outcome(5000n), capped)).to.deep.equal({ won: true, payoutMicro: 150000n, cashOutCents: 2143n });
    // a crash below the cap: lost as any other
    expect(settleCrash(7000n, { autoCashOutCents: null }, outcome(2142n), capped).won).to.equal(false);
  });

  it('a cash-out by hand wins at m(t) before the crash time, is too late from it on, and comes after an auto cash-out that fired first', () => {
    const crashAt = curveTime(300n);
    expect(settleCrash(STAKE, { autoCashOutCents: null }, outcome(300n), DEFAULTS, 11553)).to.deep.equal({ won: true, payoutMicro: 20000n, cashOutCents: 200n });
    expect(settleCrash(STAKE, { autoCashOutCents: null }, outcome(300n), DEFAULTS, crashAt - 1)).to.deep.equal({ won: true, payoutMicro: 29900n, cashOutCents: 299n });
    expect(settleCrash(STAKE, { autoCashOutCents: null }, outcome(300n), DEFAULTS, crashAt).won).to.equal(false);
    // auto at 1.50x fires at t(1.50) < 11553 ms: the later message changes nothing
    expect(settleCrash(STAKE, { autoCashOutCents: 150n }, outcome(300n), DEFAULTS, 11553)).to.deep.equal({ won: true, payoutMicro: 15000n, cashOutCents: 150n });
    // an auto cash-out above the crash point never fires: the message decides
    expect(settleCrash(STAKE, { autoCashOutCents: 400n }, outcome(300n), DEFAULTS, 11553).cashOutCents).to.equal(200n);
  });

  it('settles a stored round from its record as from its parts: the crash point, the auto cash-out and the cash-out\'s ms (D39)', () => {
    const record: RoundRecord = {
      state: 'RESULT',
      side: null,
      autoCashOutCents: 150n,
      outcomeSide: null,
      outcomeSum: null,
      diceValues: [],
      lowWeight: 1n,
      highWeight: 1n,
      crashCents: 300n,
      cashOutCents: null,
      cashOutMs: null,
      outcome: null,
      featureBuy: false,
    };
    const { settlement } = crashModule.rounds;
    expect(settlement(STAKE, record, DEFAULTS)).to.deep.equal(settleCrash(STAKE, { autoCashOutCents: 150n }, outcome(300n), DEFAULTS));
    const byHand = { ...record, autoCashOutCents: null, cashOutCents: 200n, cashOutMs: 11553 };
    expect(settlement(STAKE, byHand, DEFAULTS)).to.deep.equal({ won: true, payoutMicro: 20000n, cashOutCents: 200n });
    expect(settlement(STAKE, { ...record, autoCashOutCents: null }, DEFAULTS).won).to.equal(false);
    expect(() => settlement(STAKE, { ...record, crashCents: null }, DEFAULTS)).to.throw(/crash point/);
  });

  it('refuses a stake that is not positive and a cash-out time that is not a whole ms', () => {
    expect(() => settleCrash(0n, { autoCashOutCents: null }, outcome(300n), DEFAULTS)).to.throw(RangeError);
    expect(() => settleCrash(STAKE, { autoCashOutCents: null }, outcome(300n), DEFAULTS, -1)).to.throw(RangeError);
  });
});

describe('the crash par sheet, exact (D40)', () => {
  // Every crash point of a small space, by brute force: the closed form must count the same
  // points for every multiplier, with the space's size its only change.
  for (const [bits, commission] of [
    [16n, 3000n],
    [16n, 0n],
    [16n, 50000n],
    [18n, 3000n],
  ] as const) {
    it(`counts the points >= a over 2^${bits} values of x like a brute-force count, for every a (e = ${commission})`, () => {
      const histogram = new Map<bigint, bigint>();
      for (let x = 0n; x < 1n << bits; x++) {
        const cents = crashCentsOf(x, commission, bits);
        histogram.set(cents, (histogram.get(cents) ?? 0n) + 1n);
      }
      let atLeast = 0n;
      for (let cents = 100001n; cents >= 1n; cents--) {
        atLeast += histogram.get(cents) ?? 0n;
        if (countAtLeast(cents, commission, bits) !== atLeast) expect.fail(`a = ${cents}: closed form ${countAtLeast(cents, commission, bits)}, brute force ${atLeast}`);
      }
    });
  }

  it('RTP(a) = (1 - e) less under a / (100 * 2^52), for every auto cash-out from 1.01x to 1000x (e = 3%, 0, 50%)', () => {
    for (const e of [3000n, 0n, 50000n]) {
      const config = withConfig({ commissionMicro: e.toString() });
      for (let a = 101n; a <= 100000n; a++) {
        const { numerator, denominator } = crashRtp(config, { autoCashOutCents: a });
        // 1 - e - rtp = ((100000 - e) * denominator - 100000 * numerator) / (100000 * denominator)
        const gap = (100000n - e) * denominator - 100000n * numerator;
        // 0 <= gap / (100000 d) < a / (100 N)
        if (gap < 0n || gap * 100n * N >= a * 100000n * denominator) expect.fail(`e = ${e}, a = ${a}: ${numerator}/${denominator}`);
      }
    }
  });

  it('gives the fractions Python computes from the count, and 0.970000 at the default edge', () => {
    const at = (cents: bigint) => crashRtp(DEFAULTS, { autoCashOutCents: cents });
    expect(at(101n)).to.include({ fraction: '27303072740933631/28147497671065600', decimal: '0.970000' });
    expect(at(200n)).to.include({ fraction: '1092122909637345/1125899906842624', decimal: '0.970000' });
    expect(at(10000n).fraction).to.equal('1092122909637325/1125899906842624');
    expect(at(100000n).fraction).to.equal('546061454818625/562949953421312');
    // no auto cash-out: cashed at maxMultiplier
    expect(crashRtp(DEFAULTS, { autoCashOutCents: null }).fraction).to.equal('546061454818625/562949953421312');
    expect(crashRtp(withConfig({ commissionMicro: '100000' }), { autoCashOutCents: 200n }).fraction).to.equal('0/1');
  });

  it('applies the payout cap for a given stake: the return of the lower, capped target', () => {
    const capped = withConfig({ maxBetMicro: '100000', maxPayoutMicro: '150000' });
    // stake 10000: cap at 15.00x
    expect(crashRtp(capped, { autoCashOutCents: 2000n }, 10000n)).to.deep.equal(crashRtp(capped, { autoCashOutCents: 1500n }));
    // stake 7000: cashed at 21.43x but paid 150000, not 150010
    const { numerator, denominator } = crashRtp(capped, { autoCashOutCents: null }, 7000n);
    expect(numerator * 100n * N * 7000n).to.equal(countAtLeast(2143n, 3000n) * 150000n * 100n * denominator);
    // without a stake the cap is not applied
    expect(crashRtp(capped, { autoCashOutCents: 2000n }).fraction).to.equal(crashRtp(capped, { autoCashOutCents: 2000n }, 1000n).fraction);
  });
});

describe('crash multipliers as text (D40)', () => {
  it('reads and writes exactly two decimals', () => {
    expect(centsText(237n)).to.equal('2.37');
    expect(centsText(100000n)).to.equal('1000.00');
    expect(centsText(101n)).to.equal('1.01');
    expect(centsOf('2.37')).to.equal(237n);
    for (const bad of ['2', '2.3', '2.370', '-2.00', '2,00', ' 2.00', 2, null]) expect(centsOf(bad), String(bad)).to.equal(undefined);
  });
});

describe("a crash bet's parameters (D40)", () => {
  it('autoCashOut: a multiplier with two decimals, 1.01 to maxMultiplier, or none', () => {
    const config = crashModule.config.parse({ maxMultiplier: '100.00' });
    expect(crashModule.bet.parse({ autoCashOut: '1.01' }, config)).to.deep.equal({ autoCashOutCents: 101n });
    expect(crashModule.bet.parse({ autoCashOut: '100.00' }, config)).to.deep.equal({ autoCashOutCents: 10000n });
    expect(crashModule.bet.parse({}, config)).to.deep.equal({ autoCashOutCents: null });
    expect(crashModule.bet.write({ autoCashOutCents: 237n })).to.deep.equal({ autoCashOut: '2.37' });
    for (const input of [{ autoCashOut: '1.00' }, { autoCashOut: '100.01' }, { autoCashOut: '2' }, { autoCashOut: 2 }, { side: 'LOW' }]) {
      expect(() => crashModule.bet.parse(input, config), JSON.stringify(input)).to.throw(InvalidBetError, /autoCashOut/);
    }
  });
});

describe("crash's par sheet with payouts rounded to the minor unit (D46)", () => {
  it('counts the payout as paid: 1.01 at 1.55x pays 1.5655, booked 1.56 in EUR', () => {
    const config = crashModule.config.defaults;
    const bet = { autoCashOutCents: 155n };
    const space = 2n ** 52n;
    const wins = countAtLeast(155n, config.commissionMicro);
    const rounded = crashModule.rtp(config, bet, 101000n, 1000n);
    expect(rounded.numerator * space * 101000n).to.equal(wins * 156000n * rounded.denominator);
    const exact = crashModule.rtp(config, bet, 101000n, 1n);
    expect(exact.numerator * space * 101000n).to.equal(wins * 156550n * exact.denominator);
  });
});
