import type { RoundProofBody } from '../../domain/proof.js';
import type { Bet, Cycle, Round, Seed } from '../../platform/db/client.js';
import { cycleConfig } from '../operators/game-config.js';
import { roundTotals } from '../reports/round-view.js';
import { moduleOfRound, roundRecord } from '../rounds/round-record.js';
import { openServerSeed } from './seed-vault.js';

// What can be proven of a round (contract 2.11; D2, D5, D19): its proof once it has an
// outcome and its seed is retired. The proof endpoint and the dispute pack (D32) both ask here;
// the proof itself is its game's (D39: dice's die, crash's crash point and cash-out, D40).

export type RoundProof =
  // no outcome was derived (voided before RESULT): nothing to prove
  | { kind: 'no_outcome' }
  // the seed is still in use: revealed when the session ends or the seed is rotated
  | { kind: 'not_revealed'; serverSeedHash: string; revealableAfter: Date }
  | { kind: 'proof'; proof: RoundProofBody };

// the round with its seed, its session's end, its bet and its cycle (the configuration it was
// played under, contract 8.6)
export type ProvableRound = Round & { seed: Seed; session: { expiresAt: Date }; bet: Bet; cycle: Cycle };

// the relations roundProof reads, for a query of the round
export const PROVABLE = { seed: true, session: { select: { expiresAt: true } }, bet: true, cycle: true } as const;

// D2, D5: a seed is revealable once retired; an expired session retires its seeds even
// before any process has marked them
export const seedRevealed = (retiredAt: Date | null, sessionExpiresAt: Date, now: Date): boolean => retiredAt !== null || sessionExpiresAt <= now;

export function roundProof(masterKey: Buffer, now: Date, round: ProvableRound): RoundProof {
  const module = moduleOfRound(round.gameCode, round.id);
  const record = roundRecord(round, round.bet);
  if (!module.rounds.recorded(record) || (round.state !== 'SETTLED' && round.state !== 'VOIDED')) return { kind: 'no_outcome' };
  if (!seedRevealed(round.seed.retiredAt, round.session.expiresAt, now)) return { kind: 'not_revealed', serverSeedHash: round.seed.serverSeedHash, revealableAfter: round.session.expiresAt };
  return {
    kind: 'proof',
    proof: module.rounds.proof({
      roundId: round.id,
      gameCode: round.gameCode,
      sessionId: round.sessionId,
      currency: round.currency,
      serverSeed: openServerSeed(masterKey, round.seed.id, round.seed.encryptedServerSeed),
      serverSeedHash: round.seed.serverSeedHash,
      clientSeed: round.seed.clientSeed,
      nonce: round.nonce,
      record,
      config: cycleConfig(round.cycle),
      stakeMicro: round.bet.amountMicro,
      payoutMicro: roundTotals(round.state, round.bet).totalPayoutsMicro,
      isFree: round.bet.isFree,
    }),
  };
}
