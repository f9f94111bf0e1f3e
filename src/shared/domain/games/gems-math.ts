import { DRAW_SPACE, drawOf, drawTable, selectIndex, type DrawTable } from '../draws.js';
import { decimalText, reducedFraction, rtpText, type Fraction, type Rtp } from '../par-sheet.js';
import { drawHash } from '../seeds.js';
import { SIMULATION_CLIENT_SEED, simulationResult, type SimulationInput, type SimulationResult } from './simulation.js';
import type { ExactRtp } from './types.js';

// Gem Vault (`gems`), the multi-event game of D41, its math only: pure functions, no I/O. A play
// is a spin of three reels showing a 3x3 grid, paid on 5 lines; three Vault scatters start 8
// free spins on richer reels, all paid at a multiplier drawn when the feature starts; the
// feature may be bought for featureBuyCost x stake; every play also has a fixed-odds jackpot
// draw that pays the whole pool. The outcome is contract 2.11's MULTI shape (baseGame, events,
// featurePurchased, jackpotContributionMicro). docs/games/gems.md is the player's and the
// verifier's account, with the par sheet that gemsParSheet computes.
//
// Draws (D41): draw i is the first 4 bytes of h_i = HMAC-SHA256(serverSeed, clientSeed + ":" +
// nonce + ":" + i) (seeds.ts drawHash), selecting from weights by draws.ts (D2's compare).
// Draw 0 is the jackpot's, draws 1 to 3 the base spin's reels, draw 4 the feature's
// multiplier, draws 5 + 3k to 7 + 3k free spin k's reels. A draw's index is fixed by its role,
// so a bought feature (no base spin) leaves 1 to 3 unused and a play that never reaches the
// feature never asks for 4 on.
//
// Money (D18, contract 8.4): pays are whole tenths of the stake. The play's win in tenths,
// U, is capped at capTenths, and it pays floor(stake * U / 10) micro-units, truncated once,
// the remainder to the house as payout.ts does. Each event pays the difference of that floor
// before and after it (its tenths added to a running total capped at the cap), so the events
// sum to the round's payout exactly, and an event past the cap pays 0. The jackpot pays the
// pool it is given, outside the cap and outside the RTP (its contribution is separate).

export const GEMS_RNG_VERSION = 'gems-hmac-sha256-v1';
export const GEMS_MATH_VERSION = 'gems-1.0.0';

// W wild (Crown), D Diamond, R Ruby, E Emerald, S Sapphire, A Amethyst, T Topaz, V Vault
// (the scatter)
export type GemSymbol = 'W' | 'D' | 'R' | 'E' | 'S' | 'A' | 'T' | 'V';

export type GemsMath = {
  // visible rows of each reel: a reel stopped at s shows strip[s], strip[s + 1], ... (mod length)
  readonly rows: number;
  readonly baseReels: readonly (readonly GemSymbol[])[];
  // the free spins' reels: no scatter (a feature does not retrigger), more wilds
  readonly featureReels: readonly (readonly GemSymbol[])[];
  // each line: its row on each reel, left to right
  readonly lines: readonly (readonly number[])[];
  // tenths of the stake for a line of three of the symbol (wilds substituting)
  readonly pays: Readonly<Partial<Record<GemSymbol, number>>>;
  // the scatters that start the feature, anywhere in the grid, and what they pay with it
  readonly scattersToTrigger: number;
  readonly scatterPayTenths: number;
  readonly freeSpins: number;
  // the feature's multiplier, drawn once when it starts, and its weights
  readonly featureMultipliers: readonly { readonly multiplier: number; readonly weight: bigint }[];
  // the feature bought costs featureBuyCost x stake
  readonly featureBuyCost: bigint;
  // the most a play wins, in tenths of the stake (50000: 5000 x stake)
  readonly capTenths: number;
  // the jackpot draw's weights: [hit, miss]
  readonly jackpotWeights: readonly [bigint, bigint];
  // the part of what a play debits that feeds the pool, per 100000 (the commission's scale)
  readonly jackpotContributionPer100000: bigint;
};

const WILD: GemSymbol = 'W';
const SCATTER: GemSymbol = 'V';

// a strip written as text, one letter a stop
const strip = (text: string): readonly GemSymbol[] => [...text] as GemSymbol[];

// The game's math (gems-1.0.0). Every strip has 32 stops, so each stop is exactly 2^27 of the
// 2^32 draws (draws.ts), and the multiplier's weights sum to 64, a power of two too: the par
// sheet's probabilities are exact dyadic fractions.
export const GEMS_MATH: GemsMath = {
  rows: 3,
  baseReels: [
    strip('TASTEVATRDSTAWTESAVTRASETDATSERA'),
    strip('ATSEVTARDTSAETWASTVRTEASDTAETSRA'),
    strip('STAEVTRASDTEAWSTVAETRSATDESTRAEA'),
  ],
  featureReels: [
    strip('WWWTASDERTSAWETRADSTETARSTDAERSD'),
    strip('WWWATSERDTASWTEARSDTATESRTDAESRD'),
    strip('WWWSTAREDSTAWTERASDTTAERSTDASERD'),
  ],
  lines: [
    [1, 1, 1],
    [0, 0, 0],
    [2, 2, 2],
    [0, 1, 2],
    [2, 1, 0],
  ],
  pays: { W: 1000, D: 250, R: 100, E: 50, S: 20, A: 10, T: 5 },
  scattersToTrigger: 3,
  scatterPayTenths: 25,
  freeSpins: 8,
  featureMultipliers: [
    { multiplier: 1, weight: 32n },
    { multiplier: 2, weight: 18n },
    { multiplier: 3, weight: 9n },
    { multiplier: 5, weight: 4n },
    { multiplier: 10, weight: 1n },
  ],
  featureBuyCost: 67n,
  capTenths: 50000,
  jackpotWeights: [1n, 4999999n],
  jackpotContributionPer100000: 500n,
};

export const TENTHS = 10n;
const CONTRIBUTION_SCALE = 100000n;
// the scale of a configuration's jackpotRateMicro: micro-units per unit debited
export const RATE_SCALE = 1_000_000n;

// ---- draws ---------------------------------------------------------------------------------

// The draw's role fixes its index (see above), for a game of n reels: 0 the jackpot, 1..n the
// base spin, n + 1 the multiplier, n + 2 + n k ... the free spin k.
export const JACKPOT_DRAW = 0;
export const baseDraw = (math: GemsMath, reel: number): number => 1 + reel;
export const multiplierDraw = (math: GemsMath): number => 1 + math.baseReels.length;
export const freeSpinDraw = (math: GemsMath, spin: number, reel: number): number => 2 + math.baseReels.length + spin * math.featureReels.length + reel;

// What the play asks of its draws: the index that draw i selects from the table's weights.
// deriveGems answers from the HMACs; a test answers with chosen indices, or every index in
// turn to enumerate the plays (the same code path, without the HMAC).
export type Draw = (index: number, table: DrawTable) => number;

export type GemsTables = {
  base: DrawTable[];
  feature: DrawTable[];
  multiplier: DrawTable;
  jackpot: DrawTable;
};

// a strip's stops are equally weighted: each stop's weight is 1
const TABLES = new WeakMap<GemsMath, GemsTables>();
export function gemsTables(math: GemsMath): GemsTables {
  let tables = TABLES.get(math);
  if (!tables) {
    checkMath(math);
    tables = {
      base: math.baseReels.map((reel) => drawTable(reel.map(() => 1n))),
      feature: math.featureReels.map((reel) => drawTable(reel.map(() => 1n))),
      multiplier: drawTable(math.featureMultipliers.map((m) => m.weight)),
      jackpot: drawTable([...math.jackpotWeights]),
    };
    TABLES.set(math, tables);
  }
  return tables;
}

function checkMath(math: GemsMath): void {
  const reels = math.baseReels.length;
  if (reels < 1 || math.featureReels.length !== reels) throw new RangeError('the base and feature reels must be as many, at least 1');
  if (math.lines.some((line) => line.length !== reels || line.some((row) => !Number.isInteger(row) || row < 0 || row >= math.rows))) {
    throw new RangeError(`every line has a row of 0 to ${math.rows - 1} on each of the ${reels} reels`);
  }
  if ([...math.baseReels, ...math.featureReels].some((reel) => reel.length < math.rows)) throw new RangeError(`a strip has at least ${math.rows} stops`);
  const whole = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
  if (!Object.values(math.pays).every(whole) || !whole(math.scatterPayTenths) || !whole(math.capTenths) || math.capTenths === 0) throw new RangeError('pays and the cap are whole tenths');
  if (!Number.isSafeInteger(math.freeSpins) || math.freeSpins < 1) throw new RangeError('the feature has at least one free spin');
  if (math.featureMultipliers.some((m) => !Number.isSafeInteger(m.multiplier) || m.multiplier < 1)) throw new RangeError('a multiplier is a whole number, at least 1');
  if (math.featureBuyCost < 1n) throw new RangeError('the feature costs at least the stake');
}

// ---- a spin --------------------------------------------------------------------------------

export type LineWin = { line: number; symbol: GemSymbol; tenths: number };

export type GemsSpin = {
  // each reel's stop, and the grid it shows: grid[row][reel]
  stops: number[];
  grid: GemSymbol[][];
};

export function gridOf(reels: readonly (readonly GemSymbol[])[], stops: readonly number[], rows: number): GemSymbol[][] {
  return Array.from({ length: rows }, (_, row) => reels.map((reel, j) => reel[(stops[j]! + row) % reel.length]!));
}

// A line pays when its three symbols are one pay symbol, wilds substituting for it; three
// wilds pay the wild's pay. A scatter on a line spoils it.
export function lineWin(math: GemsMath, grid: readonly (readonly GemSymbol[])[], line: number): LineWin | undefined {
  const rows = math.lines[line]!;
  let symbol: GemSymbol = WILD;
  for (let reel = 0; reel < rows.length; reel++) {
    const here = grid[rows[reel]!]![reel]!;
    if (here === SCATTER) return undefined;
    if (here === WILD) continue;
    if (symbol === WILD) symbol = here;
    else if (here !== symbol) return undefined;
  }
  const tenths = math.pays[symbol] ?? 0;
  return tenths > 0 ? { line, symbol, tenths } : undefined;
}

export const lineWins = (math: GemsMath, grid: readonly (readonly GemSymbol[])[]): LineWin[] =>
  math.lines.flatMap((_, line) => lineWin(math, grid, line) ?? []);

export const scatterCount = (grid: readonly (readonly GemSymbol[])[]): number => grid.reduce((n, row) => n + row.filter((s) => s === SCATTER).length, 0);

function spin(draw: Draw, math: GemsMath, reels: readonly (readonly GemSymbol[])[], tables: DrawTable[], index: (reel: number) => number): GemsSpin {
  const stops = tables.map((table, reel) => draw(index(reel), table));
  return { stops, grid: gridOf(reels, stops, math.rows) };
}

// ---- a play --------------------------------------------------------------------------------

export type GemsEvent =
  | { type: 'LINE_WIN'; subOutcome: LineWin; payoutMicro: bigint }
  | {
      type: 'FEATURE_TRIGGER';
      // scatters: how many showed (null when bought); tenths: the scatter pay (0 when bought)
      subOutcome: { purchased: boolean; scatters: number | null; freeSpins: number; multiplier: number; tenths: number };
      payoutMicro: bigint;
    }
  | {
      type: 'FREE_SPIN';
      // tenths = the lines' tenths x the multiplier
      subOutcome: GemsSpin & { spin: number; lineWins: LineWin[]; multiplier: number; tenths: number };
      payoutMicro: bigint;
    }
  | { type: 'JACKPOT'; subOutcome: { poolMicro: bigint }; payoutMicro: bigint };

// contract 2.11 MULTI
export type GemsOutcome = {
  type: 'MULTI';
  // the base spin as drawn; null for a bought feature, which has none
  baseGame: GemsSpin | null;
  events: GemsEvent[];
  featurePurchased: boolean;
  jackpotContributionMicro: bigint;
  // what the play debits: the stake, or featureBuyCost x stake
  costMicro: bigint;
  // the game's win in tenths of the stake, capped (the jackpot apart), and whether the cap bound
  winTenths: number;
  capped: boolean;
  // the sum of the events' payouts: floor(stake * winTenths / 10), plus the pool if the jackpot hit
  payoutMicro: bigint;
  // how many draws the play used
  draws: number;
};

// jackpotRateMicro: the contribution per 1,000,000 micro-units debited, the configuration's
// (D41); left out, the math's own jackpotContributionPer100000
export type GemsPlay = { stakeMicro: bigint; featureBuy: boolean; jackpotPoolMicro: bigint; jackpotRateMicro?: bigint };

export type GemsInput = GemsPlay & { serverSeed: string; clientSeed: string; nonce: number };

// D41: the play from the seeds: draw i from h_i
export function deriveGems(input: GemsInput, math: GemsMath = GEMS_MATH): GemsOutcome {
  const seed = { serverSeed: input.serverSeed, clientSeed: input.clientSeed, nonce: input.nonce };
  return playGems((index, table) => selectIndex(drawOf(drawHash(seed, index)), table), input, math);
}

// The play from its draws (see Draw): the same arithmetic whatever answers them.
export function playGems(draw: Draw, { stakeMicro, featureBuy, jackpotPoolMicro, jackpotRateMicro }: GemsPlay, math: GemsMath = GEMS_MATH): GemsOutcome {
  if (stakeMicro <= 0n) throw new RangeError(`stake must be positive: ${stakeMicro}`);
  if (jackpotPoolMicro < 0n) throw new RangeError(`the jackpot pool must not be negative: ${jackpotPoolMicro}`);
  const tables = gemsTables(math);
  let draws = 0;
  const counted: Draw = (index, table) => {
    draws++;
    return draw(index, table);
  };
  const events: GemsEvent[] = [];
  // the running win in tenths, capped; each credit pays the difference of the floors
  let won = 0;
  const paidAt = (tenths: number): bigint => (stakeMicro * BigInt(tenths)) / TENTHS;
  const credit = (tenths: number): bigint => {
    const before = won;
    won = Math.min(won + tenths, math.capTenths);
    return paidAt(won) - paidAt(before);
  };

  // the jackpot's draw comes first in the index, whatever the play
  const jackpotHit = counted(JACKPOT_DRAW, tables.jackpot) === 0;

  let baseGame: GemsSpin | null = null;
  let trigger: { scatters: number | null; tenths: number } | undefined;
  if (featureBuy) {
    trigger = { scatters: null, tenths: 0 };
  } else {
    baseGame = spin(counted, math, math.baseReels, tables.base, (reel) => baseDraw(math, reel));
    for (const win of lineWins(math, baseGame.grid)) events.push({ type: 'LINE_WIN', subOutcome: win, payoutMicro: credit(win.tenths) });
    const scatters = scatterCount(baseGame.grid);
    if (scatters >= math.scattersToTrigger) trigger = { scatters, tenths: math.scatterPayTenths };
  }

  if (trigger) {
    const multiplier = math.featureMultipliers[counted(multiplierDraw(math), tables.multiplier)]!.multiplier;
    events.push({
      type: 'FEATURE_TRIGGER',
      subOutcome: { purchased: featureBuy, scatters: trigger.scatters, freeSpins: math.freeSpins, multiplier, tenths: trigger.tenths },
      payoutMicro: credit(trigger.tenths),
    });
    // the feature ends at the cap: the spins left would pay nothing, and are not drawn
    for (let k = 0; k < math.freeSpins && won < math.capTenths; k++) {
      const free = spin(counted, math, math.featureReels, tables.feature, (reel) => freeSpinDraw(math, k, reel));
      const wins = lineWins(math, free.grid);
      const tenths = wins.reduce((sum, win) => sum + win.tenths, 0) * multiplier;
      events.push({ type: 'FREE_SPIN', subOutcome: { spin: k, ...free, lineWins: wins, multiplier, tenths }, payoutMicro: credit(tenths) });
    }
  }

  // the jackpot pays the whole pool, outside the cap
  if (jackpotHit) events.push({ type: 'JACKPOT', subOutcome: { poolMicro: jackpotPoolMicro }, payoutMicro: jackpotPoolMicro });

  const costMicro = featureBuy ? stakeMicro * math.featureBuyCost : stakeMicro;
  return {
    type: 'MULTI',
    baseGame,
    events,
    featurePurchased: featureBuy,
    jackpotContributionMicro:
      jackpotRateMicro === undefined ? (costMicro * math.jackpotContributionPer100000) / CONTRIBUTION_SCALE : (costMicro * jackpotRateMicro) / RATE_SCALE,
    costMicro,
    winTenths: won,
    capped: won === math.capTenths,
    payoutMicro: events.reduce((sum, event) => sum + event.payoutMicro, 0n),
    draws,
  };
}

// ---- the exact par sheet -------------------------------------------------------------------
//
// Every figure is counted over the draws' integer space: a stop, a multiplier or the jackpot
// has probability count / 2^32 (draws.ts), the reels are independent draws, so a grid's
// probability is the product of its stops' counts over 2^(32 n). The base spin and a free spin
// are enumerated stop by stop (32^3 grids each); the feature's total is the 8-fold
// convolution of a free spin's line tenths (each capped at the cap, which the multiplier of at
// least 1 keeps capped), times the multiplier; a triggering base spin's win is added to it,
// and the play's win is the sum capped. The cap is applied to the whole distribution, so every
// figure takes it into account exactly. The jackpot is left out (see the RTP's note).

// a distribution of whole tenths: weights over a common denominator
export type Distribution = { weights: Map<number, bigint>; total: bigint };

const gcd = (a: bigint, b: bigint): bigint => {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
};

// the same distribution with its weights and total divided by their gcd (smaller numbers)
function reduced({ weights, total }: Distribution): Distribution {
  let divisor = total;
  for (const w of weights.values()) divisor = gcd(divisor, w);
  if (divisor <= 1n) return { weights, total };
  return { weights: new Map([...weights].map(([v, w]) => [v, w / divisor])), total: total / divisor };
}

const add = (weights: Map<number, bigint>, value: number, weight: bigint): void => {
  if (weight !== 0n) weights.set(value, (weights.get(value) ?? 0n) + weight);
};

// every stop combination of the reels, with its weight (the product of the stops' counts)
function enumerateSpins(math: GemsMath, reels: readonly (readonly GemSymbol[])[], tables: DrawTable[], visit: (grid: GemSymbol[][], weight: bigint) => void): bigint {
  const stops = new Array<number>(reels.length).fill(0);
  const walk = (reel: number, weight: bigint): void => {
    if (reel === reels.length) {
      visit(gridOf(reels, stops, math.rows), weight);
      return;
    }
    const counts = tables[reel]!.counts;
    for (let s = 0; s < counts.length; s++) {
      if (counts[s] === 0n) continue;
      stops[reel] = s;
      walk(reel + 1, weight * counts[s]!);
    }
  };
  walk(0, 1n);
  return DRAW_SPACE ** BigInt(reels.length);
}

const linesTenths = (math: GemsMath, grid: GemSymbol[][]): number => lineWins(math, grid).reduce((sum, win) => sum + win.tenths, 0);

// a + b capped, as distributions (independent)
function convolve(a: Distribution, b: Distribution, cap: number): Distribution {
  const weights = new Map<number, bigint>();
  for (const [x, wx] of a.weights) for (const [y, wy] of b.weights) add(weights, Math.min(x + y, cap), wx * wy);
  return { weights, total: a.total * b.total };
}

export type GemsDistributions = {
  // the base spin's win in tenths (lines, plus the scatter pay when it triggers), by whether it triggers
  baseNoFeature: Distribution;
  baseFeature: Distribution;
  // one free spin's line tenths, before the multiplier
  freeSpin: Distribution;
  // the feature's total (multiplier x the free spins' lines), capped
  feature: Distribution;
  // the play's capped win in tenths: a base play, and a bought feature
  basePlay: Distribution;
  boughtPlay: Distribution;
};

// computed once per math (a few hundred ms): the par sheet and the return ask for it
const DISTRIBUTIONS = new WeakMap<GemsMath, GemsDistributions>();
export function gemsDistributions(math: GemsMath = GEMS_MATH): GemsDistributions {
  let distributions = DISTRIBUTIONS.get(math);
  if (!distributions) {
    distributions = computeDistributions(math);
    DISTRIBUTIONS.set(math, distributions);
  }
  return distributions;
}

function computeDistributions(math: GemsMath): GemsDistributions {
  const tables = gemsTables(math);
  const cap = math.capTenths;
  const noFeature = new Map<number, bigint>();
  const feature = new Map<number, bigint>();
  const baseTotal = enumerateSpins(math, math.baseReels, tables.base, (grid, weight) => {
    const lines = linesTenths(math, grid);
    if (scatterCount(grid) >= math.scattersToTrigger) add(feature, Math.min(lines + math.scatterPayTenths, cap), weight);
    else add(noFeature, Math.min(lines, cap), weight);
  });
  const spinWeights = new Map<number, bigint>();
  const spinTotal = enumerateSpins(math, math.featureReels, tables.feature, (grid, weight) => add(spinWeights, Math.min(linesTenths(math, grid), cap), weight));
  const freeSpin = reduced({ weights: spinWeights, total: spinTotal });
  let lines = freeSpin;
  for (let k = 1; k < math.freeSpins; k++) lines = reduced(convolve(lines, freeSpin, cap));
  const featureWeights = new Map<number, bigint>();
  math.featureMultipliers.forEach(({ multiplier }, i) => {
    const count = tables.multiplier.counts[i]!;
    for (const [s, w] of lines.weights) add(featureWeights, Math.min(s * multiplier, cap), w * count);
  });
  const featureTotal = reduced({ weights: featureWeights, total: lines.total * DRAW_SPACE });
  const baseFeature = { weights: feature, total: baseTotal };
  // a base play: no feature, or the base win plus the feature's (independent draws), capped;
  // both over baseTotal x featureTotal.total
  const basePlay = convolve(baseFeature, featureTotal, cap).weights;
  for (const [v, w] of noFeature) add(basePlay, v, w * featureTotal.total);
  return {
    baseNoFeature: { weights: noFeature, total: baseTotal },
    baseFeature,
    freeSpin,
    feature: featureTotal,
    basePlay: reduced({ weights: basePlay, total: baseTotal * featureTotal.total }),
    boughtPlay: featureTotal,
  };
}

export type PlayFigures = {
  // the return per unit debited (stake, or featureBuyCost x stake), jackpot excluded
  rtp: Fraction;
  // P(the play wins something)
  hitRate: Fraction;
  // the variance of the play's win per unit debited, and its square root
  variance: Fraction;
  // the largest win in tenths of the stake (the cap when it can bind) and its probability
  maxWinTenths: number;
  maxWinProbability: Fraction;
};

export function playFigures(play: Distribution, costInStakes: bigint): PlayFigures {
  let sum = 0n;
  let squares = 0n;
  let hits = 0n;
  let max = 0;
  for (const [v, w] of play.weights) {
    const value = BigInt(v);
    sum += value * w;
    squares += value * value * w;
    if (v > 0) hits += w;
    if (v > max && w > 0n) max = v;
  }
  const unit = TENTHS * costInStakes;
  const { total } = play;
  return {
    rtp: reducedFraction(sum, total * unit),
    hitRate: reducedFraction(hits, total),
    // (E[X^2] - E[X]^2) / unit^2 with E over total
    variance: reducedFraction(squares * total - sum * sum, total * total * unit * unit),
    maxWinTenths: max,
    maxWinProbability: reducedFraction(play.weights.get(max) ?? 0n, total),
  };
}

export type GemsParSheet = {
  gameCode: 'gems';
  mathVersion: string;
  rtpBase: Rtp;
  rtpFeatureBuy: Rtp;
  // the part of rtpBase that the base spin's own wins pay (lines, and the scatter pay)
  rtpBaseSpin: Rtp;
  featureBuyCost: string;
  hitRate: Rtp;
  featureTrigger: Rtp & { oneIn: string };
  // the standard deviation of the win per unit debited
  volatilityBase: string;
  volatilityFeatureBuy: string;
  // x stake; its odds per base play and per bought feature
  maxWin: string;
  maxWinBase: Rtp & { oneIn: string };
  maxWinFeatureBuy: Rtp & { oneIn: string };
  // the feature's mean win, x stake
  featureMean: string;
  // the jackpot: its probability per play and its contribution per unit debited
  jackpot: Rtp & { oneIn: string; contribution: string };
};

// the square root of a non-negative fraction, to `places` decimals, rounded down
export function sqrtText({ numerator, denominator }: Fraction, places = 6): string {
  const scale = 10n ** BigInt(places);
  const target = (numerator * scale * scale) / denominator;
  let root = BigInt(Math.floor(Math.sqrt(Number(target))));
  while (root * root > target) root--;
  while ((root + 1n) * (root + 1n) <= target) root++;
  return `${root / scale}.${(root % scale).toString().padStart(places, '0')}`;
}

const oneIn = ({ numerator, denominator }: Fraction, places = 1): string => (numerator === 0n ? 'never' : decimalText({ numerator: denominator, denominator: numerator }, places));
const odds = (fraction: Fraction): Rtp & { oneIn: string } => ({ ...rtpText(fraction), decimal: decimalText(fraction, 12), oneIn: oneIn(fraction) });

export function gemsParSheet(math: GemsMath = GEMS_MATH): GemsParSheet {
  const distributions = gemsDistributions(math);
  const base = playFigures(distributions.basePlay, 1n);
  const bought = playFigures(distributions.boughtPlay, math.featureBuyCost);
  const trigger = reducedFraction([...distributions.baseFeature.weights.values()].reduce((s, w) => s + w, 0n), distributions.baseFeature.total);
  const featureMean = reducedFraction(
    [...distributions.feature.weights].reduce((s, [v, w]) => s + BigInt(v) * w, 0n),
    distributions.feature.total * TENTHS,
  );
  const jackpot = reducedFraction(gemsTables(math).jackpot.counts[0]!, DRAW_SPACE);
  const { baseNoFeature, baseFeature } = distributions;
  const spinSum = [...baseNoFeature.weights, ...baseFeature.weights].reduce((s, [v, w]) => s + BigInt(v) * w, 0n);
  const baseSpin = reducedFraction(spinSum, baseNoFeature.total * TENTHS);
  const maxWin = Math.max(base.maxWinTenths, bought.maxWinTenths);
  return {
    gameCode: 'gems',
    mathVersion: GEMS_MATH_VERSION,
    rtpBase: rtpText(base.rtp),
    rtpFeatureBuy: rtpText(bought.rtp),
    rtpBaseSpin: rtpText(baseSpin),
    featureBuyCost: math.featureBuyCost.toString(),
    hitRate: rtpText(base.hitRate),
    featureTrigger: { ...rtpText(trigger), oneIn: oneIn(trigger) },
    volatilityBase: sqrtText(base.variance, 4),
    volatilityFeatureBuy: sqrtText(bought.variance, 4),
    maxWin: decimalText({ numerator: BigInt(maxWin), denominator: TENTHS }, 1),
    maxWinBase: odds(base.maxWinTenths === maxWin ? base.maxWinProbability : { numerator: 0n, denominator: 1n }),
    maxWinFeatureBuy: odds(bought.maxWinTenths === maxWin ? bought.maxWinProbability : { numerator: 0n, denominator: 1n }),
    featureMean: decimalText(featureMean, 4),
    jackpot: { ...odds(jackpot), contribution: decimalText({ numerator: math.jackpotContributionPer100000, denominator: CONTRIBUTION_SCALE }, 5) },
  };
}

// The exact return per unit debited of a base play, or of a bought feature, jackpot excluded
// (the module's `rtp`, D39, once the game is registered). It is the nominal return: a payout
// is floor(stake * U / 10), so for a stake that is not a multiple of 10 micro-units the
// wallet's return is lower by less than 1 micro-unit per play.
export function gemsRtp(math: GemsMath = GEMS_MATH, featureBuy = false): ExactRtp {
  const distributions = gemsDistributions(math);
  const { rtp } = featureBuy ? playFigures(distributions.boughtPlay, math.featureBuyCost) : playFigures(distributions.basePlay, 1n);
  return { ...rtp, ...rtpText(rtp) };
}

export type GemsBet = { featureBuy: boolean };

// `rgs game simulate` for this game (D39's loop, simulation.ts, over D41's draws): the plays of
// one session, the given server seed, the client seed `simulation`, the nonces 0 to N-1, each
// played by deriveGems, with an empty jackpot pool (the jackpot is outside the return). A
// round's stake is what it debits: the stake, or featureBuyCost x stake for a bought feature.
export function simulateGems(input: SimulationInput<GemsMath, GemsBet>, exact: ExactRtp = gemsRtp(input.config, input.bet.featureBuy)): SimulationResult {
  const { config: math, bet, stakeMicro, rounds, serverSeed } = input;
  if (!Number.isSafeInteger(rounds) || rounds < 2) throw new RangeError(`rounds must be an integer, at least 2: ${rounds}`);
  if (stakeMicro <= 0n) throw new RangeError(`stake must be positive: ${stakeMicro}`);
  let wins = 0;
  let paid = 0n;
  let paidSquares = 0n;
  for (let nonce = 0; nonce < rounds; nonce++) {
    const { payoutMicro } = deriveGems({ serverSeed, clientSeed: SIMULATION_CLIENT_SEED, nonce, stakeMicro, featureBuy: bet.featureBuy, jackpotPoolMicro: 0n }, math);
    if (payoutMicro > 0n) wins++;
    paid += payoutMicro;
    paidSquares += payoutMicro * payoutMicro;
  }
  const cost = bet.featureBuy ? stakeMicro * math.featureBuyCost : stakeMicro;
  return simulationResult({ rounds, wins, paid, paidSquares, stakeMicro: cost, exact });
}
