import { DICE_MATH_VERSION, DICE_RNG_VERSION } from '../../shared/domain/dice.js';
import type { DiceProof } from '../../shared/domain/proof.js';
import { objectSchema, sha256Hex, uuid } from './common.js';

// The proof of a dice round (contract 2.11 with the DICE outcome, DECISIONS D2, D19).
const weight = { type: 'string', pattern: '^[0-9]{1,20}$', description: 'the round\'s weight snapshot, a decimal integer (D19)' };

export const diceProofSchema = objectSchema<DiceProof>({
  roundId: uuid,
  gameCode: { type: 'string' },
  rngVersion: { type: 'string', description: `"${DICE_RNG_VERSION}" for the dice derivation of D2` },
  mathVersion: { type: 'string', description: `"${DICE_MATH_VERSION}" (D2)` },
  serverSeed: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'the revealed seed: 32 random bytes as 64 lower-case hex characters (D2)' },
  serverSeedHash: { ...sha256Hex, description: 'sha256_hex(utf8(serverSeed)); equals the hash returned at session creation (contract 2.11, D2)' },
  clientSeed: { type: 'string' },
  nonce: { type: 'integer', minimum: 0 },
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
