import { MICRO_AMOUNT_PATTERN } from '../../shared/domain/money.js';
import { invalidRequest } from '../../shared/platform/errors.js';
import { decodeCursor, type ListingPosition } from '../../shared/game/reports/cursor.js';
import { objectSchema, orNull, type Schema } from '../../shared/platform/json-schema.js';
import type { ProfileView } from '../../shared/domain/jurisdictions.js';
export { objectSchema, orNull, type Schema };

// Schema pieces shared by the request and response schemas of the API (and the OpenAPI
// document generated from them, src/api/openapi.ts).

// contract 2.1 Uuid. Path ids are matched case-insensitively and compared lower-cased.
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID = new RegExp(UUID_PATTERN);
export const isUuid = (text: string): boolean => UUID.test(text);

export const uuid = { type: 'string', format: 'uuid' } as const;
export const instant = { type: 'string', format: 'date-time' } as const;
// contract 2.1 MicroAmount (D9: at most 20 digits; D18: money is a string on the wire)
export const microAmount = { type: 'string', pattern: MICRO_AMOUNT_PATTERN, description: 'decimal integer micro-units (contract 2.1)' } as const;
// D2: SHA-256 hex
export const sha256Hex = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;

// a path parameter that is a UUID; any other value is answered 404 like an unknown id
export const uuidPathParameter = {
  type: 'string',
  pattern: UUID_PATTERN,
  description: 'a UUID (any case); any other value is answered 404 like an unknown id',
} as const;


// D10: a listing's `cursor` parameter, as its nextCursor gave it; absent, the first page
export function listingCursor(cursor: string | undefined): ListingPosition | undefined {
  if (cursor === undefined) return undefined;
  const after = decodeCursor(cursor);
  if (!after) {
    throw invalidRequest('RS_ERROR_WRONG_TYPES', 'a field has the wrong type or format', [
      { path: '/cursor', keyword: 'format', message: 'must be a nextCursor returned by this endpoint' },
    ]);
  }
  return after;
}

// D44: the jurisdiction profile a session played under, as every read of its rounds names it
export const jurisdictionSchema = objectSchema<ProfileView>({
  code: { type: 'string', description: "the session's jurisdiction claim (contract 5.6)" },
  profile: { type: 'string', description: 'the profile applied: GB, DE, CA-ON, or default for a code without one (D44)' },
  rules: objectSchema<ProfileView['rules']>({
    minRoundMs: { type: 'integer', minimum: 0, description: 'the least time between two bets of the session' },
    autoplay: { type: 'boolean', description: 'whether autoplay is allowed (no game has any)' },
    realityCheckMinutes: orNull({ type: 'integer', minimum: 1, description: 'bets stop every N minutes of play until the player acknowledges a reality check; null: none' }),
    showElapsedTime: { type: 'boolean' },
    showNetPosition: { type: 'boolean' },
    maxStakeMicro: orNull({ ...microAmount, description: "the most one bet may debit in the session's currency; null: no bound" }),
  }),
});
