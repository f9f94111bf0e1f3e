import type { PackCheck, PackFacts } from '../pack-checks.js';
import type { Fraction, Rtp } from '../par-sheet.js';
import type { ServerMessages } from '../player-channel.js';
import type { ProofOutcome, ProofVerdict, RoundProofBody } from '../proof.js';
import type { RoundState as RoundStatus } from '../state-machine.js';
import type { BetLimits, ConfigSchema, StakeTerms } from './config.js';

export type { BetLimits, StakeTerms };

// A game as one module (D39): what the engine, settlement, proofs and the catalogue ask of a
// game instead of naming it. Everything here is pure: no database, no clock, no I/O.
//
// Config, Bet and Outcome are the module's own types. A value handed to a module's method
// comes from the same module: a config from its config.parse (or defaults, or roll.config), a
// bet from its bet.parse (or roll.bet), an outcome from its derive (or roll.outcome). The
// registry (index.ts) holds modules with those types erased (AnyGameModule); the methods are
// declared as methods so that a module of specific types is such a module, and the rule above
// is what keeps the erased calls right.

// D39: `shared` plays rounds on an engine's shared clock (D1: dice, crash); `instant` plays a
// round per play, without a clock (D41: the multi-event game)
export type GameKind = 'shared' | 'instant';

// the outcome of a bet, whatever the game: a won bet's payoutMicro is what the win call
// credits (D18: bigint micro-units); a lost bet pays 0 and makes no win call
// D41: and, for a play of a game with a jackpot, its contribution to the pool, which its win
// call carries (contract 2.7 jackpotContributionMicro)
export type Settlement = { won: boolean; payoutMicro: bigint; jackpotContributionMicro?: bigint };

// an exact return to player: the reduced fraction and its text as a par sheet writes it
// ("97/100", "0.970000"; D38)
export type ExactRtp = Fraction & Rtp;

// A bet's own parameters, besides its stake (dice: side; crash: autoCashOut), as the player
// sends them in place_bet.
export type BetSchema<Config, Bet> = {
  readonly keys: readonly BetKey[];
  // the parameters validated against the configuration; throws InvalidBetError (the player
  // channel's invalid_payload, contract 8.2)
  parse(input: Readonly<Record<string, unknown>>, config: Config): Bet;
  // the parameters as the player wrote them (the inverse of parse)
  write(bet: Bet): Record<string, string | null>;
  // the parameters as the bets table's columns keep them, from placement to the debit and the
  // settlement (a game fills its own and leaves the others null)
  columns(bet: Bet): BetColumns;
};

// The bets table's columns for a bet's own parameters: `side` (its enum, LOW or HIGH) and
// `auto_cash_out_cents` (a multiplier in cents, D40). Which of them a game uses is its module's
// business; the placement, the debit's ticket and the settlement carry both.
export type BetColumns = { side: 'LOW' | 'HIGH' | null; autoCashOutCents?: bigint | null; featureBuy?: boolean };

export type BetKey = {
  key: string;
  description: string;
  // a typical value: `rgs game simulate` bets it when its option is left out
  example: string;
};

// what a player did during a round, besides betting: crash's cash-out, `cashOutMs` into the
// flight (D40); nothing in dice
export type RoundPlay = { cashOutMs?: number };

// A round as the rounds table keeps it, with its bet's own columns, whatever its game: each
// game reads the columns it writes (dice: the side, the outcome and the weight snapshot, D2,
// D19; crash: the auto cash-out, the crash point and the cash-out, D40) and ignores the others.
// What the reads of a round (the proof, the dispute pack, the recall and the reconciliation
// views) hand to its game's module.
export type RoundRecord = {
  state: RoundStatus;
  // the bet's parameters as their columns hold them (bets.side, bets.auto_cash_out_cents)
  side: string | null;
  autoCashOutCents: bigint | null;
  outcomeSide: string | null;
  outcomeSum: number | null;
  diceValues: number[];
  lowWeight: bigint;
  highWeight: bigint;
  crashCents: bigint | null;
  cashOutCents: bigint | null;
  cashOutMs: number | null;
  // D41: a multi-event round's outcome as its module wrote it (rounds.outcome), and whether
  // its play bought the feature (bets.feature_buy)
  outcome: unknown;
  featureBuy: boolean;
};

// What the reads of a round show of its play beyond the fields every game has (D10, D33): a
// crash round's crash point and cash-out (D40); nothing for dice, whose views keep their shape.
// Multipliers with two decimals ("2.37"), the cash-out's time in ms of the flight.
export type PlayView = {
  crashMultiplier?: string | null;
  cashOutMultiplier?: string | null;
  cashOutMs?: number | null;
  // crash: whether the bet won, which follows from its cash-out (null until its result);
  // gems: whether the play paid anything
  won?: boolean | null;
  // D41, a multi-event round once its outcome is stored (contract 2.11 MULTI): whether the
  // feature was bought, the base spin (null for a bought feature), every event in play order
  // with what it paid, and the play's contribution to the jackpot; null before the outcome
  featurePurchased?: boolean | null;
  baseGame?: unknown;
  events?: { type: string; subOutcome?: unknown; payoutMicro: string }[] | null;
  jackpotContributionMicro?: string | null;
};

// A bet's own parameters as the reads show them (bet.write's form): dice's side, crash's auto
// cash-out ("2.00", or null without one, D40).
export type BetParams = { side?: string | null; autoCashOut?: string | null; featureBuy?: boolean };

// What a proof is made of (contract 2.11; D2, D19, D40): the round's seeds, revealed, its
// record, the configuration its cycle snapshotted (contract 8.6), and its bet as settled.
export type ProofInput<Config> = {
  roundId: string;
  gameCode: string;
  sessionId: string;
  currency: string;
  serverSeed: string;
  // the hash committed at session start (contract 2.3), as stored, not recomputed
  serverSeedHash: string;
  clientSeed: string;
  nonce: number;
  record: RoundRecord;
  config: Config;
  stakeMicro: bigint;
  // what the round paid (0 when lost; 0 when voided, its stake refunded; a free bet's net, D42)
  payoutMicro: bigint;
  // contract 2.6, D42: a free bet, whose payout is booked net of its stake (contract 8.4)
  isFree: boolean;
};

// A game's part of the reads of its rounds (D39: they ask the module, never name the game).
export type RoundReads<Config> = {
  // whether the record holds the round's outcome; a round voided before its outcome was
  // derived has none, and nothing to prove (contract 2.11)
  recorded(record: RoundRecord): boolean;
  // whether the bet won: null until the round's result, and for a voided round
  won(record: RoundRecord): boolean | null;
  // the bet's own parameters as the player wrote them (bet.write's form), from its columns
  betParams(record: RoundRecord): BetParams;
  // what the reads show of the play beyond the common fields; nothing the player may not know
  // yet (a crash point stays hidden while the round flies)
  view(record: RoundRecord): PlayView;
  // what a check of the round in a page needs beyond its seeds and the weight snapshot every
  // round keeps (D33): crash's edge, from its cycle's snapshot (D40); nothing for dice (D19's
  // weights are the round's)
  checkTerms(commissionMicro: bigint): { commissionMicro?: string };
  // contract 2.11: the proof of a finished round whose seed is revealed
  proof(input: ProofInput<Config>): RoundProofBody;
  // the check anyone runs on such a proof (`rgs verify`), without the service
  verifyProof(body: unknown): ProofVerdict<unknown>;
  // D32: the dispute pack's par-sheet.json for the round: the configuration it was played
  // under and the exact return to player (of each side for dice, of the bet for crash, its
  // payout counted as paid in the round's currency, D46)
  parSheet(config: Config, record: RoundRecord, stakeMicro: bigint, currency: string): unknown;
  // D32: the checks of a pack that recompute the game: par_sheet, proof, proof_matches_round,
  // payout, win_calls
  packChecks(facts: PackFacts): PackCheck[];
  // contract 8.4: the settlement of a round in RESULT as its record holds it (its bet's
  // parameters, its outcome, what its player did), under the cycle's configuration; what
  // settlement books for every game (rounds/settle.ts). Throws for a record without a result.
  settlement(stakeMicro: bigint, record: RoundRecord, config: Config): Settlement;
};

// The rounds table's outcome columns (RoundRecord's), as a game whose rounds are rolled writes
// its outcome into them: each game returns the columns it uses and leaves out the others,
// which keep what they hold (dice: the side, the sum and the dice, contract 2.13, D2).
export type OutcomeColumns = Partial<Pick<RoundRecord, 'outcomeSide' | 'outcomeSum' | 'diceValues' | 'crashCents'>>;

// What round_result tells of a round whatever its game (D4): its game adds its own fields.
export type RoundResultCommon = Pick<ServerMessages['round_result'], 'roundId' | 'cycleId' | 'nonce' | 'betId' | 'won' | 'payoutMicro'>;

// What the engine and settlement ask of a game whose rounds are rolled: every round of a cycle
// resolved at once when ROLLING ends (D1, contract 3.1), rather than flown (D40). Its outcome
// is derived by the module's `derive` and written into the round's record before its player
// is told; settlement prices it again from the record when it resumes a cycle in RESULT (P12),
// so everything `settle` and `result` read of an outcome is kept by `columns`.
export type RolledRounds<Config, Bet, Outcome> = {
  // the configuration the round is played under: its cycle's snapshot (contract 8.6), with
  // what the round's own record keeps of it (D19: dice's weights, the source of its derivation)
  config(config: Config, record: RoundRecord): Config;
  // the bet's parameters from their columns (bet.parse's form); throws for a corrupt row
  bet(record: RoundRecord): Bet;
  // the outcome `columns` wrote, read back; throws for a record without one
  outcome(record: RoundRecord): Outcome;
  // the outcome as the round's columns hold it
  columns(outcome: Outcome): OutcomeColumns;
  // D4: the round_result message of the round: the common fields with the game's own, in the
  // order of the game's message (dice's since D19: its side, sum and dice, and the weight
  // snapshot the player recomputes the side with, D2)
  result(common: RoundResultCommon, outcome: Outcome, record: RoundRecord): ServerMessages['round_result'];
};

export class InvalidBetError extends Error {
  override name = 'InvalidBetError';
}

// D39: `rgs game simulate`: N rounds through the module's own derivation and settlement
// arithmetic, without a wallet or a database (simulation.ts)
export type SimulationInput<Config, Bet> = {
  config: Config;
  bet: Bet;
  stakeMicro: bigint;
  rounds: number;
  serverSeed: string;
};

export type SimulationResult = {
  rounds: number;
  wins: number;
  totalStakeMicro: bigint;
  totalPayoutMicro: bigint;
  // the measured return, total payout / total stake, exact
  measured: ExactRtp;
  // its standard error (the sample standard deviation of a round's payout per unit staked, over
  // the square root of N) and the 99% confidence interval around it, by the central limit
  // theorem: statistics, so doubles
  standardError: number;
  confidence99: { low: number; high: number };
  exact: ExactRtp;
  exactInside: boolean;
};

interface GameModuleBase<Config extends StakeTerms, Bet, Outcome> {
  readonly gameCode: string;
  readonly kind: GameKind;
  readonly name: string;
  // contract 2.11: what a proof names, so that a verifier knows the derivation and the math
  readonly rngVersion: string;
  readonly mathVersion: string;
  // what the catalogue lists beside the bet itself (D39: crash's auto cash-out; D41: the
  // feature buy and the jackpot)
  readonly features: readonly string[];
  // D39: defaults and bounds, validated (D24)
  readonly config: ConfigSchema<Config>;
  readonly bet: BetSchema<Config, Bet>;
  // the outcome as the proof carries it (contract 2.11 shapes)
  proofOutcome(outcome: Outcome): ProofOutcome;
  // D39: the exact return to player of a bet with these parameters, counted over the
  // derivation's whole integer space, never simulated (dice's, the dispute pack's since D32,
  // is the weights' ratio, which its 32-bit draw implements to within 2^-32: see D39's
  // record). The payout per unit staked is the nominal one (no truncation to micro-units); a
  // game whose payout is capped per bet (crash's maxPayoutMicro, D40) applies the cap for the
  // stake given, and none when it is left out.
  // With `payoutUnitMicro` too (D46 payoutRounding minor_unit: the currency's minor unit),
  // each payout is counted as paid: in micro-units, rounded down to that unit.
  rtp(config: Config, bet: Bet, stakeMicro?: bigint, payoutUnitMicro?: bigint): ExactRtp;
  // the most a bet returns per unit staked, as a decimal string (the catalogue, D39)
  maxMultiplier(config: Config): string;
  // D39: `rgs game simulate`
  simulate(input: SimulationInput<Config, Bet>): SimulationResult;
  // the reads of a stored round: its proof, its dispute pack, its views (D39)
  readonly rounds: RoundReads<Config>;
}

// What a game played on the shared clock (D1) computes: its outcome from a round's h, and a
// bet's payout from the outcome.
interface SharedRounds<Config extends StakeTerms, Bet, Outcome, Result extends Settlement> {
  readonly kind: 'shared';
  // the outcome of a round from its `h` (D2's HMAC-SHA256 of the round's seeds and nonce), in
  // exact integer arithmetic: never a floating-point step between h and an outcome or amount
  derive(h: Buffer, config: Config): Outcome;
  // the settlement arithmetic: stake, the bet's parameters, the round's outcome and what the
  // player did during it (D40: a cash-out, in ms of the flight) → the payout
  settle(stakeMicro: bigint, bet: Bet, outcome: Outcome, config: Config, play?: RoundPlay): Result;
}

// D41: what the instant plays (game/plays) ask of a game whose rounds are instant: a round per
// play, its outcome derived at once from the session's seeds and nonce, with the jackpot's pool
// as an input (the derivation stays pure; the pool's row is the plays' business).
export type InstantPlay<Bet> = { serverSeed: string; clientSeed: string; nonce: number; stakeMicro: bigint; bet: Bet; jackpotPoolMicro: bigint };

export type InstantRounds<Config, Bet, Outcome> = {
  // D41: the least time between two plays of a session
  minRoundMs(config: Config): number;
  // what a play with this stake debits (a bought feature: featureBuyCost x the stake), and the
  // stake from it (the bets table keeps what was debited)
  costMicro(stakeMicro: bigint, bet: Bet, config: Config): bigint;
  stakeMicro(costMicro: bigint, bet: Bet, config: Config): bigint;
  // what buying the feature costs, in stakes; null where it may not be bought (the page shows it
  // before the tap, D41)
  featureBuyCost(config: Config): bigint | null;
  // D41: the part of what a play debits that feeds the jackpot's pool, and the pool's seed
  jackpotContributionMicro(costMicro: bigint, config: Config): bigint;
  jackpotSeedMicro(config: Config): bigint;
  // the play's outcome (D41's draws); what it pays (the events' sum) and what of that is the
  // jackpot's pool (0 when the jackpot was not hit)
  play(input: InstantPlay<Bet>, config: Config): Outcome;
  payoutMicro(outcome: Outcome): bigint;
  jackpotPaidMicro(outcome: Outcome): bigint;
  // the outcome as rounds.outcome keeps it (JSON, amounts as decimal strings: D18), and back;
  // `outcomeOf` throws for a malformed one (a corrupt row: an error, never a settlement)
  outcomeJson(outcome: Outcome): unknown;
  outcomeOf(json: unknown): Outcome;
  // D4, D41: the round_result of the play: the common fields with the game's own
  result(common: RoundResultCommon, outcome: Outcome): ServerMessages['round_result'];
};

export type GameModule<Config extends StakeTerms, Bet, Outcome, Result extends Settlement = Settlement> = GameModuleBase<Config, Bet, Outcome> &
  (
    | (SharedRounds<Config, Bet, Outcome, Result> & {
        // a shared game whose ROLLING is a flight (D40): each round ends by itself at its own
        // time (its crash, or its automatic cash-out) or at the player's cash-out, and the
        // phase ends when every round has (rounds/flight.ts)
        readonly flight: true;
      })
    | (SharedRounds<Config, Bet, Outcome, Result> & {
        // every round of the cycle is resolved at once when ROLLING ends (D1, dice), through
        // `roll` (rounds/settle.ts)
        readonly flight: false;
        readonly roll: RolledRounds<Config, Bet, Outcome>;
      })
    | {
        // D41: a round per play, resolved at once (game/plays)
        readonly kind: 'instant';
        readonly flight: false;
        readonly roll?: undefined;
        readonly instant: InstantRounds<Config, Bet, Outcome>;
      }
  );

// a module whose own types are erased, as the registry holds it (see the rule above)
export type AnyGameModule = GameModule<StakeTerms, unknown, unknown>;
