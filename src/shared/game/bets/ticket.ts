import type { Side } from '../../domain/dice.js';
import type { Bet } from '../../platform/db/client.js';
import type { WalletCallInput } from '../../wallet/client.js';
import { betRequest } from '../../wallet/requests.js';
import type { BetTicket } from '../../platform/queues.js';

// the player a session's token names, as the debit's request names them (contract 2.6)
export type Payer = Pick<BetTicket, 'operatorId' | 'playerRef' | 'currency' | 'gameCode'>;

// the /wallet/bet call of a bet (contract 2.6)
export const debitCall = (
  ticket: Pick<
    BetTicket,
    'operatorId' | 'playerRef' | 'currency' | 'gameCode' | 'sessionId' | 'betTransactionUuid' | 'amountMicro' | 'roundId' | 'isFree' | 'bonusRef' | 'jackpotContributionMicro'
  >,
): WalletCallInput => ({
  operatorId: ticket.operatorId,
  endpoint: 'bet',
  sessionId: ticket.sessionId,
  transactionUuid: ticket.betTransactionUuid,
  fields: betRequest(ticket),
});

// what a ticket is made of
export type TicketedBet = Pick<
  Bet,
  | 'id'
  | 'roundId'
  | 'sessionId'
  | 'cycleId'
  | 'cycleCreatedAt'
  | 'operatorId'
  | 'playerRef'
  | 'gameCode'
  | 'currency'
  | 'side'
  | 'autoCashOutCents'
  | 'amountMicro'
  | 'isFree'
  | 'demo'
  | 'betTransactionUuid'
  | 'clientBetId'
>;

export function ticketOf(bet: TicketedBet): BetTicket {
  return {
    betId: bet.id,
    roundId: bet.roundId,
    sessionId: bet.sessionId,
    cycleId: bet.cycleId,
    cycleCreatedAt: bet.cycleCreatedAt.toISOString(),
    operatorId: bet.operatorId,
    playerRef: bet.playerRef,
    gameCode: bet.gameCode,
    currency: bet.currency,
    side: bet.side as Side | null,
    autoCashOutCents: bet.autoCashOutCents?.toString() ?? null,
    amountMicro: bet.amountMicro.toString(),
    isFree: bet.isFree,
    demo: bet.demo,
    betTransactionUuid: bet.betTransactionUuid,
    ...(bet.clientBetId ? { clientBetId: bet.clientBetId } : {}),
  };
}
