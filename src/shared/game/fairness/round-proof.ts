import { isSide } from '../../domain/dice.js';
import { buildDiceProof, type DiceProof } from '../../domain/proof.js';
import type { Round, Seed } from '../../platform/db/client.js';
import { openServerSeed } from './seed-vault.js';

// What can be proven of a round (contract 2.11; D2, D5, D19): its proof once it has an
// outcome and its seed is retired. The proof endpoint and the dispute pack (D32) both ask here.

export type RoundProof =
  // no outcome was derived (voided before RESULT): nothing to prove
  | { kind: 'no_outcome' }
  // the seed is still in use: revealed when the session ends or the seed is rotated
  | { kind: 'not_revealed'; serverSeedHash: string; revealableAfter: Date }
  | { kind: 'proof'; proof: DiceProof };

export type ProvableRound = Round & { seed: Seed; session: { expiresAt: Date } };

// D2, D5: a seed is revealable once retired; an expired session retires its seeds even
// before any process has marked them
export const seedRevealed = (retiredAt: Date | null, sessionExpiresAt: Date, now: Date): boolean => retiredAt !== null || sessionExpiresAt <= now;

export function roundProof(masterKey: Buffer, now: Date, round: ProvableRound): RoundProof {
  const { outcomeSide, outcomeSum } = round;
  if (outcomeSide === null || outcomeSum === null || (round.state !== 'SETTLED' && round.state !== 'VOIDED')) return { kind: 'no_outcome' };
  if (!seedRevealed(round.seed.retiredAt, round.session.expiresAt, now)) return { kind: 'not_revealed', serverSeedHash: round.seed.serverSeedHash, revealableAfter: round.session.expiresAt };
  // a stored side other than LOW or HIGH is a corrupt row: an error, never a proof
  if (!isSide(outcomeSide)) throw new Error(`round ${round.id} has an unknown outcome side`);
  return {
    kind: 'proof',
    proof: buildDiceProof({
      roundId: round.id,
      gameCode: round.gameCode,
      sessionId: round.sessionId,
      serverSeed: openServerSeed(masterKey, round.seed.id, round.seed.encryptedServerSeed),
      serverSeedHash: round.seed.serverSeedHash,
      clientSeed: round.seed.clientSeed,
      nonce: round.nonce,
      lowWeight: round.lowWeight,
      highWeight: round.highWeight,
      diceValues: round.diceValues,
      outcomeSum,
      outcomeSide,
    }),
  };
}
