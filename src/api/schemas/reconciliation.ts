import type { JSONSchemaType, ValidateFunction } from 'ajv';
import { invalidRequest } from '../../shared/platform/errors.js';
import { decodeCursor, type ListingPosition } from '../../shared/game/reports/cursor.js';
import { compile, toInvalidRequest } from '../../shared/platform/validation.js';
import { BetStatus, RoundState } from '../../shared/platform/db/client.js';
import type { GgrRow, JackpotRow } from '../../shared/game/reports/ggr.js';
import type { findRound } from '../../shared/game/reports/rounds.js';
import type { betView, roundView, walletCallView, winCallView } from '../../shared/game/reports/round-view.js';
import type { WalletCallsRow } from '../../shared/game/reports/wallet-calls.js';
import type { CircuitState } from '../../shared/wallet/circuit.js';
import { RS_STATUSES, type WalletEndpoint } from '../../shared/domain/wallet-status.js';
import { instant, jurisdictionSchema, microAmount, objectSchema, orNull, uuid, type Schema } from './common.js';

// Query strings of the reconciliation reads (D10). Every value arrives as text, and a
// repeated parameter as a list, which is a wrong type. Unknown parameters are dropped (D9).
// D3: anything invalid is 400 invalid_request with RS_ERROR_WRONG_TYPES.

type QueryText = Record<string, string | string[] | undefined>;

type OperatorQuery = { operatorId?: string };
type RangeQuery = OperatorQuery & { from?: string; to?: string };
type ListQuery = RangeQuery & { cursor?: string; limit?: string };

const operatorId = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  nullable: true,
  description: 'the signing key\'s operator; any other value is 403 operator_mismatch (D10)',
} as const;
const queryInstant = { type: 'string', format: 'date-time', nullable: true } as const;

export const roundQuerySchema: JSONSchemaType<OperatorQuery> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: { operatorId },
};

export const reportQuerySchema: JSONSchemaType<RangeQuery> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    operatorId,
    from: { ...queryInstant, description: 'start of the range, inclusive (default: 24 hours before `to`)' },
    to: { ...queryInstant, description: 'end of the range, exclusive (default: now)' },
  },
};

export const listQuerySchema: JSONSchemaType<ListQuery> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    operatorId,
    from: { ...queryInstant, description: 'rounds settled or voided at or after this instant (D10)' },
    to: { ...queryInstant, description: 'rounds settled or voided before this instant (D10)' },
    cursor: { type: 'string', minLength: 1, maxLength: 200, nullable: true, description: 'the nextCursor of the previous page' },
    // D10: an integer 1..500
    limit: { type: 'string', pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$', nullable: true, description: 'rounds per page, 1 to 500 (default 100)' },
  },
};

const validRound = compile(roundQuerySchema);
const validReport = compile(reportQuerySchema);
const validList = compile(listQuerySchema);

const DEFAULT_LIMIT = 100;
// the reports cover the last 24 hours unless told otherwise (D10 leaves the default open)
const DEFAULT_REPORT_WINDOW_MS = 24 * 60 * 60 * 1000;

// Postgres timestamps hold years 1 to 9999 here (ISO text); outside that is not a usable bound
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

const wrongType = (path: string, keyword: string, message: string) =>
  invalidRequest('RS_ERROR_WRONG_TYPES', 'a field has the wrong type or format', [{ path, keyword, message }]);

function validated<T>(validate: ValidateFunction<T>, query: QueryText): T {
  // a copy: ajv removes the unknown parameters from what it validates
  const copy: unknown = { ...query };
  if (!validate(copy)) throw toInvalidRequest(validate.errors ?? []);
  return copy;
}

// ajv's date-time admits a leap second and offsets that leave the usable years
function toInstant(text: string | undefined, path: string): Date | undefined {
  if (text === undefined) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime()) || at.getTime() < EARLIEST || at.getTime() > LATEST) {
    throw wrongType(path, 'format', 'must be a date-time between years 0001 and 9999');
  }
  return at;
}

export type RoundQuery = OperatorQuery;

export const readRoundQuery = (query: QueryText): RoundQuery => validated(validRound, query);

export type ListRequest = OperatorQuery & { from?: Date; to?: Date; after?: ListingPosition; limit: number };

export function readListQuery(query: QueryText): ListRequest {
  const fields = validated(validList, query);
  let after: ListingPosition | undefined;
  if (fields.cursor !== undefined) {
    after = decodeCursor(fields.cursor);
    if (!after) throw wrongType('/cursor', 'format', 'must be a nextCursor returned by this endpoint');
  }
  return {
    operatorId: fields.operatorId,
    from: toInstant(fields.from, '/from'),
    to: toInstant(fields.to, '/to'),
    after,
    limit: fields.limit === undefined ? DEFAULT_LIMIT : Number(fields.limit),
  };
}

export type ReportRequest = OperatorQuery & { from: Date; to: Date };

export function readReportQuery(query: QueryText, now: Date): ReportRequest {
  const fields = validated(validReport, query);
  const to = toInstant(fields.to, '/to') ?? now;
  const from = toInstant(fields.from, '/from') ?? new Date(to.getTime() - DEFAULT_REPORT_WINDOW_MS);
  return { operatorId: fields.operatorId, from, to };
}

// The answers of the reads (D10, D22, D23): money as decimal strings (D18), instants as ISO 8601.

// a round of the listing (D10); nonce is null for a roundId that never became a round (D22)
type RoundSummary = Omit<ReturnType<typeof roundView>, 'nonce'> & { nonce: number | null };
type BetDetail = ReturnType<typeof betView> & { winCall: ReturnType<typeof winCallView> };
type RoundDetail = RoundSummary & {
  voidReason: string | null;
  demo: boolean;
  bets: BetDetail[];
  walletCalls: ReturnType<typeof walletCallView>[];
};
type GgrBody = { from: string; to: string; games: GgrRow[]; jackpots: JackpotRow[] };
type WalletCallsBody = { from: string; to: string; sandbox: boolean; endpoints: (WalletCallsRow & { circuit: CircuitState })[] };

// what GET /v1/rounds/{roundId} answers (a round, or D22's rejected bet) fits RoundDetail
type Assignable<T extends U, U> = T;
export type FoundRound = Assignable<NonNullable<Awaited<ReturnType<typeof findRound>>>, RoundDetail>;

// D40: a multiplier with two decimals, as the player channel writes it ("2.37")
const multiplier = { type: 'string', pattern: '^[0-9]{1,7}\\.[0-9]{2}$' } as const;

const WALLET_ENDPOINTS = ['balance', 'bet', 'win', 'rollback'] as const satisfies readonly WalletEndpoint[];

const roundSummaryProperties = {
  roundId: uuid,
  cycleId: { ...uuid, description: 'the engine cycle the round belongs to (D1)' },
  sessionId: uuid,
  playerRef: { type: 'string' },
  gameCode: { type: 'string' },
  currency: { type: 'string' },
  state: { enum: Object.values(RoundState) },
  nonce: orNull({ type: 'integer', minimum: 0, description: 'null for a roundId whose bet the wallet refused (D22)' }),
  outcomeSide: { enum: ['LOW', 'HIGH', null], description: 'dice: null until the outcome is derived; crash: null' },
  outcomeSum: orNull({ type: 'integer' }),
  // D40: a crash round's flight; absent for dice
  crashMultiplier: orNull({ ...multiplier, description: 'crash: the crash point, once the round\'s result is known (D40); null before' }),
  cashOutMultiplier: orNull({ ...multiplier, description: 'crash: the multiplier the bet was cashed out at, by hand or by itself; null when lost (D40)' }),
  cashOutMs: orNull({ type: 'integer', minimum: 0, description: 'crash: the ms of the flight the cash-out was decided at (D40)' }),
  won: {
    type: ['boolean', 'null'],
    description: 'crash: the bet won, that is it was cashed out; gems: the play paid something; null until the result, and when voided (D40, D41)',
  },
  // D41: a Gem Vault round's play; absent for the other games
  featurePurchased: { type: ['boolean', 'null'], description: 'gems: the play bought the feature; null until its outcome is stored (D41)' },
  baseGame: {
    description: 'gems: the base spin as drawn, {stops, grid}; null for a bought feature and until the outcome is stored (contract 2.11 MULTI, D41)',
  },
  events: {
    type: ['array', 'null'],
    description: 'gems: every event of the play in order (LINE_WIN, FEATURE_TRIGGER, FREE_SPIN, JACKPOT) with its subOutcome and what it paid; null until the outcome is stored (contract 2.11 MULTI, D41)',
    items: objectSchema<{ type: string; subOutcome?: unknown; payoutMicro: string }>({ type: { type: 'string' }, subOutcome: {}, payoutMicro: microAmount }, {}, ['subOutcome']),
  },
  jackpotContributionMicro: orNull({ ...microAmount, description: 'gems: what the play added to the jackpot\'s pool (D41)' }),
  isFree: { type: 'boolean', description: 'the round\'s bet was a free bet: its stake was not debited, it counts 0 here, in GGR and towards limits (contract 8.4, D42)' },
  bonusRef: orNull({ type: 'string', description: 'a free bet\'s campaignRef, the bonusRef its debit carried (contract 2.6, D42); null for a paid bet' }),
  totalBetsMicro: { ...microAmount, description: 'the stake of the round\'s bet; 0 for a free bet (D18, contract 8.4)' },
  totalPayoutsMicro: { ...microAmount, description: 'the payout credited; 0 for a lost or voided round (D18); a free bet\'s is its net, max(payout - stake, 0) (D42)' },
  createdAt: instant,
  settledAt: orNull(instant),
  voidedAt: orNull(instant),
  sandbox: { type: 'boolean', description: 'a round of a sandbox session: its outcomes may come from seeds the operator chose (D35)' },
  jurisdiction: { ...jurisdictionSchema, description: "the jurisdiction profile the round's bet was placed under: its session's, fixed at launch (D44)" },
} satisfies { [K in keyof RoundSummary]-?: Schema };

// the fields only some games' rounds have: crash's (D40), Gem Vault's (D41)
const GAME_ROUND_FIELDS = [
  'crashMultiplier',
  'cashOutMultiplier',
  'cashOutMs',
  'won',
  'featurePurchased',
  'baseGame',
  'events',
  'jackpotContributionMicro',
] as const;

export const roundListSchema = objectSchema<RoundListBody>({
  rounds: { type: 'array', items: objectSchema<RoundSummary>(roundSummaryProperties, {}, GAME_ROUND_FIELDS) },
  nextCursor: orNull({ type: 'string', description: 'pass as `cursor` for the next page; null on the last page (D10)' }),
});
type RoundListBody = { rounds: RoundSummary[]; nextCursor: string | null };

const betDetailSchema = objectSchema<BetDetail>({
  betId: uuid,
  status: { enum: Object.values(BetStatus) },
  reason: orNull({ type: 'string', description: 'why a REJECTED bet was refused: a bet_rejected reason (contract 8.2, D22)' }),
  side: { enum: ['LOW', 'HIGH', null], description: 'dice: the side bet on; null for a crash bet' },
  autoCashOut: orNull({ ...multiplier, description: 'crash: the bet\'s auto cash-out, null without one (D40); absent for dice' }),
  featureBuy: { type: 'boolean', description: 'gems: whether the play bought the feature, its amountMicro then featureBuyCost times the stake (D41); absent for the other games' },
  amountMicro: microAmount,
  isFree: { type: 'boolean', description: 'a free bet: amountMicro is its campaign\'s stake, sent with isFree and not debited (contract 2.6, 8.4, D42)' },
  freeBetGrantId: orNull({ ...uuid, description: 'the free-bet grant the bet spent a round of (D42); null for a paid bet' }),
  bonusRef: orNull({ type: 'string', description: 'a free bet\'s campaignRef, the bonusRef its debit carried (contract 2.6, D42); null for a paid bet' }),
  payoutMicro: orNull({ ...microAmount, description: 'what the bet was paid; a free bet\'s is its net, max(payout - stake, 0) (contract 8.4, D42)' }),
  betTransactionUuid: { ...uuid, description: 'the transactionUuid of the /wallet/bet call' },
  winTransactionUuid: orNull(uuid),
  rollbackTransactionUuid: orNull(uuid),
  createdAt: instant,
  acceptedAt: orNull(instant),
  settledAt: orNull(instant),
  voidedAt: orNull(instant),
  winCall: {
    ...objectSchema<NonNullable<BetDetail['winCall']>>({
      transactionUuid: uuid,
      state: { enum: ['pending', 'completed', 'abandoned'] },
      attempts: { type: 'integer', minimum: 0 },
      lastError: orNull({ type: 'string' }),
    }),
    type: ['object', 'null'],
    description: 'where the bet\'s win call stands; null without one (D23)',
  },
}, {}, ['autoCashOut', 'featureBuy']);

export const roundDetailSchema = objectSchema<RoundDetail>({
  ...roundSummaryProperties,
  voidReason: orNull({ type: 'string', description: '"bet_rejected" for a roundId whose bet the wallet refused (D22)' }),
  demo: { type: 'boolean', description: 'a demo round (D8)' },
  bets: { type: 'array', items: betDetailSchema },
  walletCalls: {
    type: 'array',
    description: 'the wallet audit rows of the bet\'s transactions, oldest first (contract 2.13)',
    items: objectSchema<RoundDetail['walletCalls'][number]>({
      endpoint: { enum: WALLET_ENDPOINTS },
      requestUuid: uuid,
      transactionUuid: orNull(uuid),
      attempt: { type: 'integer', minimum: 1 },
      status: { enum: [...RS_STATUSES, null], description: 'the status answered (contract 7.1); null before an answer' },
      httpStatus: orNull({ type: 'integer' }),
      latencyMs: orNull({ type: 'integer', minimum: 0 }),
      createdAt: instant,
      respondedAt: orNull(instant),
    }),
  },
}, {}, GAME_ROUND_FIELDS);

const count = { type: 'integer', minimum: 0 } as const;

export const ggrSchema = objectSchema<GgrBody>({
  from: instant,
  to: instant,
  games: {
    type: 'array',
    items: objectSchema<GgrRow>({
      gameCode: { type: 'string' },
      currency: { type: 'string' },
      rounds: { ...count, description: 'settled and voided rounds' },
      bets: { ...count, description: 'bets of settled rounds' },
      stakesMicro: microAmount,
      payoutsMicro: microAmount,
      ggrMicro: { ...microAmount, description: 'stakesMicro minus payoutsMicro; negative when the players won more' },
      voidedRounds: count,
      sandbox: { type: 'boolean', description: 'the row counts sandbox sessions\' rounds, which are never counted with the others (D35)' },
    }),
  },
  jackpots: {
    type: 'array',
    description: 'the operator\'s progressive jackpot pools as they stand, one per currency (D41): seededMicro + contributedMicro - paidMicro = poolMicro; a jackpot paid is in its round\'s payout in games',
    items: objectSchema<JackpotRow>({
      currency: { type: 'string' },
      poolMicro: microAmount,
      seedMicro: { ...microAmount, description: 'what the pool restarts at after a hit' },
      seededMicro: { ...microAmount, description: 'every seed put in: the first and one after each hit' },
      contributedMicro: { ...microAmount, description: 'the plays\' contributions (jackpotContributionMicro)' },
      paidMicro: { ...microAmount, description: 'every jackpot paid' },
      hits: count,
      lastHitAt: orNull(instant),
    }),
  },
});

export const walletCallsSchema = objectSchema<WalletCallsBody>({
  from: instant,
  to: instant,
  sandbox: { type: 'boolean', description: 'the operator is a sandbox operator: its wallet calls go to a test wallet (D35)' },
  endpoints: {
    type: 'array',
    items: objectSchema<WalletCallsBody['endpoints'][number]>({
      endpoint: { enum: WALLET_ENDPOINTS },
      calls: count,
      ok: { ...count, description: 'answered RS_OK or RS_ERROR_DUPLICATE_TRANSACTION (contract 7.1 success)' },
      failed: count,
      p50LatencyMs: orNull({ type: 'integer', minimum: 0 }),
      p99LatencyMs: orNull({ type: 'integer', minimum: 0 }),
      openCircuitRejections: { ...count, description: 'calls failed at once by an open circuit (contract 3.4)' },
      abandonedJobs: count,
      circuit: { enum: ['closed', 'open', 'half_open', 'unknown'], description: 'the circuit\'s state now (contract 3.4)' },
    }),
  },
});
