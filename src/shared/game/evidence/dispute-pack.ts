import type { Db, WalletCall } from '../../platform/db/client.js';
import type { Queryable } from '../../platform/db/sql.js';
import { PACK_KEY, currentSigningKey } from '../../platform/signing-keys.js';
import { NO_OUTCOME, SEED_NOT_REVEALED, signedPack, type Manifest } from '../../domain/dispute-pack.js';
import { callsOfTransactions } from '../../wallet/audit.js';
import { PROVABLE, roundProof } from '../fairness/round-proof.js';
import { cycleConfig } from '../operators/game-config.js';
import { moduleOfRound, roundRecord } from '../rounds/round-record.js';
import { findRound } from '../reports/rounds.js';
import { walletCallView } from '../reports/round-view.js';
import { zipFiles } from './archive.js';

// The dispute pack of a round (D32): its evidence read from the record (contract 2.13), put
// in the pack's files (domain/dispute-pack.ts), signed with the service's current pack key
// and zipped. src/shared/game/evidence holds what gathers evidence about rounds for someone outside
// the service (the pack now, game recall, D33, later), apart from the operator's
// reconciliation reads (game/reports), whose round view it reuses.

export type DisputePackAnswer =
  // no round of this operator with this id (D10: another operator's reads as unknown)
  | { kind: 'not_found' }
  // the round is still being played
  | { kind: 'live' }
  | { kind: 'pack'; archive: Buffer; manifest: Manifest };

type Service = { db: Db; sql: Queryable; masterKey: Buffer; now: Date };

// D32: every call of the round (bet, win, rollback, each attempt) with the bodies as sent and
// as received; the request's signature travelled in headers and is not kept (contract 5.1)
const walletCallRecord = (call: WalletCall) => ({
  ...walletCallView(call),
  error: call.error,
  requestBody: call.requestBody,
  responseBody: call.responseBody,
});

// D22: a roundId that never became a round has its bet only; its par sheet is read as a round
// without an outcome
const NO_ROUND = { outcomeSide: null, outcomeSum: null, diceValues: [], lowWeight: 0n, highWeight: 0n, crashCents: null, cashOutCents: null, cashOutMs: null, outcome: null };

export async function disputePack({ db, sql, masterKey, now }: Service, operatorId: string, roundId: string): Promise<DisputePackAnswer> {
  // the round as GET /v1/rounds/{roundId} answers it; D22: a bet refused at the wallet
  // reads as a round VOIDED for bet_rejected, and so is terminal
  const round = await findRound(db, operatorId, roundId);
  if (!round) return { kind: 'not_found' };
  if (round.state !== 'SETTLED' && round.state !== 'VOIDED') return { kind: 'live' };

  const bet = await db.bet.findFirstOrThrow({ where: { roundId, operatorId } });
  const transactionUuids = [bet.betTransactionUuid, bet.winTransactionUuid, bet.rollbackTransactionUuid].filter((uuid): uuid is string => uuid !== null);
  const [calls, cycle, played] = await Promise.all([
    callsOfTransactions(db, operatorId, transactionUuids),
    // contract 8.6: the configuration the cycle snapshotted at PENDING
    db.cycle.findUniqueOrThrow({ where: { id: bet.cycleId } }),
    db.round.findFirst({ where: { id: roundId, operatorId }, include: PROVABLE }),
  ]);

  // contract 2.11 when the seed is revealed; D32: else the commitment and why
  const proven = played ? roundProof(masterKey, now, played) : { kind: 'no_outcome' as const };
  const proof =
    proven.kind === 'proof'
      ? proven.proof
      : proven.kind === 'not_revealed'
        ? { serverSeedHash: proven.serverSeedHash, proofStatus: SEED_NOT_REVEALED }
        : { serverSeedHash: played?.seed.serverSeedHash ?? null, proofStatus: NO_OUTCOME };

  const key = await currentSigningKey(sql, masterKey, PACK_KEY);
  // D32: a verifier accepts a pack made at or after its key's createdAt, which is the
  // database's clock; this process's clock may run a little behind it just after a rotation
  const createdAt = now < key.createdAt ? key.createdAt : now;
  const { files, manifest } = signedPack(
    { roundId, operatorId, createdAt },
    {
      'round.json': round,
      'bets.json': round.bets,
      'wallet-calls.json': calls.map(walletCallRecord),
      'proof.json': proof,
      // D39: the game's par sheet (dice: each side's return; crash: the bet's, D40)
      'par-sheet.json': moduleOfRound(cycle.gameCode, roundId).rounds.parSheet(
        cycleConfig(cycle),
        roundRecord(played ?? { ...NO_ROUND, state: round.state }, bet),
        bet.amountMicro,
        bet.currency,
      ),
    },
    key,
  );
  return { kind: 'pack', archive: zipFiles(files), manifest };
}
