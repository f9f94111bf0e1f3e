import { DICE_MATH_VERSION, DICE_RNG_VERSION, diceFromHash, isSide, type DiceOutcome, type Side } from '../dice.js';
import { dicePackChecks } from '../dice-pack.js';
import { decimalText, parSheet, reducedFraction, rtpText, sideRtp } from '../par-sheet.js';
import { MULTIPLIER_SCALE, formatMultiplier, multiplierScaledOf, payout } from '../payout.js';
import { buildDiceProof, diceProofOutcome, verifyDiceProof } from '../proof.js';
import { betLimitsCheck, configSchema, integerField, msField, stakeStepFields, type ConfigField, type PayoutRounding } from './config.js';
import { simulate } from './simulation.js';
import { InvalidBetError, type GameModule, type SimulationResult, type RoundRecord, type Settlement } from './types.js';

// Dice as a game module (D39), the first one: a wrapper of the derivation (dice.ts, D2), the
// par sheet (par-sheet.ts) and the payout arithmetic (payout.ts, contract 8.4, D18), which
// stay where they are and keep their callers.

// contract 2.12 and D9: the values and their names as the game configuration stores them
export type DiceConfig = {
  bettingWindowMs: number;
  rollingWindowMs: number;
  cooldownMs: number;
  minBetMicro: bigint;
  maxBetMicro: bigint;
  commissionMicro: bigint;
  payoutMultiplierScaled: bigint;
  lowWeight: bigint;
  highWeight: bigint;
  // D46
  stakeStepMicro: bigint;
  payoutRounding: PayoutRounding;
};

export type DiceBet = { side: Side };

// What a dice round keeps of its outcome (contract 2.13: outcomeSide, outcomeSum, and the
// dice): all that its settlement, its proof's outcome and round_result read. The derivation's
// own values (the HMAC, a and b, D2) are recomputed by whoever checks it (proof.ts).
export type DiceRoll = Pick<DiceOutcome, 'side' | 'outcomeSum' | 'diceValues'>;

// contract 2.12: the commission is commissionMicro / 100000
const COMMISSION_SCALE = 100000n;

// D18: a payout multiplier is a decimal with at most 5 fractional digits, held scaled by
// 100000; payout.ts reads and writes it (at most 999999.99999, above 0)
const payoutMultiplierField: ConfigField<bigint> = {
  form: 'a decimal string with at most 5 decimals, above 0',
  read: (raw) => (typeof raw === 'string' ? multiplierScaledOf(raw) : undefined),
  write: formatMultiplier,
  min: 1n,
  max: 1000000n * MULTIPLIER_SCALE - 1n,
};

// The bounds are those the game configuration has always enforced (windows positive, the
// cooldown may be 0, a positive min bet, the commission 0% to 100%, weights not negative and
// not both zero: D2, D9), and the columns' ranges (integer ms, BIGINT amounts).
const config = configSchema<DiceConfig>(
  'dice',
  {
    bettingWindowMs: { ...msField(1), default: 15000 },
    rollingWindowMs: { ...msField(1), default: 4000 },
    cooldownMs: { ...msField(0), default: 3000 },
    minBetMicro: { ...integerField(1n), default: 10000n },
    maxBetMicro: { ...integerField(1n), default: 100000000n },
    commissionMicro: { ...integerField(0n, COMMISSION_SCALE), default: 3000n },
    payoutMultiplierScaled: { ...payoutMultiplierField, key: 'payoutMultiplier', default: 200000n },
    lowWeight: { ...integerField(0n), default: 1n },
    highWeight: { ...integerField(0n), default: 1n },
    ...stakeStepFields,
  },
  [
    betLimitsCheck,
    (c) => (c.lowWeight + c.highWeight === 0n ? 'lowWeight and highWeight must not both be 0 (D2)' : undefined),
  ],
);

// the round's outcome as stored (contract 2.13: outcomeSide, outcomeSum), once derived
const recorded = (record: RoundRecord): boolean => record.outcomeSide !== null && record.outcomeSum !== null;

export const diceModule = {
  gameCode: 'dice' as const,
  kind: 'shared',
  name: 'Dice',
  rngVersion: DICE_RNG_VERSION,
  mathVersion: DICE_MATH_VERSION,
  features: [],
  flight: false,
  config,
  bet: {
    keys: [{ key: 'side', description: 'the side bet on: LOW (faces 1-3) or HIGH (faces 4-6)', example: 'LOW' }],
    parse(input) {
      const unknown = Object.keys(input).filter((key) => key !== 'side');
      if (unknown.length) throw new InvalidBetError(`a dice bet has no ${unknown.join(', ')}: its parameter is side`);
      if (!isSide(input.side)) throw new InvalidBetError(`side must be LOW or HIGH: got ${JSON.stringify(input.side)}`);
      return { side: input.side };
    },
    write: (bet) => ({ side: bet.side }),
    columns: (bet) => ({ side: bet.side, autoCashOutCents: null }),
  },
  derive: (h, c) => diceFromHash(h, c.lowWeight, c.highWeight),
  proofOutcome: (outcome) => diceProofOutcome({ diceValues: outcome.diceValues, outcomeSum: outcome.outcomeSum, outcomeSide: outcome.side }),
  // the payout per unit staked does not depend on the stake (no cap): without a payout unit the
  // stake is unused. With one (D46), the probability (the weights' ratio, as above) times the
  // net payout of this stake as paid, rounded down to the unit, per unit staked.
  rtp(c: DiceConfig, bet: DiceBet, stakeMicro?: bigint, payoutUnitMicro?: bigint) {
    if (stakeMicro === undefined || payoutUnitMicro === undefined) {
      const fraction = sideRtp(c, bet.side);
      return { ...fraction, ...rtpText(fraction) };
    }
    const net = payout({ stakeMicro, multiplierScaled: c.payoutMultiplierScaled, commissionMicro: c.commissionMicro }).netMicro;
    const paid = net - (net % payoutUnitMicro);
    const weight = bet.side === 'LOW' ? c.lowWeight : c.highWeight;
    const fraction = reducedFraction(weight * paid, (c.lowWeight + c.highWeight) * stakeMicro);
    return { ...fraction, ...rtpText(fraction) };
  },
  // a win credits gross less commission (contract 8.4): the multiplier net of commission,
  // m * (100000 - c) / 100000, exact in 10 decimals (payout() truncates it per bet, to within
  // a micro-unit)
  maxMultiplier(c) {
    const text = decimalText({ numerator: c.payoutMultiplierScaled * (COMMISSION_SCALE - c.commissionMicro), denominator: MULTIPLIER_SCALE * COMMISSION_SCALE }, 10);
    return text.replace(/0+$/, '').replace(/\.$/, '');
  },
  simulate: (input): SimulationResult => simulate(diceModule, input),
  settle(stakeMicro, bet, outcome, c) {
    const won = bet.side === outcome.side;
    const payoutMicro = won ? payout({ stakeMicro, multiplierScaled: c.payoutMultiplierScaled, commissionMicro: c.commissionMicro }).netMicro : 0n;
    return { won, payoutMicro };
  },
  // the reads of a stored round (D39): they show what they always have (no field of their own,
  // the side and outcome are columns every read has), the proof of contract 2.11 with D19's
  // weights, and the dispute pack's par sheet of D32 (each side's return) and its checks
  rounds: {
    recorded,
    won: (record) => (record.state !== 'VOIDED' && recorded(record) ? record.outcomeSide === record.side : null),
    betParams: (record) => ({ side: record.side }),
    view: () => ({}),
    checkTerms: () => ({}),
    proof(input) {
      const { outcomeSide, outcomeSum } = input.record;
      // a stored side other than LOW or HIGH is a corrupt row: an error, never a proof
      if (!isSide(outcomeSide) || outcomeSum === null) throw new Error(`round ${input.roundId} has an unknown outcome side`);
      return buildDiceProof({
        roundId: input.roundId,
        gameCode: input.gameCode,
        sessionId: input.sessionId,
        serverSeed: input.serverSeed,
        serverSeedHash: input.serverSeedHash,
        clientSeed: input.clientSeed,
        nonce: input.nonce,
        lowWeight: input.record.lowWeight,
        highWeight: input.record.highWeight,
        diceValues: input.record.diceValues,
        outcomeSum,
        outcomeSide,
      });
    },
    verifyProof: verifyDiceProof,
    // D46: with how the cycle books a win, in the round's currency, so that a pack's payout
    // check books it the same way
    parSheet: (c, _record, _stakeMicro, currency) => ({
      ...parSheet({ gameCode: 'dice', lowWeight: c.lowWeight, highWeight: c.highWeight, payoutMultiplierScaled: c.payoutMultiplierScaled, commissionMicro: c.commissionMicro }),
      payoutRounding: c.payoutRounding,
      currency,
    }),
    packChecks: dicePackChecks,
    settlement: (stakeMicro, record, c): Settlement =>
      diceModule.settle(stakeMicro, diceModule.roll.bet(record), diceModule.roll.outcome(record), diceModule.roll.config(c, record)),
  },
  // D1: a dice cycle's rounds are rolled when ROLLING ends. A round is derived with its own
  // weight snapshot (D19; its cycle's, contract 8.6), which round_result also carries so that
  // the player recomputes the side (D2); its side, sum and dice are its outcome's columns.
  roll: {
    config: (c, record) => ({ ...c, lowWeight: record.lowWeight, highWeight: record.highWeight }),
    bet(record) {
      // a stored side other than LOW or HIGH is a corrupt row: an error, never a settlement
      if (!isSide(record.side)) throw new Error(`a dice bet's side must be LOW or HIGH: got ${record.side}`);
      return { side: record.side };
    },
    outcome(record) {
      const { outcomeSide, outcomeSum, diceValues } = record;
      if (!isSide(outcomeSide) || outcomeSum === null) throw new Error(`a dice round's outcome must have a side and a sum: got ${outcomeSide}, ${outcomeSum}`);
      return { side: outcomeSide, outcomeSum, diceValues };
    },
    columns: (outcome) => ({ outcomeSide: outcome.side, outcomeSum: outcome.outcomeSum, diceValues: outcome.diceValues }),
    result: ({ roundId, cycleId, nonce, betId, won, payoutMicro }, outcome, record) => ({
      roundId,
      cycleId,
      nonce,
      side: outcome.side,
      sum: outcome.outcomeSum,
      diceValues: outcome.diceValues,
      betId,
      won,
      payoutMicro,
      lowWeight: record.lowWeight.toString(),
      highWeight: record.highWeight.toString(),
    }),
  },
} as const satisfies GameModule<DiceConfig, DiceBet, DiceRoll>;
