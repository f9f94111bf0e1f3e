import type { Side } from '../../domain/dice.js';

// The bet as the debit needs it, carried from the placing node to the debit in a bet job
// (placement.ts, then bets.ts or local-debits.ts); amountMicro is a MicroAmount string (it
// crosses Redis, D18).
export type BetTicket = {
  betId: string;
  roundId: string;
  sessionId: string;
  cycleId: string;
  operatorId: string;
  playerRef: string;
  gameCode: string;
  currency: string;
  side: Side;
  amountMicro: string;
  isFree: boolean;
  demo: boolean;
  betTransactionUuid: string;
  clientBetId?: string;
};
