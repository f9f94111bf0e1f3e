// The bodies of the four wallet calls (contract 2.5-2.9), built in one place from typed
// inputs, for every caller: the debit (bets/ticket.ts), the win a settlement queues
// (rounds/settle.ts), a rollback (wallet-jobs/wallet-jobs.ts, bets/debit.ts) and the balance
// (sessions/launch.ts, realtime). The one call that signs and sends them is client.ts, which
// puts requestUuid first (prepareCall). The fields are listed in the order they are sent:
// the body is serialised once and those bytes are signed (D6), so the order is part of what
// an operator sees; test/unit/wallet-requests.test.ts pins it. Money is already a
// MicroAmount string here (D18). A win's or a rollback's body is kept as its wallet job's
// payload (jsonb) and sent from there.

// contract 2.5: the fields every call carries
export type PlayerRef = { operatorId: string; playerRef: string; currency: string; gameCode: string };

export type BalanceFields = PlayerRef;
export type BetFields = PlayerRef & { transactionUuid: string; amountMicro: string; roundId: string; isFree?: true; bonusRef?: string; jackpotContributionMicro?: string };
export type WinFields = PlayerRef & { transactionUuid: string; referenceTransactionUuid: string; amountMicro: string; roundId: string; jackpotContributionMicro?: string };
export type RollbackFields = PlayerRef & { transactionUuid: string; referenceTransactionUuid: string; roundId: string };

// contract 2.9
export const balanceRequest = (player: PlayerRef): BalanceFields => ({
  operatorId: player.operatorId,
  playerRef: player.playerRef,
  currency: player.currency,
  gameCode: player.gameCode,
});

// contract 2.6: isFree is sent only for a free bet, and with it bonusRef, the campaignRef of
// the grant it spends (D42). D41: a play of a game with a jackpot sends its contribution to the
// pool (jackpotContributionMicro), on the bet call as on the win call; no other bet has one.
export const betRequest = (
  bet: PlayerRef & { betTransactionUuid: string; amountMicro: string; roundId: string; isFree: boolean; bonusRef?: string; jackpotContributionMicro?: string },
): BetFields => ({
  operatorId: bet.operatorId,
  playerRef: bet.playerRef,
  currency: bet.currency,
  gameCode: bet.gameCode,
  transactionUuid: bet.betTransactionUuid,
  amountMicro: bet.amountMicro,
  roundId: bet.roundId,
  ...(bet.isFree ? { isFree: true as const } : {}),
  ...(bet.isFree && bet.bonusRef !== undefined ? { bonusRef: bet.bonusRef } : {}),
  ...(bet.jackpotContributionMicro !== undefined ? { jackpotContributionMicro: bet.jackpotContributionMicro } : {}),
});

// contract 2.7: a win has its own transactionUuid and references the bet's
export const winRequest = (
  win: PlayerRef & { winTransactionUuid: string; betTransactionUuid: string; amountMicro: string; roundId: string; jackpotContributionMicro?: string },
): WinFields => ({
  operatorId: win.operatorId,
  playerRef: win.playerRef,
  currency: win.currency,
  gameCode: win.gameCode,
  transactionUuid: win.winTransactionUuid,
  referenceTransactionUuid: win.betTransactionUuid,
  amountMicro: win.amountMicro,
  roundId: win.roundId,
  ...(win.jackpotContributionMicro !== undefined ? { jackpotContributionMicro: win.jackpotContributionMicro } : {}),
});

// contract 2.8: a rollback has its own transactionUuid and references the bet's
export const rollbackRequest = (
  bet: PlayerRef & { betTransactionUuid: string; roundId: string },
  rollbackTransactionUuid: string,
): RollbackFields => ({
  operatorId: bet.operatorId,
  playerRef: bet.playerRef,
  currency: bet.currency,
  gameCode: bet.gameCode,
  transactionUuid: rollbackTransactionUuid,
  referenceTransactionUuid: bet.betTransactionUuid,
  roundId: bet.roundId,
});
