import { DICE_MATH_VERSION, DICE_RNG_VERSION, deriveDice, isSide, type Side } from './dice.js';
import { serverSeedHash } from './seeds.js';

// Round proofs (contract 2.11, DECISIONS D2, D19): what the proof endpoint answers, and the
// check anyone can run on it (`rgs verify`) without access to the service.

export type DiceProofInput = {
  roundId: string;
  gameCode: string;
  sessionId: string;
  serverSeed: string;
  // the hash committed at session start (contract 2.3), as stored, not recomputed
  serverSeedHash: string;
  clientSeed: string;
  nonce: number;
  lowWeight: bigint;
  highWeight: bigint;
  // the outcome as persisted on the round, not recomputed, so that a verifier checks it
  diceValues: number[];
  outcomeSum: number;
  outcomeSide: Side;
};

// The outcome shapes of contract 2.11, discriminated by type.
export type DiceProofOutcome = { type: 'DICE'; diceValues: number[]; outcomeSum: number; outcomeSide: Side };
// D40: JSON numbers; u = x / 2^52 exactly (x < 2^52, so the division by a power of two is exact
// in a double), crashMultiplier = crashCents / 100
export type CrashProofOutcome = { type: 'CRASH'; crashMultiplier: number; u: number };

// contract 2.11 MULTI, as the multi-event game (D41, games/gems-math.ts) plays it: the base spin
// as drawn (null for a bought feature), each event with its sub-outcome and payout, whether the
// feature was bought, and the play's contribution to the jackpot pool. Amounts are decimal
// strings (D18); stops, rows, lines, multipliers and tenths of the stake are counts, JSON
// numbers. Written out here rather than derived from gems-math.ts's types, which would close an
// import cycle (games/types.ts imports this file).
export type MultiSpin = { stops: number[]; grid: string[][] };
export type MultiLineWin = { line: number; symbol: string; tenths: number };
export type MultiProofEvent =
  | { type: 'LINE_WIN'; subOutcome: MultiLineWin; payoutMicro: string }
  | { type: 'FEATURE_TRIGGER'; subOutcome: { purchased: boolean; scatters: number | null; freeSpins: number; multiplier: number; tenths: number }; payoutMicro: string }
  | { type: 'FREE_SPIN'; subOutcome: MultiSpin & { spin: number; lineWins: MultiLineWin[]; multiplier: number; tenths: number }; payoutMicro: string }
  | { type: 'JACKPOT'; subOutcome: { poolMicro: string }; payoutMicro: string };
export type MultiProofOutcome = {
  type: 'MULTI';
  baseGame: MultiSpin | null;
  events: MultiProofEvent[];
  featurePurchased: boolean;
  jackpotContributionMicro: string;
};
export type ProofOutcome = DiceProofOutcome | CrashProofOutcome | MultiProofOutcome;

export const diceProofOutcome = ({ diceValues, outcomeSum, outcomeSide }: Omit<DiceProofOutcome, 'type'>): DiceProofOutcome => ({
  type: 'DICE',
  diceValues,
  outcomeSum,
  outcomeSide,
});

export type DiceProof = {
  roundId: string;
  gameCode: string;
  rngVersion: string;
  mathVersion: string;
  serverSeed: string;
  serverSeedHash: string;
  clientSeed: string;
  nonce: number;
  outcome: DiceProofOutcome;
  // D19: the round's weight snapshot, as decimal strings because they are bigints (D18:
  // no JSON number carries a bigint)
  lowWeight: string;
  highWeight: string;
  sessionId: string;
};

// A crash round's proof (contract 2.11 with the CRASH outcome, D40). Beyond 2.11's fields, as
// D19 adds dice's weights, it carries what a verifier needs to recompute the round without the
// service: the configuration its cycle snapshotted that the crash point and the settlement
// depend on (the edge, maxMultiplier, maxPayoutMicro, the payout's rounding in the round's
// currency, D46), and the bet: its stake, its auto cash-out, its cash-out (the multiplier and
// the ms of the flight it was decided at) and what it paid. Bigints and multipliers as decimal
// strings (D18, D40: "2.00"); `voided` when the round was voided, its stake refunded.
export type CrashProofBet = {
  amountMicro: string;
  autoCashOut: string | null;
  cashOutMultiplier: string | null;
  cashOutMs: number | null;
  payoutMicro: string;
  voided: boolean;
  // D42: present, and true, for a free bet (contract 2.6): its payoutMicro is the net booked,
  // max(payout - stake, 0) (contract 8.4); absent for a paid bet
  isFree?: true;
};

export type CrashProof = {
  roundId: string;
  gameCode: string;
  rngVersion: string;
  mathVersion: string;
  serverSeed: string;
  serverSeedHash: string;
  clientSeed: string;
  nonce: number;
  outcome: CrashProofOutcome;
  commissionMicro: string;
  maxMultiplier: string;
  maxPayoutMicro: string;
  payoutRounding: 'exact' | 'minor_unit';
  currency: string;
  bet: CrashProofBet;
  sessionId: string;
};

// A Gem Vault round's proof (contract 2.11 with the MULTI outcome, D41; games/gems-proof.ts
// builds and verifies it). As crash's, beyond 2.11's fields it carries what re-derives and
// books the round without the service: the stake the pays are tenths of, the jackpot pool the
// play was given (null when the jackpot missed: the pool then enters nothing), what the round
// booked, its rounding in its currency (D46), and whether it was a free bet (D42: booked net).
export type GemsProof = {
  roundId: string;
  gameCode: string;
  rngVersion: string;
  mathVersion: string;
  serverSeed: string;
  serverSeedHash: string;
  clientSeed: string;
  nonce: number;
  outcome: MultiProofOutcome;
  stakeMicro: string;
  jackpotPoolMicro: string | null;
  payoutMicro: string;
  payoutRounding: 'exact' | 'minor_unit';
  // D41: the jackpot's contribution per 1,000,000 micro-units debited, from the configuration
  jackpotRateMicro: string;
  currency: string;
  isFree: boolean;
  sessionId: string;
};

// the proof of a round, whatever its game (GET /v1/rounds/{roundId}/proof)
export type RoundProofBody = DiceProof | CrashProof | GemsProof;

export function buildDiceProof(input: DiceProofInput): DiceProof {
  return {
    roundId: input.roundId,
    gameCode: input.gameCode,
    rngVersion: DICE_RNG_VERSION,
    mathVersion: DICE_MATH_VERSION,
    serverSeed: input.serverSeed,
    serverSeedHash: input.serverSeedHash,
    clientSeed: input.clientSeed,
    nonce: input.nonce,
    outcome: diceProofOutcome(input),
    lowWeight: input.lowWeight.toString(),
    highWeight: input.highWeight.toString(),
    sessionId: input.sessionId,
  };
}

export type ProofCheck = { name: string; ok: boolean; expected?: unknown; actual?: unknown };

// What the verifier recomputed; a and b are below 2^32, so numbers hold them exactly.
export type DiceDerivation = {
  serverSeedHash: string;
  hmacHex: string;
  a: number;
  b: number;
  side: Side;
  face: number;
  diceValues: number[];
  outcomeSum: number;
};

// `derived`: what the verifier recomputed, in its game's terms (dice's DiceDerivation)
export type ProofVerdict<Derived = DiceDerivation> = { valid: boolean; checks: ProofCheck[]; derived?: Derived };

const WEIGHT = /^[0-9]{1,20}$/;
const OUTCOME_TYPES = ['DICE', 'CRASH', 'MULTI'];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

// The fields every 2.11 body has, with their types; one problem per bad field.
export function commonShapeProblems(body: unknown): string[] {
  if (!isRecord(body)) return ['the proof must be a JSON object'];
  const problems: string[] = [];
  for (const field of ['roundId', 'gameCode', 'rngVersion', 'serverSeed', 'serverSeedHash', 'clientSeed']) {
    if (!isNonEmptyString(body[field])) problems.push(`${field} must be a non-empty string`);
  }
  if (body.mathVersion !== undefined && typeof body.mathVersion !== 'string') problems.push('mathVersion must be a string');
  if (!Number.isSafeInteger(body.nonce) || (body.nonce as number) < 0) problems.push('nonce must be an integer, minimum 0');
  return problems;
}

// The fields the 2.11 body and, for DICE, D19 require, with their types; one problem per
// bad field.
function shapeProblems(body: unknown): string[] {
  if (!isRecord(body)) return ['the proof must be a JSON object'];
  const problems = commonShapeProblems(body);
  const outcome = body.outcome;
  if (!isRecord(outcome)) return [...problems, 'outcome must be an object'];
  if (!OUTCOME_TYPES.includes(outcome.type as string)) return [...problems, `outcome.type must be one of ${OUTCOME_TYPES.join(', ')}`];
  if (outcome.type !== 'DICE') return problems;
  const { diceValues, outcomeSum, outcomeSide } = outcome;
  if (!Array.isArray(diceValues) || diceValues.length === 0 || !diceValues.every((v) => Number.isInteger(v) && v >= 1 && v <= 6)) {
    problems.push('outcome.diceValues must be a non-empty array of integers 1 to 6');
  }
  if (!Number.isInteger(outcomeSum)) problems.push('outcome.outcomeSum must be an integer');
  if (!isSide(outcomeSide)) problems.push('outcome.outcomeSide must be LOW or HIGH');
  for (const field of ['lowWeight', 'highWeight']) {
    if (typeof body[field] !== 'string' || !WEIGHT.test(body[field])) problems.push(`${field} must be a non-negative integer as a decimal string (D19)`);
  }
  if (problems.length === 0 && BigInt(body.lowWeight as string) + BigInt(body.highWeight as string) === 0n) {
    problems.push('lowWeight and highWeight must not both be zero (D2)');
  }
  return problems;
}

// The checks after the shape's, every game's (contract 2.11, D2): the versions the proof names
// and the committed hash of its seed, the hash of the seed's UTF-8 text in lower-case hex
type Named = { rngVersion: string; mathVersion?: string; serverSeed: string; serverSeedHash: string };
function versionAndSeedChecks(proof: Named, rngVersion: string, mathVersion: string): { checks: ProofCheck[]; hash: string } {
  const checks: ProofCheck[] = [{ name: 'rng_version', ok: proof.rngVersion === rngVersion, expected: rngVersion, actual: proof.rngVersion }];
  if (proof.mathVersion !== undefined) checks.push({ name: 'math_version', ok: proof.mathVersion === mathVersion, expected: mathVersion, actual: proof.mathVersion });
  const hash = serverSeedHash(proof.serverSeed);
  checks.push({ name: 'server_seed_hash', ok: hash === proof.serverSeedHash.toLowerCase(), expected: hash, actual: proof.serverSeedHash });
  return { checks, hash };
}

// How a game's proof opens (D39: crash's, the multi-event game's): the shape, the common fields
// and, for an outcome of the game's type, the game's own; the outcome's type; then the versions
// and the seed's hash. A verdict when the shape or the type fails; otherwise the proof, the
// checks so far and the seed's hash, for the game's own checks to follow.
export type ProofGame = { type: string; rngVersion: string; mathVersion: string; shapeProblems(body: Record<string, unknown>): string[] };

export function openProof<P extends Named>(body: unknown, game: ProofGame): { verdict: ProofVerdict<never> } | { proof: P; checks: ProofCheck[]; hash: string } {
  const common = commonShapeProblems(body);
  if (!isRecord(body)) return { verdict: { valid: false, checks: [{ name: 'shape', ok: false, actual: common }] } };
  const outcome = body.outcome;
  const problems = !isRecord(outcome) ? [...common, 'outcome must be an object'] : outcome.type === game.type ? [...common, ...game.shapeProblems(body)] : common;
  if (problems.length) return { verdict: { valid: false, checks: [{ name: 'shape', ok: false, actual: problems }] } };
  const checks: ProofCheck[] = [{ name: 'shape', ok: true }];
  const type = (outcome as Record<string, unknown>).type;
  if (type !== game.type) {
    checks.push({ name: 'outcome_type', ok: false, expected: game.type, actual: String(type) });
    return { verdict: { valid: false, checks } };
  }
  checks.push({ name: 'outcome_type', ok: true, expected: game.type, actual: game.type });
  const proof = body as unknown as P;
  const named = versionAndSeedChecks(proof, game.rngVersion, game.mathVersion);
  return { proof, checks: [...checks, ...named.checks], hash: named.hash };
}

type DiceProofBody = Omit<DiceProof, 'mathVersion' | 'sessionId'> & { mathVersion?: string };

const sameValues = (x: number[], y: number[]) => x.length === y.length && x.every((v, i) => v === y[i]);

// contract 2.11 verification rule: SHA256(serverSeed) equals serverSeedHash, and the HMAC
// reproduces the outcome (D2 derivation).
export function verifyDiceProof(body: unknown): ProofVerdict {
  const problems = shapeProblems(body);
  if (problems.length) return { valid: false, checks: [{ name: 'shape', ok: false, actual: problems }] };
  const checks: ProofCheck[] = [{ name: 'shape', ok: true }];
  const record = body as Record<string, unknown> & { outcome: { type: string } };
  if (record.outcome.type !== 'DICE') {
    checks.push({
      name: 'outcome_type',
      ok: false,
      expected: 'DICE',
      actual: `${record.outcome.type}: its outcome derivation is not defined in this version (contract 2.11: not shown)`,
    });
    return { valid: false, checks };
  }
  const proof = body as DiceProofBody;
  checks.push({ name: 'outcome_type', ok: true, expected: 'DICE', actual: 'DICE' });
  const named = versionAndSeedChecks(proof, DICE_RNG_VERSION, DICE_MATH_VERSION);
  checks.push(...named.checks);
  const { hash } = named;

  const dice = deriveDice({
    serverSeed: proof.serverSeed,
    clientSeed: proof.clientSeed,
    nonce: proof.nonce,
    lowWeight: BigInt(proof.lowWeight),
    highWeight: BigInt(proof.highWeight),
  });
  const { diceValues, outcomeSum, outcomeSide } = proof.outcome;
  checks.push({ name: 'dice_values', ok: sameValues(dice.diceValues, diceValues), expected: dice.diceValues, actual: diceValues });
  checks.push({ name: 'outcome_sum', ok: dice.outcomeSum === outcomeSum, expected: dice.outcomeSum, actual: outcomeSum });
  checks.push({ name: 'outcome_side', ok: dice.side === outcomeSide, expected: dice.side, actual: outcomeSide });
  return {
    valid: checks.every((check) => check.ok),
    checks,
    derived: {
      serverSeedHash: hash,
      hmacHex: dice.hmacHex,
      a: Number(dice.a),
      b: Number(dice.b),
      side: dice.side,
      face: dice.face,
      diceValues: dice.diceValues,
      outcomeSum: dice.outcomeSum,
    },
  };
}
