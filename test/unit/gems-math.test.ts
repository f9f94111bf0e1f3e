import { expect } from 'chai';
import { DRAW_SPACE, drawOf, type DrawTable } from '../../src/shared/domain/draws.js';
import type { Fraction } from '../../src/shared/domain/par-sheet.js';
import {
  GEMS_MATH,
  deriveGems,
  freeSpinDraw,
  gemsDistributions,
  gemsParSheet,
  gemsRtp,
  lineWins,
  multiplierDraw,
  playFigures,
  playGems,
  simulateGems,
  type Distribution,
  type Draw,
  type GemSymbol,
  type GemsMath,
  type GemsOutcome,
  type GemsPlay,
} from '../../src/shared/domain/games/gems-math.js';
import { drawHash } from '../../src/shared/domain/seeds.js';

// Gem Vault's math (D41, contract 2.11 MULTI): its events from chosen draws, its par sheet
// against a brute-force enumeration of every play of a reduced game, its bounds, and a
// simulation over the real derivation against the exact return.

const SEED = '3f'.repeat(32);
const STAKE = 1_000_000n; // 10.00, a multiple of 10 micro-units: every payout is exact
const PLAY: GemsPlay = { stakeMicro: STAKE, featureBuy: false, jackpotPoolMicro: 0n };

// a Draw that answers the draws it is given (index → selected index) and refuses any other,
// so that a test also says which draws a play uses
function scripted(choices: Map<number, number>): Draw & { used: number[] } {
  const used: number[] = [];
  const draw = (index: number, table: DrawTable): number => {
    const choice = choices.get(index);
    if (choice === undefined) throw new Error(`draw ${index} was not expected`);
    expect(choice).to.be.lessThan(table.counts.length);
    used.push(index);
    return choice;
  };
  return Object.assign(draw, { used });
}

// the stop of a reel that shows `symbol` on `row`
const stopShowing = (reel: readonly GemSymbol[], symbol: GemSymbol, row: number): number => (reel.indexOf(symbol) - row + reel.length) % reel.length;

const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);
const fraction = ({ numerator, denominator }: Fraction): number => Number(numerator) / Number(denominator);

function eventsSum(outcome: GemsOutcome): bigint {
  return outcome.events.reduce((sum, event) => sum + event.payoutMicro, 0n);
}

describe('gems math: a play from its draws (D41)', () => {
  const MISS = 1; // the jackpot draw's index 1 is a miss, 0 a hit
  const [reel0, reel1, reel2] = GEMS_MATH.baseReels as [readonly GemSymbol[], readonly GemSymbol[], readonly GemSymbol[]];

  it('a base spin: draws 0 to 3, a line win per winning line, paid floor(stake x tenths / 10)', () => {
    // diamonds on the middle row of each reel
    const stops = [stopShowing(reel0, 'D', 1), stopShowing(reel1, 'D', 1), stopShowing(reel2, 'D', 1)];
    const draw = scripted(new Map([[0, MISS], [1, stops[0]!], [2, stops[1]!], [3, stops[2]!]]));
    const outcome = playGems(draw, PLAY);
    expect(draw.used).to.deep.equal([0, 1, 2, 3]);
    expect(outcome.baseGame!.stops).to.deep.equal(stops);
    expect(outcome.baseGame!.grid[1]).to.deep.equal(['D', 'D', 'D']);
    const middle = outcome.events.find((e) => e.type === 'LINE_WIN' && e.subOutcome.line === 0);
    expect(middle).to.deep.equal({ type: 'LINE_WIN', subOutcome: { line: 0, symbol: 'D', tenths: 250 }, payoutMicro: 25n * STAKE });
    expect(outcome.events.every((e) => e.type === 'LINE_WIN')).to.equal(true);
    const tenths = lineWins(GEMS_MATH, outcome.baseGame!.grid).reduce((s, w) => s + w.tenths, 0);
    expect(outcome.winTenths).to.equal(tenths);
    expect(outcome.payoutMicro).to.equal((STAKE * BigInt(tenths)) / 10n);
    expect(eventsSum(outcome)).to.equal(outcome.payoutMicro);
    expect(outcome).to.include({ type: 'MULTI', featurePurchased: false, costMicro: STAKE, capped: false, draws: 4 });
    expect(outcome.jackpotContributionMicro).to.equal((STAKE * 500n) / 100000n);
  });

  it('wilds substitute, three wilds pay the wild, a scatter spoils a line (row 3)', () => {
    const grid: GemSymbol[][] = [
      ['W', 'R', 'W'],
      ['W', 'W', 'W'],
      ['E', 'V', 'E'],
    ];
    expect(lineWins(GEMS_MATH, grid)).to.deep.equal([
      { line: 0, symbol: 'W', tenths: 1000 },
      { line: 1, symbol: 'R', tenths: 100 },
      // the diagonals: W W E and E W W
      { line: 3, symbol: 'E', tenths: 50 },
      { line: 4, symbol: 'E', tenths: 50 },
    ]);
  });

  it('three scatters trigger the feature: draw 4 its multiplier, 3 draws a free spin, 8 spins', () => {
    const stops = [stopShowing(reel0, 'V', 0), stopShowing(reel1, 'V', 0), stopShowing(reel2, 'V', 0)];
    const choices = new Map([[0, MISS], [1, stops[0]!], [2, stops[1]!], [3, stops[2]!], [multiplierDraw(GEMS_MATH), 1]]);
    for (let k = 0; k < 8; k++) for (let j = 0; j < 3; j++) choices.set(freeSpinDraw(GEMS_MATH, k, j), (7 * k + 5 * j + 3) % 32);
    const draw = scripted(choices);
    const outcome = playGems(draw, PLAY);
    expect(draw.used).to.deep.equal(range(0, 29));
    expect(outcome.baseGame!.grid[0]).to.deep.equal(['V', 'V', 'V']);
    const trigger = outcome.events.find((e) => e.type === 'FEATURE_TRIGGER')!;
    expect(trigger.subOutcome).to.deep.equal({ purchased: false, scatters: 3, freeSpins: 8, multiplier: 2, tenths: 25 });
    expect(trigger.payoutMicro).to.equal((STAKE * 25n) / 10n);
    const spins = outcome.events.filter((e) => e.type === 'FREE_SPIN');
    expect(spins.map((e) => e.subOutcome.spin)).to.deep.equal(range(0, 8));
    for (const spin of spins) {
      const lines = lineWins(GEMS_MATH, spin.subOutcome.grid);
      expect(spin.subOutcome.lineWins).to.deep.equal(lines);
      expect(spin.subOutcome.tenths).to.equal(2 * lines.reduce((s, w) => s + w.tenths, 0));
      expect(spin.subOutcome.grid.flat()).to.not.include('V');
    }
    expect(eventsSum(outcome)).to.equal(outcome.payoutMicro);
    expect(outcome.payoutMicro).to.equal((STAKE * BigInt(outcome.winTenths)) / 10n);
  });

  it('the cap: a full grid of wilds at x10 reaches 5000 x stake, and the feature ends there', () => {
    const stops = [stopShowing(reel0, 'V', 0), stopShowing(reel1, 'V', 0), stopShowing(reel2, 'V', 0)];
    // feature reels start WWW: stop 0 shows three wilds on every reel, 5 lines of 100x, x10
    const draw = scripted(new Map([[0, MISS], [1, stops[0]!], [2, stops[1]!], [3, stops[2]!], [4, 4], [5, 0], [6, 0], [7, 0]]));
    const outcome = playGems(draw, PLAY);
    expect(draw.used).to.deep.equal(range(0, 8));
    const spins = outcome.events.filter((e) => e.type === 'FREE_SPIN');
    expect(spins).to.have.length(1);
    expect(spins[0]!.subOutcome.tenths).to.equal(50000);
    expect(outcome).to.include({ capped: true, winTenths: 50000 });
    expect(outcome.payoutMicro).to.equal(5000n * STAKE);
    // the spin pays what was left under the cap
    expect(spins[0]!.payoutMicro).to.equal(5000n * STAKE - outcome.events.filter((e) => e.type !== 'FREE_SPIN').reduce((s, e) => s + e.payoutMicro, 0n));
    expect(eventsSum(outcome)).to.equal(outcome.payoutMicro);
  });

  it('the jackpot: draw 0 index 0 pays the whole pool given, outside the cap', () => {
    const stops = [stopShowing(reel0, 'V', 0), stopShowing(reel1, 'V', 0), stopShowing(reel2, 'V', 0)];
    const draw = scripted(new Map([[0, 0], [1, stops[0]!], [2, stops[1]!], [3, stops[2]!], [4, 4], [5, 0], [6, 0], [7, 0]]));
    const pool = 123_456_789_012n;
    const outcome = playGems(draw, { ...PLAY, jackpotPoolMicro: pool });
    expect(outcome.events.at(-1)).to.deep.equal({ type: 'JACKPOT', subOutcome: { poolMicro: pool }, payoutMicro: pool });
    expect(outcome.payoutMicro).to.equal(5000n * STAKE + pool);
    expect(eventsSum(outcome)).to.equal(outcome.payoutMicro);
  });

  it('a bought feature costs 67 x stake, has no base spin and skips draws 1 to 3', () => {
    const choices = new Map([[0, MISS], [4, 0]]);
    for (let k = 0; k < 8; k++) for (let j = 0; j < 3; j++) choices.set(freeSpinDraw(GEMS_MATH, k, j), (11 * k + 3 * j + 4) % 32);
    const draw = scripted(choices);
    const outcome = playGems(draw, { ...PLAY, featureBuy: true });
    expect(draw.used).to.deep.equal([0, ...range(4, 25)]);
    expect(outcome.baseGame).to.equal(null);
    expect(outcome).to.include({ featurePurchased: true, costMicro: 67n * STAKE });
    expect(outcome.jackpotContributionMicro).to.equal((67n * STAKE * 500n) / 100000n);
    expect(outcome.events[0]).to.deep.equal({
      type: 'FEATURE_TRIGGER',
      subOutcome: { purchased: true, scatters: null, freeSpins: 8, multiplier: 1, tenths: 0 },
      payoutMicro: 0n,
    });
    expect(outcome.events.filter((e) => e.type === 'FREE_SPIN')).to.have.length(8);
    expect(eventsSum(outcome)).to.equal(outcome.payoutMicro);
  });

  it('an odd stake: each event pays the difference of the floors, so they sum to floor(stake x U / 10)', () => {
    const stops = [stopShowing(reel0, 'V', 0), stopShowing(reel1, 'V', 0), stopShowing(reel2, 'V', 0)];
    const choices = new Map([[0, MISS], [1, stops[0]!], [2, stops[1]!], [3, stops[2]!], [4, 2]]);
    for (let k = 0; k < 8; k++) for (let j = 0; j < 3; j++) choices.set(freeSpinDraw(GEMS_MATH, k, j), (5 * k + 9 * j + 1) % 32);
    for (const stake of [1n, 7n, 13n, 999n, 123457n]) {
      const outcome = playGems(scripted(choices), { ...PLAY, stakeMicro: stake });
      expect(outcome.payoutMicro).to.equal((stake * BigInt(outcome.winTenths)) / 10n);
      expect(eventsSum(outcome)).to.equal(outcome.payoutMicro);
    }
  });
});

describe('gems math: from the seeds (D41)', () => {
  const input = { serverSeed: SEED, clientSeed: 'player', nonce: 0, ...PLAY };

  it('is deterministic: the same seeds give the same play, another nonce another', () => {
    expect(deriveGems(input)).to.deep.equal(deriveGems({ ...input }));
    const plays = range(0, 20).map((nonce) => JSON.stringify(deriveGems({ ...input, nonce }).baseGame));
    expect(new Set(plays).size).to.be.greaterThan(15);
  });

  it('a verifier gets every stop back by hand: a 32-stop reel stops at a >> 27 of its draw', () => {
    // the first nonce whose base spin triggers the feature, found from the seeds
    let nonce = 0;
    let outcome = deriveGems({ ...input, nonce });
    while (!outcome.events.some((e) => e.type === 'FEATURE_TRIGGER')) outcome = deriveGems({ ...input, nonce: ++nonce });
    const seed = { serverSeed: SEED, clientSeed: 'player', nonce };
    const stop = (index: number): number => drawOf(drawHash(seed, index)) >>> 27;
    expect(outcome.baseGame!.stops).to.deep.equal([stop(1), stop(2), stop(3)]);
    // multiplier weights 32:18:9:4:1 of 64, so 2^26 draws per unit of weight
    const cumulative = [32, 50, 59, 63, 64];
    const m = cumulative.findIndex((c) => drawOf(drawHash(seed, 4)) >>> 26 < c);
    const spins = outcome.events.filter((e) => e.type === 'FREE_SPIN');
    expect(spins.length).to.equal(outcome.capped ? spins.length : 8);
    for (const spin of spins) {
      expect(spin.subOutcome.multiplier).to.equal(GEMS_MATH.featureMultipliers[m]!.multiplier);
      const k = spin.subOutcome.spin;
      expect(spin.subOutcome.stops).to.deep.equal([stop(5 + 3 * k), stop(6 + 3 * k), stop(7 + 3 * k)]);
    }
    expect(outcome.draws).to.equal(5 + 3 * spins.length);
    expect(eventsSum(outcome)).to.equal(outcome.payoutMicro);
  });
});

// A reduced game: two rows, short strips whose lengths do not divide 2^32 (so stops have
// unequal counts), two free spins, a cap low enough to bind in the base play and the feature.
const strip = (text: string): GemSymbol[] => [...text] as GemSymbol[];
const SMALL: GemsMath = {
  rows: 2,
  baseReels: [strip('AVWT'), strip('VAT'), strip('AVW')],
  featureReels: [strip('WAT'), strip('WTA'), strip('WA')],
  lines: [
    [0, 0, 0],
    [1, 1, 1],
    [0, 1, 0],
  ],
  pays: { W: 100, A: 20, T: 10 },
  scattersToTrigger: 3,
  scatterPayTenths: 5,
  freeSpins: 2,
  featureMultipliers: [
    { multiplier: 1, weight: 3n },
    { multiplier: 3, weight: 1n },
  ],
  featureBuyCost: 5n,
  capTenths: 150,
  jackpotWeights: [1n, 2n],
  jackpotContributionPer100000: 500n,
};

// Every play of the game, by replay: each run answers the draws it has chosen and stops at the
// first it has not, which is then branched on every index it can select. Each finished play
// has the weight of its draws' counts, over 2^32 per draw.
function everyPlay(math: GemsMath, play: GemsPlay, visit: (outcome: GemsOutcome, weight: bigint, draws: number) => void): void {
  class Branch {
    constructor(readonly table: DrawTable) {}
  }
  const pending: number[][] = [[]];
  while (pending.length) {
    const prefix = pending.pop()!;
    let at = 0;
    let weight = 1n;
    try {
      const outcome = playGems((_, table) => {
        if (at === prefix.length) throw new Branch(table);
        const choice = prefix[at++]!;
        weight *= table.counts[choice]!;
        return choice;
      }, play, math);
      visit(outcome, weight, prefix.length);
    } catch (error) {
      if (!(error instanceof Branch)) throw error;
      error.table.counts.forEach((count, k) => {
        if (count > 0n) pending.push([...prefix, k]);
      });
    }
  }
}

function bruteForce(math: GemsMath, play: GemsPlay): { win: Distribution; trigger: Fraction; payouts: bigint[] } {
  const leaves: { tenths: number; weight: bigint; draws: number; triggered: boolean }[] = [];
  const payouts: bigint[] = [];
  everyPlay(math, play, (outcome, weight, draws) => {
    expect(eventsSum(outcome)).to.equal(outcome.payoutMicro);
    expect(outcome.draws).to.equal(draws);
    const jackpot = outcome.events.some((e) => e.type === 'JACKPOT');
    expect(outcome.payoutMicro).to.equal((play.stakeMicro * BigInt(outcome.winTenths)) / 10n + (jackpot ? play.jackpotPoolMicro : 0n));
    leaves.push({ tenths: outcome.winTenths, weight, draws, triggered: outcome.events.some((e) => e.type === 'FEATURE_TRIGGER') });
    payouts.push(outcome.payoutMicro);
  });
  const most = Math.max(...leaves.map((l) => l.draws));
  const weights = new Map<number, bigint>();
  let triggered = 0n;
  for (const leaf of leaves) {
    const w = leaf.weight * DRAW_SPACE ** BigInt(most - leaf.draws);
    weights.set(leaf.tenths, (weights.get(leaf.tenths) ?? 0n) + w);
    if (leaf.triggered) triggered += w;
  }
  const total = DRAW_SPACE ** BigInt(most);
  return { win: { weights, total }, trigger: { numerator: triggered, denominator: total }, payouts };
}

const same = (a: Fraction, b: Fraction): boolean => a.numerator * b.denominator === b.numerator * a.denominator;

describe('gems math: the exact par sheet (D39, D41)', () => {
  it('equals a brute-force enumeration of every play of a reduced game, the cap binding', () => {
    const distributions = gemsDistributions(SMALL);
    for (const featureBuy of [false, true]) {
      const { win, trigger } = bruteForce(SMALL, { stakeMicro: 10n, featureBuy, jackpotPoolMicro: 1000n });
      const cost = featureBuy ? SMALL.featureBuyCost : 1n;
      const expected = playFigures(win, cost);
      const actual = playFigures(featureBuy ? distributions.boughtPlay : distributions.basePlay, cost);
      expect(same(actual.rtp, expected.rtp), `rtp, bought ${featureBuy}`).to.equal(true);
      expect(same(actual.hitRate, expected.hitRate), `hit rate, bought ${featureBuy}`).to.equal(true);
      expect(same(actual.variance, expected.variance), `variance, bought ${featureBuy}`).to.equal(true);
      expect(actual.maxWinTenths).to.equal(expected.maxWinTenths);
      expect(same(actual.maxWinProbability, expected.maxWinProbability)).to.equal(true);
      // the cap binds: some plays were worth more than it
      expect(actual.maxWinTenths).to.equal(SMALL.capTenths);
      if (!featureBuy) {
        const counted = distributions.baseFeature;
        const sum = [...counted.weights.values()].reduce((s, w) => s + w, 0n);
        expect(same({ numerator: sum, denominator: counted.total }, trigger)).to.equal(true);
      }
    }
  });

  it('pays an odd stake the floor of its tenths in every play of the reduced game', () => {
    bruteForce(SMALL, { stakeMicro: 7n, featureBuy: false, jackpotPoolMicro: 5n });
  });

  it('Gem Vault: both returns within 0.94 to 0.97 and within 0.005 of each other, the cap 5000 x', () => {
    const base = gemsRtp();
    const bought = gemsRtp(GEMS_MATH, true);
    for (const rtp of [base, bought]) {
      expect(fraction(rtp)).to.be.within(0.94, 0.97);
    }
    expect(Math.abs(fraction(base) - fraction(bought))).to.be.below(0.005);
    expect(GEMS_MATH.capTenths).to.be.at.most(50000);
  });

  it('Gem Vault: the max win, 5000 x stake, comes at least once in 100 million base plays (GLI-11)', () => {
    const sheet = gemsParSheet();
    expect(sheet.maxWin).to.equal('5000.0');
    const [numerator, denominator] = sheet.maxWinBase.fraction.split('/').map(BigInt) as [bigint, bigint];
    expect(numerator * 100_000_000n >= denominator).to.equal(true);
  });

  it('Gem Vault: its reels are 32 stops, each stop exactly 2^27 of the 2^32 draws', () => {
    for (const reel of [...GEMS_MATH.baseReels, ...GEMS_MATH.featureReels]) expect(reel).to.have.length(32);
    expect(GEMS_MATH.featureMultipliers.reduce((s, m) => s + m.weight, 0n)).to.equal(64n);
  });

  it('a simulation of 200,000 plays over the real derivation lands in its 99% interval of the exact return', function () {
    this.timeout(60_000);
    const result = simulateGems({ config: GEMS_MATH, bet: { featureBuy: false }, stakeMicro: STAKE, rounds: 200_000, serverSeed: SEED });
    expect(result.exact).to.deep.equal(gemsRtp());
    expect(result.exactInside, JSON.stringify(result.confidence99)).to.equal(true);
    expect(result.wins / result.rounds).to.be.within(0.2, 0.26);
  });
});

// docs/games/gems.md's figures are the code's: the par sheet table, the reels, the pays and
// the multipliers are rebuilt here from the module and must appear in the page as they are.
function gemsDocRows(): string[] {
  const sheet = gemsParSheet();
  const math = GEMS_MATH;
  const times = (tenths: number): string => `${tenths / 10} x stake`;
  return [
    `| RTP, base play | ${sheet.rtpBase.decimal} | ${sheet.rtpBase.fraction} |`,
    `| of which the base spin's own wins (lines, scatter pay) | ${sheet.rtpBaseSpin.decimal} | ${sheet.rtpBaseSpin.fraction} |`,
    `| RTP, feature buy (${sheet.featureBuyCost} x stake) | ${sheet.rtpFeatureBuy.decimal} | ${sheet.rtpFeatureBuy.fraction} |`,
    `| Hit rate, base play | ${sheet.hitRate.decimal} | ${sheet.hitRate.fraction} |`,
    `| Feature trigger, base play | 1 in ${sheet.featureTrigger.oneIn} | ${sheet.featureTrigger.fraction} |`,
    `| The feature's mean win | ${sheet.featureMean} x stake | |`,
    `| Volatility (standard deviation of the win per unit debited), base play | ${sheet.volatilityBase} | |`,
    `| Volatility, feature buy | ${sheet.volatilityFeatureBuy} | |`,
    `| Max win | ${sheet.maxWin} x stake | |`,
    `| Max win odds, base play | 1 in ${sheet.maxWinBase.oneIn} | ${sheet.maxWinBase.fraction} |`,
    `| Max win odds, feature buy | 1 in ${sheet.maxWinFeatureBuy.oneIn} | ${sheet.maxWinFeatureBuy.fraction} |`,
    `| Jackpot, per play | 1 in ${sheet.jackpot.oneIn} | ${sheet.jackpot.fraction} |`,
    `| Jackpot contribution, per unit debited | ${sheet.jackpot.contribution} | |`,
    ...math.baseReels.map((reel, j) => `base reel ${j + 1}:    ${reel.join('')}`),
    ...math.featureReels.map((reel, j) => `feature reel ${j + 1}: ${reel.join('')}`),
    ...Object.entries(math.pays).map(([symbol, tenths]) => `| ${symbol} | ${times(tenths)} |`),
    `| ${math.featureMultipliers.map((m) => `x${m.multiplier}`).join(' | ')} |`,
    `| ${math.featureMultipliers.map((m) => `${m.weight}`).join(' | ')} |`,
    ...math.lines.map((line, i) => `| ${i} | ${line.join(', ')} |`),
  ];
}

describe('docs/games/gems.md (D41)', () => {
  it('shows the par sheet, reels, pays, multipliers and lines the code has', async () => {
    const { readFileSync } = await import('node:fs');
    const page = readFileSync(new URL('../../docs/games/gems.md', import.meta.url), 'utf8');
    const missing = gemsDocRows().filter((row) => !page.includes(row));
    expect(missing, 'rows of docs/games/gems.md that differ from the code').to.deep.equal([]);
  });

  it("its example: nonce 1 stops at 20, 7, 11 and wins nothing; nonce 39 starts the feature and pays 49.5 x stake", () => {
    const seed = { serverSeed: '1c27fcee55035c1c8c5b0514d102bbfbf16f7eafa981cb8523c654bd16747f6f', clientSeed: 'player-seed' };
    const play = { stakeMicro: 100000n, featureBuy: false, jackpotPoolMicro: 0n };
    const first = deriveGems({ ...seed, nonce: 1, ...play });
    expect(first.baseGame!.stops).to.deep.equal([20, 7, 11]);
    expect(first.events).to.deep.equal([]);
    const feature = deriveGems({ ...seed, nonce: 39, ...play });
    expect(feature.baseGame!.grid.map((row) => row.join(''))).to.deep.equal(['VSA', 'TEE', 'RVV']);
    expect(feature.events.filter((e) => e.type === 'FREE_SPIN').map((e) => e.subOutcome.tenths)).to.deep.equal([0, 250, 0, 0, 100, 105, 0, 15]);
    expect(feature.payoutMicro).to.equal(4950000n);
  });

  it('a base reel shows at most one Vault, as the page says', () => {
    for (const reel of GEMS_MATH.baseReels) {
      for (let s = 0; s < reel.length; s++) expect(range(0, 3).filter((r) => reel[(s + r) % reel.length] === 'V').length).to.be.at.most(1);
    }
  });
});
