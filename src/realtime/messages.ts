import { Ajv, type JSONSchemaType } from 'ajv';
import { STORABLE_TEXT, compile } from '../shared/platform/validation.js';
import { CLIENT_SEED_PATTERN } from '../shared/domain/seeds.js';
import type { PlaceBetRequest } from '../shared/game/bets/place.js';
import type { BetRejectReason } from '../shared/domain/bet-rules.js';
import { STAKE_MICRO_PATTERN, parseStakeMicro } from '../shared/domain/money.js';
import type { PlaceBet, RotateSeed } from '../shared/domain/player-channel.js';

// Client messages of the player channel (D4), validated before anything else happens: the
// schemas are typed by the channel's map (src/shared/domain/player-channel.ts), so the map and what
// is accepted cannot drift apart.

type PlaceBetPayload = PlaceBet;

// D4: amountMicro is an integer or a MicroAmount string, D24: a stake string (digits, no
// leading zero) or a non-negative integer that a bigint holds; anything else (floats,
// decimals, signs, leading zeros, 2^63 and beyond, missing side, extra fields) is
// invalid_payload and never reaches a statement or the wallet. A zero stake passes here and
// is refused bet_out_of_range by the bet rules, as contract 8.2 names it.
const placeBetSchema: JSONSchemaType<PlaceBetPayload> = {
  type: 'object',
  additionalProperties: false,
  required: ['side', 'amountMicro'],
  properties: {
    side: { type: 'string', enum: ['LOW', 'HIGH'] },
    amountMicro: {
      anyOf: [{ type: 'integer' }, { type: 'string', pattern: STAKE_MICRO_PATTERN }],
    } as unknown as JSONSchemaType<PlaceBetPayload>['properties']['amountMicro'],
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

export function parsePlaceBet(payload: unknown): ParsedBet {
  const clientBetId = clientBetIdOf(payload);
  if (!validPlaceBet(payload)) return { ok: false, reason: 'invalid_payload', clientBetId };
  const { side, amountMicro } = payload;
  // D18: a number is accepted only as a safe integer and converted at once
  const amount = parseStakeMicro(amountMicro);
  if (amount === null) return { ok: false, reason: 'invalid_payload', clientBetId };
  return { ok: true, request: { side, amountMicro: amount, clientBetId: payload.clientBetId ?? undefined } };
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

// D33 recent_rounds takes nothing: no payload, or an empty object
export const isRecentRoundsRequest = (payload: unknown): boolean =>
  payload === undefined || payload === null || (typeof payload === 'object' && !Array.isArray(payload) && Object.keys(payload).length === 0);
