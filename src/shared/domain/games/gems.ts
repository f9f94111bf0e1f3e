import { reducedFraction, rtpText } from '../par-sheet.js';
import { betLimitsCheck, choiceField, configSchema, integerField, msField, stakeStepFields, type PayoutRounding } from './config.js';
import {
  GEMS_MATH,
  GEMS_MATH_VERSION,
  GEMS_RNG_VERSION,
  RATE_SCALE,
  TENTHS,
  deriveGems,
  gemsDistributions,
  gemsRtp,
  simulateGems,
  type GemsBet,
  type GemsOutcome,
} from './gems-math.js';
import { buildGemsProof, gemsOutcomeJson, gemsOutcomeOf, gemsPackChecks, gemsPackParSheet, gemsProofOutcome, verifyGemsProof } from './gems-proof.js';
import { InvalidBetError, type GameModule, type RoundRecord, type Settlement } from './types.js';

// Gem Vault as a game module (D39, D41): the instant kind. Its math (reels, pays, the feature,
// the jackpot's draw, the exact par sheet) is gems-math.ts; its proof, the stored form of its
// outcome and its dispute pack's checks are gems-proof.ts; this file is its configuration, its
// bets and what the instant plays (game/plays) and the reads of a round ask of it.

export type GemsConfig = {
  minBetMicro: bigint;
  maxBetMicro: bigint;
  // D41: the least time between two plays of a session
  minRoundMs: number;
  // D41: whether a play may buy the feature, for featureBuyCost x the stake
  featureBuy: 'on' | 'off';
  // D41: the jackpot's pool restarts at jackpotSeedMicro after a hit, and takes
  // jackpotRateMicro per 1,000,000 micro-units of every debit (0.5% by default)
  jackpotSeedMicro: bigint;
  jackpotRateMicro: bigint;
  // D46
  stakeStepMicro: bigint;
  payoutRounding: PayoutRounding;
};

export type { GemsBet, GemsOutcome };


const config = configSchema<GemsConfig>(
  'gems',
  {
    minBetMicro: { ...integerField(1n), default: 10000n },
    // the most a play debits is featureBuyCost x maxBetMicro, which the BIGINT columns hold
    maxBetMicro: { ...integerField(1n, 10n ** 15n), default: 10000000n },
    minRoundMs: { ...msField(0, 3_600_000), default: 1000 },
    featureBuy: { ...choiceField(['on', 'off'] as const), default: 'on' },
    jackpotSeedMicro: { ...integerField(0n, 10n ** 15n), default: 100000000n },
    jackpotRateMicro: { ...integerField(0n, 100000n), default: 5000n },
    ...stakeStepFields,
  },
  [betLimitsCheck],
);

const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = { true: true, false: false };

// The return of a play counted as paid (D46 minor_unit): over the play's exact distribution of
// capped wins in tenths (gems-math.ts), each win paid floor(stake * U / 10) rounded down to the
// unit, per unit debited.
function paidRtp(featureBuy: boolean, stakeMicro: bigint, unitMicro: bigint) {
  const distributions = gemsDistributions(GEMS_MATH);
  const play = featureBuy ? distributions.boughtPlay : distributions.basePlay;
  let sum = 0n;
  for (const [tenths, weight] of play.weights) {
    const paid = (stakeMicro * BigInt(tenths)) / TENTHS;
    sum += (paid - (paid % unitMicro)) * weight;
  }
  const cost = featureBuy ? stakeMicro * GEMS_MATH.featureBuyCost : stakeMicro;
  const fraction = reducedFraction(sum, play.total * cost);
  return { ...fraction, ...rtpText(fraction) };
}

// the stored outcome of a round, read for the reads of a round (a round without one has none)
const storedOutcome = (record: RoundRecord): GemsOutcome | null => (record.outcome === null || record.outcome === undefined ? null : gemsOutcomeOf(record.outcome));

export const gemsModule = {
  gameCode: 'gems' as const,
  kind: 'instant',
  name: 'Gem Vault',
  rngVersion: GEMS_RNG_VERSION,
  mathVersion: GEMS_MATH_VERSION,
  features: ['free_spins', 'feature_buy', 'jackpot'],
  flight: false,
  config,
  bet: {
    keys: [{ key: 'featureBuy', description: `whether the play buys the feature, for ${GEMS_MATH.featureBuyCost} x the stake: true or false`, example: 'false' }],
    parse(input, c) {
      const unknown = Object.keys(input).filter((key) => key !== 'featureBuy');
      if (unknown.length) throw new InvalidBetError(`a gems play has no ${unknown.join(', ')}: its parameter is featureBuy`);
      const raw = input.featureBuy ?? false;
      const featureBuy = typeof raw === 'boolean' ? raw : typeof raw === 'string' ? BOOLEAN_TEXT[raw] : undefined;
      if (featureBuy === undefined) throw new InvalidBetError(`featureBuy must be true or false: got ${JSON.stringify(raw)}`);
      if (featureBuy && c.featureBuy === 'off') throw new InvalidBetError('the feature may not be bought here (featureBuy is off)');
      return { featureBuy };
    },
    write: (bet) => ({ featureBuy: String(bet.featureBuy) }),
    columns: (bet) => ({ side: null, autoCashOutCents: null, featureBuy: bet.featureBuy }),
  },
  proofOutcome: gemsProofOutcome,
  // D39: per unit debited, the jackpot apart (D41: its contribution is outside the game's return)
  rtp: (_c, bet, stakeMicro, payoutUnitMicro) =>
    stakeMicro === undefined || payoutUnitMicro === undefined ? gemsRtp(GEMS_MATH, bet.featureBuy) : paidRtp(bet.featureBuy, stakeMicro, payoutUnitMicro),
  maxMultiplier: () => (BigInt(GEMS_MATH.capTenths) / TENTHS).toString(),
  simulate: ({ bet, stakeMicro, rounds, serverSeed }) => simulateGems({ config: GEMS_MATH, bet, stakeMicro, rounds, serverSeed }),
  instant: {
    minRoundMs: (c) => c.minRoundMs,
    costMicro: (stakeMicro, bet) => (bet.featureBuy ? stakeMicro * GEMS_MATH.featureBuyCost : stakeMicro),
    stakeMicro: (costMicro, bet) => (bet.featureBuy ? costMicro / GEMS_MATH.featureBuyCost : costMicro),
    featureBuyCost: (c) => (c.featureBuy === 'on' ? GEMS_MATH.featureBuyCost : null),
    jackpotContributionMicro: (costMicro, c) => (costMicro * c.jackpotRateMicro) / RATE_SCALE,
    jackpotSeedMicro: (c) => c.jackpotSeedMicro,
    // the contribution is the configuration's (D41 jackpotRateMicro), not the math's default
    play: ({ serverSeed, clientSeed, nonce, stakeMicro, bet, jackpotPoolMicro }, c) =>
      deriveGems({ serverSeed, clientSeed, nonce, stakeMicro, featureBuy: bet.featureBuy, jackpotPoolMicro, jackpotRateMicro: c.jackpotRateMicro }),
    payoutMicro: (outcome) => outcome.payoutMicro,
    jackpotPaidMicro: (outcome) => outcome.events.reduce((sum, event) => (event.type === 'JACKPOT' ? sum + event.payoutMicro : sum), 0n),
    outcomeJson: gemsOutcomeJson,
    outcomeOf: gemsOutcomeOf,
    result: ({ roundId, cycleId, nonce, betId, won, payoutMicro }, outcome) => {
      const json = gemsOutcomeJson(outcome);
      return {
        roundId,
        cycleId,
        nonce,
        betId,
        won,
        payoutMicro,
        featurePurchased: outcome.featurePurchased,
        costMicro: outcome.costMicro.toString(),
        baseGame: json.baseGame,
        events: json.events,
        jackpotContributionMicro: outcome.jackpotContributionMicro.toString(),
      };
    },
  },
  rounds: {
    recorded: (record) => record.outcome !== null && record.outcome !== undefined,
    won: (record) => {
      if (record.state === 'VOIDED') return null;
      const outcome = storedOutcome(record);
      return outcome === null ? null : outcome.payoutMicro > 0n;
    },
    betParams: (record) => ({ featureBuy: record.featureBuy }),
    // the play as the proof shows it (contract 2.11 MULTI), once its outcome is stored
    view: (record) => {
      const outcome = record.state === 'VOIDED' ? null : storedOutcome(record);
      if (outcome === null) return { won: null, featurePurchased: null, baseGame: null, events: null, jackpotContributionMicro: null };
      const shown = gemsProofOutcome(outcome);
      return {
        won: outcome.payoutMicro > 0n,
        featurePurchased: shown.featurePurchased,
        baseGame: shown.baseGame,
        events: shown.events,
        jackpotContributionMicro: shown.jackpotContributionMicro,
      };
    },
    checkTerms: () => ({}),
    proof: (input) => {
      const outcome = storedOutcome(input.record);
      if (outcome === null) throw new Error(`round ${input.roundId} has no outcome`);
      return buildGemsProof({
        roundId: input.roundId,
        gameCode: input.gameCode,
        sessionId: input.sessionId,
        serverSeed: input.serverSeed,
        serverSeedHash: input.serverSeedHash,
        clientSeed: input.clientSeed,
        nonce: input.nonce,
        currency: input.currency,
        // the bet keeps what it debited: a bought feature's price, a free play's stake (D42)
        stakeMicro: input.record.featureBuy && !input.isFree ? input.stakeMicro / GEMS_MATH.featureBuyCost : input.stakeMicro,
        payoutMicro: input.payoutMicro,
        payoutRounding: input.config.payoutRounding,
        jackpotRateMicro: input.config.jackpotRateMicro,
        isFree: input.isFree,
        outcome,
      });
    },
    verifyProof: verifyGemsProof,
    parSheet: (c, _record, _stakeMicro, currency) => gemsPackParSheet({ config: config.write(c), payoutRounding: c.payoutRounding, currency }),
    packChecks: gemsPackChecks,
    // the outcome as stored: its events' sum, the jackpot included (D41)
    settlement: (_stakeMicro, record): Settlement => {
      const outcome = storedOutcome(record);
      if (outcome === null) throw new Error('a gems round in RESULT has its outcome');
      return { won: outcome.payoutMicro > 0n, payoutMicro: outcome.payoutMicro, jackpotContributionMicro: outcome.jackpotContributionMicro };
    },
  },
} as const satisfies GameModule<GemsConfig, GemsBet, GemsOutcome>;
