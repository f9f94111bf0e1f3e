import type { Bet, Round, WalletCall, WalletJob } from '../../platform/db/client.js';
import type { RoundVoidedData } from '../../domain/events.js';
import { moduleOfRound, roundRecord } from '../rounds/round-record.js';
import { profileView } from '../../domain/jurisdictions.js';

// The wire shape of rounds, bets and wallet audit rows in the reconciliation reads (D10).
// Money leaves as decimal strings of micro-units (D18), timestamps as ISO 8601.

// D44: the session's jurisdiction and the profile it played under, named by every read of a round
export type RoundSession = { playerRef: string; sandbox: boolean; jurisdiction: string; jurisdictionProfile: unknown };
export type RoundRecord = Round & { session: RoundSession; bet: Bet };

export type RoundTotals = { totalBetsMicro: bigint; totalPayoutsMicro: bigint };

// D1: a round has exactly one bet, so the totals are that bet's.
export function roundTotals(state: Round['state'], bet: Pick<Bet, 'amountMicro' | 'isFree' | 'payoutMicro'>): RoundTotals {
  // contract 8.4: no stake was debited for a free bet, so it counts as 0
  const stake = bet.isFree ? 0n : bet.amountMicro;
  // D18: a voided round reports totalBetsMicro = its stake and totalPayoutsMicro = 0
  if (state === 'VOIDED') return { totalBetsMicro: stake, totalPayoutsMicro: 0n };
  // a lost bet has no payout (0 or not recorded)
  return { totalBetsMicro: stake, totalPayoutsMicro: bet.payoutMicro ?? 0n };
}

const iso = (at: Date | null) => (at === null ? null : at.toISOString());

// D39: what the round's game shows beyond these fields (crash: its crash point, its cash-out's
// multiplier and ms, and whether it won, D40; dice: nothing, its side and outcome are here)
const playOf = (round: RoundRecord) => moduleOfRound(round.gameCode, round.id).rounds.view(roundRecord(round, round.bet));

// D42: a free bet's campaignRef, sent as the debit's bonusRef (contract 2.6); null for a paid bet
export type BonusRef = string | null;

export function roundView(round: RoundRecord, bonusRef: BonusRef) {
  const totals = roundTotals(round.state, round.bet);
  return {
    roundId: round.id,
    cycleId: round.cycleId,
    sessionId: round.sessionId,
    playerRef: round.session.playerRef,
    gameCode: round.gameCode,
    currency: round.currency,
    state: round.state,
    nonce: round.nonce,
    outcomeSide: round.outcomeSide,
    outcomeSum: round.outcomeSum,
    ...playOf(round),
    // contract 8.4, D42: a free bet's round counts its stake 0 and its payout is the net paid
    isFree: round.bet.isFree,
    bonusRef,
    totalBetsMicro: totals.totalBetsMicro.toString(),
    totalPayoutsMicro: totals.totalPayoutsMicro.toString(),
    createdAt: round.createdAt.toISOString(),
    settledAt: iso(round.settledAt),
    voidedAt: iso(round.voidedAt),
    // D35: a round of a sandbox session
    sandbox: round.session.sandbox,
    jurisdiction: profileView(round.session.jurisdiction, round.session.jurisdictionProfile),
  };
}

// D22: a bet refused or uncertain at the wallet never became a round, yet its roundId went
// out with the debit (contract 2.6): it reads as a round VOIDED for bet_rejected, in the
// fields of roundView. It has no nonce nor outcome; it was decided (voidedAt) when the
// wallet's answer to the debit, or its absence, was recorded (`decidedAt`).
export function rejectedBetRoundView(bet: Bet, decidedAt: Date, session: Omit<RoundSession, 'playerRef'>, bonusRef: BonusRef) {
  const totals = roundTotals('VOIDED', bet);
  const play = moduleOfRound(bet.gameCode, bet.roundId).rounds.view(roundRecord({ ...NEVER_PLAYED, state: 'VOIDED' }, bet));
  return {
    roundId: bet.roundId,
    cycleId: bet.cycleId,
    sessionId: bet.sessionId,
    playerRef: bet.playerRef,
    gameCode: bet.gameCode,
    currency: bet.currency,
    state: 'VOIDED' as const,
    nonce: null,
    outcomeSide: null,
    outcomeSum: null,
    ...play,
    isFree: bet.isFree,
    bonusRef,
    totalBetsMicro: totals.totalBetsMicro.toString(),
    totalPayoutsMicro: totals.totalPayoutsMicro.toString(),
    createdAt: bet.createdAt.toISOString(),
    settledAt: null,
    voidedAt: decidedAt.toISOString(),
    sandbox: session.sandbox,
    jurisdiction: profileView(session.jurisdiction, session.jurisdictionProfile),
  };
}

export const BET_REJECTED = 'bet_rejected';

// D22: the columns of a round that was never played
const NEVER_PLAYED = { outcomeSide: null, outcomeSum: null, diceValues: [], lowWeight: 0n, highWeight: 0n, crashCents: null, cashOutCents: null, cashOutMs: null, outcome: null };

// The bet's own parameters come last, as its game writes them (D39): dice's side is the column
// already shown, crash adds its autoCashOut (D40), and `side` is null for it.
export function betView(bet: Bet, bonusRef: BonusRef) {
  const params = moduleOfRound(bet.gameCode, bet.roundId).rounds.betParams(roundRecord({ ...NEVER_PLAYED, state: 'VOIDED' }, bet));
  return {
    betId: bet.id,
    status: bet.status,
    // D22: why a REJECTED bet was refused (the 8.2 reason); null otherwise
    reason: bet.rejectReason,
    side: bet.side,
    amountMicro: bet.amountMicro.toString(),
    // contract 2.6, D42: a free bet: the grant it spent and its campaign (the debit's bonusRef);
    // its amountMicro is the campaign's stake, not debited, and its payoutMicro the net paid
    isFree: bet.isFree,
    freeBetGrantId: bet.freeBetGrantId,
    bonusRef,
    payoutMicro: bet.payoutMicro === null ? null : bet.payoutMicro.toString(),
    betTransactionUuid: bet.betTransactionUuid,
    winTransactionUuid: bet.winTransactionUuid,
    rollbackTransactionUuid: bet.rollbackTransactionUuid,
    createdAt: bet.createdAt.toISOString(),
    acceptedAt: iso(bet.acceptedAt),
    settledAt: iso(bet.settledAt),
    voidedAt: iso(bet.voidedAt),
    ...params,
  };
}

export function walletCallView(call: WalletCall) {
  return {
    endpoint: call.endpoint,
    requestUuid: call.requestUuid,
    transactionUuid: call.transactionUuid,
    attempt: call.attempt,
    status: call.status,
    httpStatus: call.httpStatus,
    latencyMs: call.latencyMs,
    createdAt: call.createdAt.toISOString(),
    respondedAt: iso(call.respondedAt),
  };
}

// D23: where a bet's win call stands: pending (being retried), completed (credited), or
// abandoned (the operator did not know the bet, or 24 hours of retries failed); null
// without a win call
export function winCallView(job: WalletJob | null) {
  if (!job) return null;
  return {
    transactionUuid: job.transactionUuid,
    state: job.abandonedAt ? 'abandoned' : job.completedAt ? 'completed' : 'pending',
    attempts: job.attempts,
    lastError: job.lastError,
  };
}

// D31: round.voided; a voided round's totalBetsMicro is its stake (D18, as GET /v1/rounds)
export const roundVoidedData = (
  round: Pick<Round, 'id' | 'sessionId' | 'gameCode' | 'currency'>,
  bet: Pick<Bet, 'amountMicro' | 'isFree'>,
  reason: string,
  voidedAt: Date,
): RoundVoidedData => ({
  roundId: round.id,
  sessionId: round.sessionId,
  gameCode: round.gameCode,
  currency: round.currency,
  totalBetsMicro: roundTotals('VOIDED', { ...bet, payoutMicro: null }).totalBetsMicro.toString(),
  reason,
  voidedAt: voidedAt.toISOString(),
});
