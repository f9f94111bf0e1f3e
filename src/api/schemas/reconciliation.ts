import type { JSONSchemaType, ValidateFunction } from 'ajv';
import { invalidRequest } from '../../platform/errors.js';
import { decodeCursor, type ListingPosition } from '../../game/reports/cursor.js';
import { compile, toInvalidRequest } from '../../platform/validation.js';

// Query strings of the reconciliation reads (D10). Every value arrives as text, and a
// repeated parameter as a list, which is a wrong type. Unknown parameters are dropped (D9).
// D3: anything invalid is 400 invalid_request with RS_ERROR_WRONG_TYPES.

type QueryText = Record<string, string | string[] | undefined>;

type OperatorQuery = { operatorId?: string };
type RangeQuery = OperatorQuery & { from?: string; to?: string };
type ListQuery = RangeQuery & { cursor?: string; limit?: string };

const operatorId = { type: 'string', minLength: 1, maxLength: 64, nullable: true } as const;
const instant = { type: 'string', format: 'date-time', nullable: true } as const;

const roundQuerySchema: JSONSchemaType<OperatorQuery> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: { operatorId },
};

const reportQuerySchema: JSONSchemaType<RangeQuery> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: { operatorId, from: instant, to: instant },
};

const listQuerySchema: JSONSchemaType<ListQuery> = {
  type: 'object',
  additionalProperties: false,
  required: [],
  properties: {
    operatorId,
    from: instant,
    to: instant,
    cursor: { type: 'string', minLength: 1, maxLength: 200, nullable: true },
    // D10: an integer 1..500
    limit: { type: 'string', pattern: '^([1-9][0-9]?|[1-4][0-9]{2}|500)$', nullable: true },
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
