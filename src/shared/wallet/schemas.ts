import { MICRO_AMOUNT_PATTERN } from '../domain/money.js';
import { RS_STATUSES, type WalletEndpoint } from '../domain/wallet-status.js';
import { objectSchema, type Schema } from '../platform/json-schema.js';

// The wallet protocol as the operator implements it (contract 2.5-2.10, 4.2, 7.1): the bodies
// the service sends to {wallet_base_url}/wallet/{endpoint}, field for field as it sends them,
// and the answer it accepts (parseWalletResponse, D13). The OpenAPI document describes the
// four calls from these (src/api/openapi.ts); the contract tests hold the service's real
// requests to them.

type Common = { requestUuid: string; operatorId: string; playerRef: string; currency: string; gameCode: string };
type BetRequest = Common & { transactionUuid: string; amountMicro: string; roundId: string; isFree?: true; bonusRef?: string; jackpotContributionMicro?: string };
type WinRequest = Common & { transactionUuid: string; referenceTransactionUuid: string; amountMicro: string; roundId: string; jackpotContributionMicro?: string };
type RollbackRequest = Common & { transactionUuid: string; referenceTransactionUuid: string; roundId: string };

const uuid = { type: 'string', format: 'uuid' } as const;

const common = {
  requestUuid: { ...uuid, description: 'per HTTP request: the idempotency key of the call; a retry of a timed-out call resends it with the same bytes (contract 4.3, D6)' },
  operatorId: { type: 'string', description: 'the operator (tenant) id' },
  playerRef: { type: 'string', description: 'the playerRef given at session creation' },
  currency: { type: 'string', description: 'the session currency' },
  gameCode: { type: 'string' },
} satisfies { [K in keyof Common]: Schema };

const transactionUuid = (what: string) => ({ ...uuid, description: `${what}; stable across every retry of this movement (contract 4.3)` });
const roundId = { ...uuid, description: 'the service\'s round id, to keep for reconciliation (GET /v1/rounds/{roundId})' };
// D41: sent with a play of a game with a jackpot, on its bet and on its win
const jackpotContributionMicro = {
  type: 'string',
  pattern: '^(0|[1-9][0-9]*)$',
  description: 'the part of the play\'s debit that feeds the progressive jackpot\'s pool, in micro-units (contract 2.7, D41); sent only for a game with a jackpot',
} as const;

export const WALLET_REQUEST_SCHEMAS: Record<WalletEndpoint, Schema> = {
  // contract 2.9
  balance: objectSchema<Common>(common),
  // contract 2.6: the service sends no currency-conversion fields; bonusRef only with isFree (D42)
  bet: objectSchema<BetRequest>(
    {
      ...common,
      transactionUuid: transactionUuid('the id of this debit'),
      amountMicro: { type: 'string', pattern: '^[1-9][0-9]*$', description: 'the stake in micro-units, a positive integer (contract 2.1, 8.2)' },
      roundId,
      isFree: { const: true, description: 'a free bet (contract 2.6): sent only when true' },
      bonusRef: { type: 'string', description: 'bonus attribution (contract 2.6): the campaignRef of the free-bet grant spent; sent only with isFree (D42)' },
      jackpotContributionMicro,
    },
    {},
    ['isFree', 'bonusRef', 'jackpotContributionMicro'],
  ),
  // contract 2.7
  win: objectSchema<WinRequest>(
    {
      ...common,
      transactionUuid: transactionUuid('a new id for this credit'),
      referenceTransactionUuid: { ...uuid, description: 'the transactionUuid of the bet this pays' },
      amountMicro: { type: 'string', pattern: '^(0|[1-9][0-9]*)$', description: 'the net payout in micro-units; "0" for the zero-payout win of a free bet (contract 4.2, 8.4)' },
      roundId,
      jackpotContributionMicro,
    },
    {},
    ['jackpotContributionMicro'],
  ),
  // contract 2.8, D13
  rollback: objectSchema<RollbackRequest>({
    ...common,
    transactionUuid: transactionUuid('a new id for this rollback'),
    referenceTransactionUuid: { ...uuid, description: 'the transactionUuid of the bet being reversed; unknown to the wallet when the debit never arrived (contract 4.2 rule 4, D27)' },
    roundId,
  }),
};

// contract 2.10, D13: what the service reads of an answer. A JSON object whose status is a
// known RS_ value and whose requestUuid echoes the request is taken at its word with a 2xx,
// or with a 4xx when its status is a refusal (statusOfAnswer); anything else is
// RS_ERROR_UNKNOWN (uncertain).
export const walletResponseSchema: Schema = {
  type: 'object',
  required: ['status', 'requestUuid'],
  properties: {
    status: { enum: RS_STATUSES, description: 'the outcome (contract 7.1); a missing or unknown value is taken as RS_ERROR_UNKNOWN' },
    requestUuid: { ...uuid, description: 'the requestUuid of the request (any case); any other value makes the answer RS_ERROR_UNKNOWN (D13)' },
    balanceMicro: {
      type: 'string',
      pattern: MICRO_AMOUNT_PATTERN,
      description: 'the balance after the operation, a decimal string of micro-units (never a JSON number, D18); any other value is ignored',
    },
    currency: { type: 'string', description: 'kept up to 256 characters (D24)' },
    message: { type: 'string', description: 'human-readable detail, kept up to 256 characters (D24); on RS_ERROR_USER_DISABLED at launch, a 2.4 reason here names the 422 reason (D7)' },
  },
};
