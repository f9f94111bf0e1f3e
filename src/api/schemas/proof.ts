import { DICE_MATH_VERSION, DICE_RNG_VERSION } from '../../shared/domain/dice.js';
import { CRASH_MATH_VERSION, CRASH_RNG_VERSION } from '../../shared/domain/games/crash.js';
import { PAYOUT_ROUNDINGS } from '../../shared/domain/games/config.js';
import type { CrashProof, DiceProof } from '../../shared/domain/proof.js';
import { microAmount, objectSchema, orNull, sha256Hex, uuid } from './common.js';

// The proof of a round (contract 2.11): of a dice round with the DICE outcome (D2, D19), of a
// crash round with the CRASH outcome and the terms and bet that settle it again (D40).
const weight = { type: 'string', pattern: '^[0-9]{1,20}$', description: 'the round\'s weight snapshot, a decimal integer (D19)' };
const serverSeed = { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'the revealed seed: 32 random bytes as 64 lower-case hex characters (D2)' };
const committedHash = { ...sha256Hex, description: 'sha256_hex(utf8(serverSeed)); equals the hash returned at session creation (contract 2.11, D2)' };
// D40: a multiplier with two decimals ("2.37")
const multiplier = { type: 'string', pattern: '^[0-9]{1,7}\\.[0-9]{2}$' };

// what every game's proof carries (contract 2.11): the round, the versions and its seeds
const proofBase = (rngVersion: string, mathVersion: string) => ({
  roundId: uuid,
  gameCode: { type: 'string' },
  rngVersion: { type: 'string', description: rngVersion },
  mathVersion: { type: 'string', description: mathVersion },
  serverSeed,
  serverSeedHash: committedHash,
  clientSeed: { type: 'string' },
  nonce: { type: 'integer', minimum: 0 },
});

export const diceProofSchema = objectSchema<DiceProof>({
  ...proofBase(`"${DICE_RNG_VERSION}" for the dice derivation of D2`, `"${DICE_MATH_VERSION}" (D2)`),
  outcome: objectSchema<DiceProof['outcome']>({
    type: { const: 'DICE' },
    diceValues: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 6 }, minItems: 1 },
    outcomeSum: { type: 'integer' },
    outcomeSide: { enum: ['LOW', 'HIGH'] },
  }),
  lowWeight: weight,
  highWeight: weight,
  sessionId: uuid,
});

export const crashProofSchema = objectSchema<CrashProof>({
  ...proofBase(`"${CRASH_RNG_VERSION}" for the crash derivation of D40`, `"${CRASH_MATH_VERSION}" (D40)`),
  outcome: objectSchema<CrashProof['outcome']>({
    type: { const: 'CRASH' },
    crashMultiplier: { type: 'number', minimum: 1, maximum: 1000, description: 'the crash point, crashCents / 100 (D40)' },
    u: { type: 'number', minimum: 0, exclusiveMaximum: 1, description: 'x / 2^52, x the first 52 bits of the HMAC (D40)' },
  }),
  commissionMicro: { type: 'string', pattern: '^[0-9]{1,6}$', description: 'the house edge the crash point was derived with, of 100000 (D40)' },
  maxMultiplier: { ...multiplier, description: 'where a bet still flying is cashed out (D40)' },
  maxPayoutMicro: { ...microAmount, description: 'the most a bet is paid; a bet is cashed out where its payout reaches it (D40)' },
  payoutRounding: { enum: [...PAYOUT_ROUNDINGS], description: 'how the payout was booked in the round\'s currency (D46)' },
  currency: { type: 'string' },
  bet: objectSchema<CrashProof['bet']>({
    amountMicro: microAmount,
    autoCashOut: orNull({ ...multiplier, description: 'the bet\'s auto cash-out; null without one' }),
    cashOutMultiplier: orNull({ ...multiplier, description: 'where the bet was cashed out, by hand or by itself; null when lost' }),
    cashOutMs: orNull({ type: 'integer', minimum: 0, description: 'the ms of the flight the cash-out was decided at' }),
    payoutMicro: { ...microAmount, description: 'what the bet was paid: 0 when lost or voided' },
    voided: { type: 'boolean', description: 'the round was voided and its stake refunded: nothing is paid' },
    isFree: { const: true, description: 'present for a free bet only (contract 2.6, D42): its stake was not debited and payoutMicro is its net, max(payout - stake, 0) (contract 8.4)' },
  }, {}, ['isFree']),
  sessionId: uuid,
});

// GET /v1/rounds/{roundId}/proof: the round's game's proof, told apart by its outcome's type
export const roundProofSchema = {
  oneOf: [diceProofSchema, crashProofSchema],
  description: 'a dice round\'s proof (outcome.type DICE) or a crash round\'s (outcome.type CRASH)',
};
