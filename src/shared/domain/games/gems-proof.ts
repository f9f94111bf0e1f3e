import { roundedPayout } from '../currency.js';
import { MICRO, isRecord, unprovenCheck, winCallsCheck, type PackCheck, type PackFacts } from '../pack-checks.js';
import type { Rtp } from '../par-sheet.js';
import { bookedPayout } from '../payout.js';
import {
  type GemsProof,
  type MultiLineWin,
  type MultiProofEvent,
  type MultiProofOutcome,
  type MultiSpin,
  type ProofVerdict,
  openProof,
} from '../proof.js';
import { PAYOUT_ROUNDINGS, type PayoutRounding } from './config.js';
import {
  GEMS_MATH,
  GEMS_MATH_VERSION,
  GEMS_RNG_VERSION,
  deriveGems,
  gemsRtp,
  gridOf,
  type GemSymbol,
  type GemsEvent,
  type GemsMath,
  type GemsOutcome,
  type GemsSpin,
  type LineWin,
} from './gems-math.js';

// Gem Vault's round as it is kept and proven (D41, contract 2.11 MULTI), pure: the stored form
// of its outcome (the JSONB column rounds.outcome) and its strict reading back, the proof of a
// round and its offline verification, and the dispute pack's par sheet and checks (D32). The
// math is gems-math.ts's; nothing here decides a draw or a pay, it only re-derives and compares.

export type { GemsProof, MultiProofOutcome } from '../proof.js';

// ---- the stored form of an outcome (D18: every amount a decimal string) ---------------------

// GemsOutcome with its bigints as decimal strings: what rounds.outcome holds
export type GemsOutcomeJson = MultiProofOutcome & {
  costMicro: string;
  winTenths: number;
  capped: boolean;
  payoutMicro: string;
  draws: number;
};

const spinJson = (spin: GemsSpin): MultiSpin => ({ stops: [...spin.stops], grid: spin.grid.map((row) => [...row]) });
const lineWinJson = (win: LineWin): MultiLineWin => ({ line: win.line, symbol: win.symbol, tenths: win.tenths });

function eventJson(event: GemsEvent): MultiProofEvent {
  const payoutMicro = event.payoutMicro.toString();
  switch (event.type) {
    case 'LINE_WIN':
      return { type: 'LINE_WIN', subOutcome: lineWinJson(event.subOutcome), payoutMicro };
    case 'FEATURE_TRIGGER': {
      const { purchased, scatters, freeSpins, multiplier, tenths } = event.subOutcome;
      return { type: 'FEATURE_TRIGGER', subOutcome: { purchased, scatters, freeSpins, multiplier, tenths }, payoutMicro };
    }
    case 'FREE_SPIN': {
      const { spin, lineWins, multiplier, tenths } = event.subOutcome;
      return { type: 'FREE_SPIN', subOutcome: { spin, ...spinJson(event.subOutcome), lineWins: lineWins.map(lineWinJson), multiplier, tenths }, payoutMicro };
    }
    case 'JACKPOT':
      return { type: 'JACKPOT', subOutcome: { poolMicro: event.subOutcome.poolMicro.toString() }, payoutMicro };
  }
}

// contract 2.11 MULTI: the outcome as the proof carries it (D41), subOutcome amounts as strings
export function gemsProofOutcome(outcome: GemsOutcome): MultiProofOutcome {
  return {
    type: 'MULTI',
    baseGame: outcome.baseGame === null ? null : spinJson(outcome.baseGame),
    events: outcome.events.map(eventJson),
    featurePurchased: outcome.featurePurchased,
    jackpotContributionMicro: outcome.jackpotContributionMicro.toString(),
  };
}

export function gemsOutcomeJson(outcome: GemsOutcome): GemsOutcomeJson {
  return {
    ...gemsProofOutcome(outcome),
    costMicro: outcome.costMicro.toString(),
    winTenths: outcome.winTenths,
    capped: outcome.capped,
    payoutMicro: outcome.payoutMicro.toString(),
    draws: outcome.draws,
  };
}

// The stored outcome read back, strictly: every field of its type and in its range, no field
// more, the grids those of their stops, the events' payouts summing to the play's. A row that
// is not such an outcome is corrupt, and reading it is an error (never a settlement, contract
// 8.4: a payout follows from an outcome, not from a guess at one). `math` is the game's.
export function gemsOutcomeOf(json: unknown, math: GemsMath = GEMS_MATH): GemsOutcome {
  const at = 'rounds.outcome';
  const fail = (path: string, problem: string): never => {
    throw new Error(`${at}${path}: ${problem}`);
  };
  const record = (value: unknown, path: string, keys: readonly string[]): Record<string, unknown> => {
    if (!isRecord(value)) return fail(path, 'must be an object');
    const extra = Object.keys(value).filter((key) => !keys.includes(key));
    if (extra.length) fail(path, `has no field ${extra.join(', ')}`);
    for (const key of keys) if (!Object.hasOwn(value, key)) fail(`${path}.${key}`, 'is missing');
    return value;
  };
  const integer = (value: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) fail(path, `must be an integer, ${min} to ${max}`);
    return value as number;
  };
  const boolean = (value: unknown, path: string): boolean => (typeof value === 'boolean' ? value : fail(path, 'must be a boolean'));
  // D18: an amount is a decimal string, never a JSON number
  const micro = (value: unknown, path: string): bigint => (typeof value === 'string' && MICRO.test(value) ? BigInt(value) : fail(path, 'must be an amount as a decimal string (D18)'));
  // the game's symbols: those on its strips
  const symbols = new Set<string>([...math.baseReels.flat(), ...math.featureReels.flat()]);
  const spin = (value: unknown, path: string, reels: readonly (readonly GemSymbol[])[], keys: readonly string[]): Record<string, unknown> & GemsSpin => {
    const r = record(value, path, keys);
    if (!Array.isArray(r.stops) || r.stops.length !== reels.length) fail(`${path}.stops`, `must be ${reels.length} stops`);
    const stops = (r.stops as unknown[]).map((stop, j) => integer(stop, `${path}.stops[${j}]`, 0, reels[j]!.length - 1));
    const grid = gridOf(reels, stops, math.rows);
    const stated = r.grid;
    const same =
      Array.isArray(stated) &&
      stated.length === grid.length &&
      stated.every((row, i) => Array.isArray(row) && row.length === grid[i]!.length && row.every((s, j) => typeof s === 'string' && symbols.has(s) && s === grid[i]![j]));
    if (!same) fail(`${path}.grid`, `must be the grid its stops show (${JSON.stringify(grid)})`);
    return { ...r, stops, grid };
  };
  const lineWin = (value: unknown, path: string): LineWin => {
    const r = record(value, path, ['line', 'symbol', 'tenths']);
    const line = integer(r.line, `${path}.line`, 0, math.lines.length - 1);
    if (typeof r.symbol !== 'string' || !symbols.has(r.symbol)) fail(`${path}.symbol`, 'must be a symbol of the game');
    return { line, symbol: r.symbol as GemSymbol, tenths: integer(r.tenths, `${path}.tenths`, 0) };
  };
  const EVENT_KEYS = ['type', 'subOutcome', 'payoutMicro'];
  const event = (value: unknown, path: string): GemsEvent => {
    const r = record(value, path, EVENT_KEYS);
    const payoutMicro = micro(r.payoutMicro, `${path}.payoutMicro`);
    const sub = `${path}.subOutcome`;
    switch (r.type) {
      case 'LINE_WIN':
        return { type: 'LINE_WIN', subOutcome: lineWin(r.subOutcome, sub), payoutMicro };
      case 'FEATURE_TRIGGER': {
        const s = record(r.subOutcome, sub, ['purchased', 'scatters', 'freeSpins', 'multiplier', 'tenths']);
        return {
          type: 'FEATURE_TRIGGER',
          subOutcome: {
            purchased: boolean(s.purchased, `${sub}.purchased`),
            scatters: s.scatters === null ? null : integer(s.scatters, `${sub}.scatters`, 0),
            freeSpins: integer(s.freeSpins, `${sub}.freeSpins`, 0),
            multiplier: integer(s.multiplier, `${sub}.multiplier`, 1),
            tenths: integer(s.tenths, `${sub}.tenths`, 0),
          },
          payoutMicro,
        };
      }
      case 'FREE_SPIN': {
        const s = spin(r.subOutcome, sub, math.featureReels, ['spin', 'stops', 'grid', 'lineWins', 'multiplier', 'tenths']);
        if (!Array.isArray(s.lineWins)) fail(`${sub}.lineWins`, 'must be an array');
        return {
          type: 'FREE_SPIN',
          subOutcome: {
            spin: integer(s.spin, `${sub}.spin`, 0, math.freeSpins - 1),
            stops: s.stops,
            grid: s.grid,
            lineWins: (s.lineWins as unknown[]).map((win, i) => lineWin(win, `${sub}.lineWins[${i}]`)),
            multiplier: integer(s.multiplier, `${sub}.multiplier`, 1),
            tenths: integer(s.tenths, `${sub}.tenths`, 0),
          },
          payoutMicro,
        };
      }
      case 'JACKPOT': {
        const s = record(r.subOutcome, sub, ['poolMicro']);
        return { type: 'JACKPOT', subOutcome: { poolMicro: micro(s.poolMicro, `${sub}.poolMicro`) }, payoutMicro };
      }
      default:
        return fail(`${path}.type`, 'must be LINE_WIN, FEATURE_TRIGGER, FREE_SPIN or JACKPOT');
    }
  };

  const o = record(json, '', ['type', 'baseGame', 'events', 'featurePurchased', 'jackpotContributionMicro', 'costMicro', 'winTenths', 'capped', 'payoutMicro', 'draws']);
  if (o.type !== 'MULTI') fail('.type', 'must be MULTI (contract 2.11)');
  const featurePurchased = boolean(o.featurePurchased, '.featurePurchased');
  // a bought feature has no base spin (D41), a base play has one
  let baseGame: GemsSpin | null = null;
  if (featurePurchased) {
    if (o.baseGame !== null) fail('.baseGame', 'must be null for a bought feature');
  } else {
    const { stops, grid } = spin(o.baseGame, '.baseGame', math.baseReels, ['stops', 'grid']);
    baseGame = { stops, grid };
  }
  if (!Array.isArray(o.events)) fail('.events', 'must be an array');
  const events = (o.events as unknown[]).map((e, i) => event(e, `.events[${i}]`));
  const jackpotContributionMicro = micro(o.jackpotContributionMicro, '.jackpotContributionMicro');
  const costMicro = micro(o.costMicro, '.costMicro');
  if (costMicro === 0n) fail('.costMicro', 'must be positive');
  const winTenths = integer(o.winTenths, '.winTenths', 0, math.capTenths);
  const capped = boolean(o.capped, '.capped');
  if (capped !== (winTenths === math.capTenths)) fail('.capped', `must say whether winTenths is the cap, ${math.capTenths}`);
  const payoutMicro = micro(o.payoutMicro, '.payoutMicro');
  // D41: the events' payouts sum to the play's
  const sum = events.reduce((s, e) => s + e.payoutMicro, 0n);
  if (sum !== payoutMicro) fail('.payoutMicro', `must be the events' sum, ${sum}`);
  const draws = integer(o.draws, '.draws', 1);
  return { type: 'MULTI', baseGame, events, featurePurchased, jackpotContributionMicro, costMicro, winTenths, capped, payoutMicro, draws };
}

// ---- the proof (contract 2.11 MULTI, D41) --------------------------------------------------

export type GemsProofInput = {
  roundId: string;
  gameCode: string;
  sessionId: string;
  serverSeed: string;
  // the hash committed at session start (contract 2.3), as stored, not recomputed
  serverSeedHash: string;
  clientSeed: string;
  nonce: number;
  currency: string;
  // the stake the play's pays are tenths of (deriveGems's); a bought feature debited
  // featureBuyCost times it
  stakeMicro: bigint;
  // what the round booked: the events' sum after payoutRounding, a free bet's net (D42)
  payoutMicro: bigint;
  payoutRounding: PayoutRounding;
  // D41: the configuration's contribution to the jackpot per 1,000,000 micro-units debited
  jackpotRateMicro: bigint;
  isFree: boolean;
  // the outcome as stored on the round, not recomputed, so that a verifier checks it
  outcome: GemsOutcome;
};

// The jackpot pool the play was given: the JACKPOT event's, when it hit; when it missed the
// pool entered nothing, and the proof says null rather than a figure it does not know.
const jackpotPool = (outcome: GemsOutcome): bigint | null => {
  const jackpot = outcome.events.find((event) => event.type === 'JACKPOT');
  return jackpot ? jackpot.subOutcome.poolMicro : null;
};

export function buildGemsProof(input: GemsProofInput): GemsProof {
  const { outcome } = input;
  // a proof states the stake the outcome was played at (its debit is that stake, or the
  // feature's price); anything else is a caller's mix-up, not a proof to publish
  const cost = outcome.featurePurchased ? input.stakeMicro * GEMS_MATH.featureBuyCost : input.stakeMicro;
  if (cost !== outcome.costMicro) throw new Error(`round ${input.roundId}: its outcome debited ${outcome.costMicro}, not the stake's ${cost}`);
  const pool = jackpotPool(outcome);
  return {
    roundId: input.roundId,
    gameCode: input.gameCode,
    rngVersion: GEMS_RNG_VERSION,
    mathVersion: GEMS_MATH_VERSION,
    serverSeed: input.serverSeed,
    serverSeedHash: input.serverSeedHash,
    clientSeed: input.clientSeed,
    nonce: input.nonce,
    outcome: gemsProofOutcome(outcome),
    stakeMicro: input.stakeMicro.toString(),
    jackpotPoolMicro: pool === null ? null : pool.toString(),
    payoutMicro: input.payoutMicro.toString(),
    payoutRounding: input.payoutRounding,
    jackpotRateMicro: input.jackpotRateMicro.toString(),
    currency: input.currency,
    isFree: input.isFree,
    sessionId: input.sessionId,
  };
}

// What a round books of its play (contract 8.4, D46, D42): the events' sum, rounded as the
// cycle's payoutRounding says in the round's currency, and for a free bet its net of the
// grant's stake (D42: payout - stake, a bought feature's too), never below 0.
export const gemsBookedPayout = (outcome: Pick<GemsOutcome, 'payoutMicro'>, rounding: PayoutRounding, currency: string, isFree: boolean, stakeMicro: bigint): bigint =>
  bookedPayout(roundedPayout(outcome.payoutMicro, rounding, currency), stakeMicro, isFree);

// what `rgs verify` recomputed of a gems proof
export type GemsDerivation = {
  serverSeedHash: string;
  // the outcome re-derived from the seeds, the stake, the feature buy and the pool
  outcome: MultiProofOutcome;
  costMicro: string;
  winTenths: number;
  capped: boolean;
  draws: number;
  // the booked payout (D46, D42)
  payoutMicro: string;
};

const POSITIVE_MICRO = (value: unknown): boolean => typeof value === 'string' && MICRO.test(value) && value !== '0';

// The fields a gems proof needs beside 2.11's, with their types; one problem per bad field.
// The outcome's own content is compared with the derivation's, not shaped here.
function gemsShapeProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const outcome = body.outcome as Record<string, unknown>;
  if (typeof outcome.featurePurchased !== 'boolean') problems.push('outcome.featurePurchased must be a boolean');
  if (!Array.isArray(outcome.events)) problems.push('outcome.events must be an array');
  if (outcome.baseGame !== null && !isRecord(outcome.baseGame)) problems.push('outcome.baseGame must be an object or null');
  if (typeof outcome.jackpotContributionMicro !== 'string' || !MICRO.test(outcome.jackpotContributionMicro)) problems.push('outcome.jackpotContributionMicro must be a decimal string (D18)');
  if (!POSITIVE_MICRO(body.stakeMicro)) problems.push('stakeMicro must be a positive decimal string (D18)');
  if (body.jackpotPoolMicro !== null && (typeof body.jackpotPoolMicro !== 'string' || !MICRO.test(body.jackpotPoolMicro))) {
    problems.push('jackpotPoolMicro must be null or a decimal string (D18)');
  }
  if (typeof body.payoutMicro !== 'string' || !MICRO.test(body.payoutMicro)) problems.push('payoutMicro must be a decimal string (D18)');
  if (typeof body.jackpotRateMicro !== 'string' || !MICRO.test(body.jackpotRateMicro)) problems.push('jackpotRateMicro must be a decimal string (D18)');
  if (!(PAYOUT_ROUNDINGS as readonly unknown[]).includes(body.payoutRounding)) problems.push(`payoutRounding must be one of ${PAYOUT_ROUNDINGS.join(', ')}`);
  if (typeof body.currency !== 'string' || body.currency === '') problems.push('currency must be a non-empty string');
  if (typeof body.isFree !== 'boolean') problems.push('isFree must be a boolean');
  return problems;
}

// JSON values equal, objects by their keys whatever their order. The recursion follows
// `expected`, the verifier's own derivation, so a hostile `actual` cannot make it deep.
function sameJson(expected: unknown, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return expected === actual;
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((v, i) => sameJson(v, actual[i]));
  if (!isRecord(actual)) return false;
  const keys = Object.keys(expected);
  return Object.keys(actual).length === keys.length && keys.every((key) => Object.hasOwn(actual, key) && sameJson((expected as Record<string, unknown>)[key], actual[key]));
}

// contract 2.11's rule for a MULTI proof (D41): sha256(serverSeed) is the committed hash; the
// play derived again from the seeds, the nonce, the stake, the feature buy and the pool it was
// given has the proof's base spin, each of its events (type, sub-outcome, payout) and its
// contribution to the pool; the pool is stated iff the jackpot hit; and the round booked the
// events' sum, rounded as payoutRounding says in the currency (D46), a free bet its net (D42).
// Any body gets a verdict, never an exception (D24).
export function verifyGemsProof(body: unknown): ProofVerdict<GemsDerivation> {
  try {
    return verify(body);
  } catch (err) {
    // nothing above throws on a shaped body; a hostile object (a getter, a cycle) still gets a verdict
    return { valid: false, checks: [{ name: 'shape', ok: false, actual: [`the proof could not be read: ${err instanceof Error ? err.message : String(err)}`] }] };
  }
}

function verify(body: unknown): ProofVerdict<GemsDerivation> {
  const opened = openProof<GemsProof>(body, { type: 'MULTI', rngVersion: GEMS_RNG_VERSION, mathVersion: GEMS_MATH_VERSION, shapeProblems: gemsShapeProblems });
  if ('verdict' in opened) return opened.verdict;
  const { proof, checks, hash } = opened;

  // D41: the play again, from the proof's inputs (a missed jackpot leaves the pool unused)
  const derived = deriveGems({
    serverSeed: proof.serverSeed,
    clientSeed: proof.clientSeed,
    nonce: proof.nonce,
    stakeMicro: BigInt(proof.stakeMicro),
    featureBuy: proof.outcome.featurePurchased,
    jackpotPoolMicro: proof.jackpotPoolMicro === null ? 0n : BigInt(proof.jackpotPoolMicro),
    jackpotRateMicro: BigInt(proof.jackpotRateMicro),
  });
  const shown = gemsProofOutcome(derived);
  const stated = proof.outcome;
  checks.push({ name: 'base_game', ok: sameJson(shown.baseGame, stated.baseGame), expected: shown.baseGame, actual: stated.baseGame });
  checks.push({ name: 'event_count', ok: stated.events.length === shown.events.length, expected: shown.events.length, actual: stated.events.length });
  shown.events.forEach((event, i) => {
    const actual = stated.events[i] ?? null;
    checks.push({ name: `event_${i}`, ok: sameJson(event, actual), expected: event, actual });
  });
  checks.push({
    name: 'jackpot_contribution',
    ok: shown.jackpotContributionMicro === stated.jackpotContributionMicro,
    expected: shown.jackpotContributionMicro,
    actual: stated.jackpotContributionMicro,
  });
  const hit = derived.events.some((event) => event.type === 'JACKPOT');
  checks.push({
    name: 'jackpot_pool',
    ok: hit === (proof.jackpotPoolMicro !== null),
    expected: hit ? 'the pool the play was given (the jackpot hit)' : null,
    actual: proof.jackpotPoolMicro,
  });
  const booked = gemsBookedPayout(derived, proof.payoutRounding, proof.currency, proof.isFree, BigInt(proof.stakeMicro)).toString();
  checks.push({ name: 'payout', ok: booked === proof.payoutMicro, expected: booked, actual: proof.payoutMicro });
  return {
    valid: checks.every((check) => check.ok),
    checks,
    derived: {
      serverSeedHash: hash,
      outcome: shown,
      costMicro: derived.costMicro.toString(),
      winTenths: derived.winTenths,
      capped: derived.capped,
      draws: derived.draws,
      payoutMicro: booked,
    },
  };
}

// ---- the dispute pack (D32) ----------------------------------------------------------------

// D32: a gems round's par sheet: the game's exact return to player, of a base play and of a
// bought feature (per unit debited, the jackpot left out: D41), with the configuration the round
// was played under as written (the module's config.write form), its payoutRounding and the
// round's currency (D46). The returns are nominal: a payout truncated to the micro-unit, or
// rounded down to the minor unit, returns less by under one such unit per play (gems.md).
export type GemsPackParSheet = {
  gameCode: 'gems';
  mathVersion: string;
  config: Record<string, string | number>;
  payoutRounding: PayoutRounding;
  currency: string;
  featureBuyCost: string;
  rtpBase: Rtp;
  rtpFeatureBuy: Rtp;
};

// the two returns, computed once: gemsDistributions enumerates every grid of both sets of reels
let returns: { base: Rtp; featureBuy: Rtp } | undefined;
function gemsReturns(): { base: Rtp; featureBuy: Rtp } {
  if (!returns) {
    const rtp = (featureBuy: boolean): Rtp => {
      const { fraction, decimal } = gemsRtp(GEMS_MATH, featureBuy);
      return { fraction, decimal };
    };
    returns = { base: rtp(false), featureBuy: rtp(true) };
  }
  return returns;
}

export function gemsPackParSheet(input: { config: Record<string, string | number>; payoutRounding: PayoutRounding; currency: string }): GemsPackParSheet {
  const { base, featureBuy } = gemsReturns();
  return {
    gameCode: 'gems',
    mathVersion: GEMS_MATH_VERSION,
    config: input.config,
    payoutRounding: input.payoutRounding,
    currency: input.currency,
    featureBuyCost: GEMS_MATH.featureBuyCost.toString(),
    rtpBase: base,
    rtpFeatureBuy: featureBuy,
  };
}

// the par sheet read back, or the problem
function readParSheet(sheet: unknown): GemsPackParSheet | string {
  const form = 'par-sheet.json must hold gameCode gems, mathVersion, config, payoutRounding, currency, featureBuyCost, rtpBase and rtpFeatureBuy';
  if (
    !isRecord(sheet) ||
    sheet.gameCode !== 'gems' ||
    typeof sheet.mathVersion !== 'string' ||
    !isRecord(sheet.config) ||
    !(PAYOUT_ROUNDINGS as readonly unknown[]).includes(sheet.payoutRounding) ||
    typeof sheet.currency !== 'string' ||
    typeof sheet.featureBuyCost !== 'string' ||
    !isRecord(sheet.rtpBase) ||
    !isRecord(sheet.rtpFeatureBuy)
  ) {
    return form;
  }
  return sheet as GemsPackParSheet;
}

// D32, D41: a gems round's pack. The par sheet's returns are the game's, for the round's
// currency; the proof (once the seed is revealed) re-derives the play and is this round's, its
// stake the bet's debit; the payout follows from the outcome (the proof's when revealed, else
// round.json's `outcome` in the stored form, when it carries one), the par sheet's rounding and
// whether the bet was free (D42), as do the win calls.
export function gemsPackChecks({ roundId, round, bet, proof, sheet, walletCalls }: PackFacts): PackCheck[] {
  const checks: PackCheck[] = [];
  const check = (name: string, ok: boolean, detail?: unknown) => checks.push(detail === undefined ? { name, ok } : { name, ok, detail });

  const read = readParSheet(sheet);
  const stated = typeof read === 'string' ? undefined : read;
  if (!stated) check('par_sheet', false, read);
  else {
    const expected = gemsPackParSheet(stated);
    const sameMath =
      stated.mathVersion === expected.mathVersion &&
      stated.featureBuyCost === expected.featureBuyCost &&
      sameJson(expected.rtpBase, stated.rtpBase) &&
      sameJson(expected.rtpFeatureBuy, stated.rtpFeatureBuy);
    const sameRound = stated.currency === round.currency;
    check(
      'par_sheet',
      sameMath && sameRound,
      sameMath && sameRound
        ? undefined
        : sameMath
          ? 'par-sheet.json is for another currency than round.json'
          : { expected: { mathVersion: expected.mathVersion, featureBuyCost: expected.featureBuyCost, rtpBase: expected.rtpBase, rtpFeatureBuy: expected.rtpFeatureBuy }, actual: { mathVersion: stated.mathVersion, featureBuyCost: stated.featureBuyCost, rtpBase: stated.rtpBase, rtpFeatureBuy: stated.rtpFeatureBuy } },
    );
  }

  // the outcome round.json keeps, if it keeps one (the stored form); a corrupt one is a problem
  let recorded: GemsOutcome | undefined;
  let recordedProblem: string | undefined;
  if (round.outcome !== undefined && round.outcome !== null) {
    try {
      recorded = gemsOutcomeOf(round.outcome);
    } catch (err) {
      recordedProblem = (err as Error).message;
    }
  }

  let outcome = recorded;
  let proven = false;
  // a settled round has its outcome; only a voided one may have none (D32's no_outcome)
  const unproven = unprovenCheck(proof, round, round.state === 'SETTLED' || recorded !== undefined);
  if (unproven) checks.push(unproven);
  else {
    const verdict = verifyGemsProof(proof);
    check('proof', verdict.valid, verdict.valid ? undefined : verdict.checks.filter((c) => !c.ok));
    if (verdict.valid) {
      const p = proof as GemsProof;
      const derived = verdict.derived!;
      const same =
        p.roundId === roundId &&
        p.currency === round.currency &&
        (typeof round.nonce !== 'number' || p.nonce === round.nonce) &&
        (round.state === 'VOIDED' || p.payoutMicro === round.totalPayoutsMicro) &&
        (!recorded || sameJson(gemsProofOutcome(recorded), p.outcome)) &&
        (!stated || (p.payoutRounding === stated.payoutRounding && p.mathVersion === stated.mathVersion)) &&
        // the bet's debit is the play's: the stake, or the feature's price (D41); a free play's,
        // the grant's stake (D42)
        (!bet || (bet.amountMicro === (p.isFree ? p.stakeMicro : derived.costMicro) && (bet.isFree === true) === p.isFree)) &&
        (!bet || typeof bet.featureBuy !== 'boolean' || bet.featureBuy === p.outcome.featurePurchased);
      check('proof_matches_round', same, same ? undefined : 'the proof\'s round, outcome, terms or bet differ from round.json, bets.json and par-sheet.json');
      outcome = deriveGems({
        serverSeed: p.serverSeed,
        clientSeed: p.clientSeed,
        nonce: p.nonce,
        stakeMicro: BigInt(p.stakeMicro),
        featureBuy: p.outcome.featurePurchased,
        jackpotPoolMicro: p.jackpotPoolMicro === null ? 0n : BigInt(p.jackpotPoolMicro),
      });
      proven = true;
    }
  }

  if (bet && stated) checks.push(...gemsPayoutChecks(round, bet, stated, outcome, recordedProblem, proven, walletCalls));
  return checks;
}

function gemsPayoutChecks(
  round: Record<string, unknown>,
  bet: Record<string, unknown>,
  sheet: GemsPackParSheet,
  outcome: GemsOutcome | undefined,
  recordedProblem: string | undefined,
  proven: boolean,
  walletCalls: unknown,
): PackCheck[] {
  if (typeof bet.amountMicro !== 'string' || !MICRO.test(bet.amountMicro)) return [{ name: 'payout', ok: false, detail: 'the bet must carry amountMicro' }];
  if (round.state === 'VOIDED') {
    const ok = round.totalPayoutsMicro === '0';
    return [{ name: 'payout', ok, detail: ok ? 'voided: nothing paid' : { expected: '0', actual: round.totalPayoutsMicro } }];
  }
  if (!outcome) return [{ name: 'payout', ok: false, detail: recordedProblem ?? 'a settled round\'s payout follows from its outcome: the proof\'s, or round.json\'s outcome' }];
  if (typeof round.currency !== 'string') return [{ name: 'payout', ok: false, detail: 'round.json must carry currency' }];
  // D42: a free play's debit carries the grant's stake, whatever the feature it bought
  const free = bet.isFree === true;
  const stake = outcome.featurePurchased ? outcome.costMicro / GEMS_MATH.featureBuyCost : outcome.costMicro;
  const debited = free ? stake : outcome.costMicro;
  if (debited.toString() !== bet.amountMicro) {
    return [{ name: 'payout', ok: false, detail: { problem: 'the bet\'s amountMicro is not what the play debits', expected: debited.toString(), actual: bet.amountMicro } }];
  }
  // contract 8.4, D46, D42: the events' sum, rounded, a free bet's net of its stake
  const expected = gemsBookedPayout(outcome, sheet.payoutRounding, round.currency, free, stake).toString();
  const won = outcome.payoutMicro > 0n;
  const recorded = bet.payoutMicro ?? '0';
  const ok = recorded === expected && round.totalPayoutsMicro === expected;
  const checks: PackCheck[] = [
    {
      name: 'payout',
      ok,
      detail: {
        winTenths: outcome.winTenths,
        eventsMicro: outcome.payoutMicro.toString(),
        outcomeProven: proven,
        won,
        expected,
        ...(ok ? {} : { betPayoutMicro: recorded, totalPayoutsMicro: round.totalPayoutsMicro }),
      },
    },
  ];
  // the win calls carried that amount (contract 2.7)
  const wins = winCallsCheck(walletCalls, won, expected);
  if (wins) checks.push(wins);
  return checks;
}
