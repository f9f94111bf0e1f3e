import { Ajv, type JSONSchemaType } from 'ajv';
import { STORABLE_TEXT, compile } from '../shared/platform/validation.js';
import { CLIENT_SEED_PATTERN } from '../shared/domain/seeds.js';
import type { PlaceBetRequest } from '../shared/game/bets/place.js';
import { gameModule } from '../shared/domain/games/index.js';
import { InvalidBetError, type BetColumns } from '../shared/domain/games/types.js';
import type { BetRejectReason } from '../shared/domain/bet-rules.js';
import { STAKE_MICRO_PATTERN, parseStakeMicro } from '../shared/domain/money.js';
import type { PlaceBet, Play, RotateSeed } from '../shared/domain/player-channel.js';

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

// Client messages of the player channel (D4), validated before anything else happens: the
// schemas are typed by the channel's map (src/shared/domain/player-channel.ts), so the map and what
// is accepted cannot drift apart.

type PlaceBetPayload = PlaceBet;

// D4: amountMicro is an integer or a MicroAmount string, D24: a stake string (digits, no
// leading zero) or a non-negative integer that a bigint holds; anything else (floats,
// decimals, signs, leading zeros, 2^63 and beyond, extra fields) is invalid_payload and never
// reaches a statement or the wallet. A zero stake passes here and is refused bet_out_of_range
// by the bet rules, as contract 8.2 names it. The bet's own parameters (dice: side; crash:
// autoCashOut) are the game's: its module parses them (D39), and a parameter of another game,
// or one missing, is invalid_payload too.
const placeBetSchema: JSONSchemaType<PlaceBetPayload> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  // D42: exactly one of amountMicro and freeBetGrantId
  oneOf: [
    { required: ['amountMicro'], properties: { amountMicro: true } },
    { required: ['freeBetGrantId'], properties: { freeBetGrantId: true } },
  ],
  properties: {
    side: { type: 'string', maxLength: 8, nullable: true },
    autoCashOut: { type: 'string', maxLength: 16, nullable: true },
    amountMicro: {
      anyOf: [{ type: 'integer' }, { type: 'string', pattern: STAKE_MICRO_PATTERN }],
    } as unknown as JSONSchemaType<PlaceBetPayload>['properties']['amountMicro'],
    freeBetGrantId: { type: 'string', pattern: UUID_PATTERN, nullable: true },
    clientBetId: { type: 'string', minLength: 1, maxLength: 64, pattern: STORABLE_TEXT, nullable: true },
  },
};
// not the shared inbound instance, which strips unknown fields (D9, REST bodies): here an
// extra field must fail validation
const strict = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: false, coerceTypes: false, strict: true });
const validPlaceBet = strict.compile(placeBetSchema);

export type ParsedBet =
  | { ok: true; request: PlaceBetRequest }
  | { ok: false; reason: BetRejectReason; clientBetId?: string };

// the clientBetId to echo on bet_rejected (D4), read even from a payload that is invalid
export function clientBetIdOf(payload: unknown): string | undefined {
  return payload && typeof payload === 'object' && typeof (payload as { clientBetId?: unknown }).clientBetId === 'string'
    ? ((payload as { clientBetId: string }).clientBetId.slice(0, 64) as string)
    : undefined;
}

// `gameCode`: the session's game. Its module reads the bet's parameters against its default
// configuration; a bound the operator set lower (crash's maxMultiplier) is the placement's to
// check, against the cycle's snapshot.
export function parsePlaceBet(payload: unknown, gameCode: string): ParsedBet {
  const clientBetId = clientBetIdOf(payload);
  const module = gameModule(gameCode);
  // D41: an instant game is played with `play`, never bet on a shared round
  if (!module || module.kind === 'instant' || !validPlaceBet(payload)) return { ok: false, reason: 'invalid_payload', clientBetId };
  const { amountMicro, freeBetGrantId, clientBetId: _id, ...parameters } = payload;
  // D18: a number is accepted only as a safe integer and converted at once; D42: a free bet's
  // stake is its campaign's, set when it is placed
  const amount = freeBetGrantId == null ? parseStakeMicro(amountMicro!) : 0n;
  if (amount === null) return { ok: false, reason: 'invalid_payload', clientBetId };
  let columns: BetColumns;
  try {
    columns = module.bet.columns(module.bet.parse(parameters, module.config.defaults));
  } catch (err) {
    if (err instanceof InvalidBetError) return { ok: false, reason: 'invalid_payload', clientBetId };
    throw err;
  }
  return {
    ok: true,
    request: {
      ...columns,
      amountMicro: amount,
      clientBetId: payload.clientBetId ?? undefined,
      ...(freeBetGrantId == null ? {} : { freeBetGrantId: freeBetGrantId.toLowerCase() }),
    },
  };
}

// D41 play: a stake as place_bet's amountMicro, and whether the play buys the feature; the
// session's game must be an instant one
const playSchema: JSONSchemaType<Play> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  // D42: exactly one of amountMicro and freeBetGrantId; a free play's feature buy is its campaign's
  oneOf: [
    { required: ['amountMicro'], properties: { amountMicro: true } },
    { required: ['freeBetGrantId'], properties: { freeBetGrantId: true } },
  ],
  properties: {
    amountMicro: {
      anyOf: [{ type: 'integer' }, { type: 'string', pattern: STAKE_MICRO_PATTERN }],
    } as unknown as JSONSchemaType<Play>['properties']['amountMicro'],
    featureBuy: { type: 'boolean', nullable: true },
    freeBetGrantId: { type: 'string', pattern: UUID_PATTERN, nullable: true },
    clientBetId: { type: 'string', minLength: 1, maxLength: 64, pattern: STORABLE_TEXT, nullable: true },
  },
};
const validPlay = strict.compile(playSchema);

export type ParsedPlay =
  | { ok: true; request: { amountMicro: bigint; featureBuy: boolean; clientBetId?: string; freeBetGrantId?: string } }
  | { ok: false; reason: BetRejectReason; clientBetId?: string };

export function parsePlay(payload: unknown, gameCode: string): ParsedPlay {
  const clientBetId = clientBetIdOf(payload);
  if (gameModule(gameCode)?.kind !== 'instant' || !validPlay(payload)) return { ok: false, reason: 'invalid_payload', clientBetId };
  const free = payload.freeBetGrantId ?? undefined;
  // D42: a free play's feature buy is its campaign's, never the player's
  if (free !== undefined && payload.featureBuy != null) return { ok: false, reason: 'invalid_payload', clientBetId };
  const amount = free === undefined ? parseStakeMicro(payload.amountMicro!) : 0n;
  if (amount === null) return { ok: false, reason: 'invalid_payload', clientBetId };
  return {
    ok: true,
    request: {
      amountMicro: amount,
      featureBuy: payload.featureBuy ?? false,
      ...(payload.clientBetId ? { clientBetId: payload.clientBetId } : {}),
      ...(free === undefined ? {} : { freeBetGrantId: free.toLowerCase() }),
    },
  };
}

type RotateSeedPayload = RotateSeed;
const rotateSeedSchema: JSONSchemaType<RotateSeedPayload> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: { clientSeed: { type: 'string', pattern: CLIENT_SEED_PATTERN, nullable: true } },
};
const validRotateSeed = compile(rotateSeedSchema);

export function parseRotateSeed(payload: unknown): { clientSeed: string | undefined } | null {
  const body = payload === undefined || payload === null ? {} : payload;
  if (!validRotateSeed(body)) return null;
  return { clientSeed: body.clientSeed ?? undefined };
}

// D33 recent_rounds, D44 session_position and reality_check_ack take nothing: no payload, or
// an empty object
export const isEmptyRequest = (payload: unknown): boolean =>
  payload === undefined || payload === null || (typeof payload === 'object' && !Array.isArray(payload) && Object.keys(payload).length === 0);

// D40 cash_out: nothing, or a clientBetId (the bet it names is the session's one live bet)
export const isCashOutRequest = (payload: unknown): boolean =>
  payload === undefined ||
  payload === null ||
  (typeof payload === 'object' &&
    !Array.isArray(payload) &&
    Object.entries(payload).every(([key, value]) => key === 'clientBetId' && typeof value === 'string' && value.length <= 64));
