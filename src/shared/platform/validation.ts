import { Ajv, type ErrorObject, type JSONSchemaType, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { MAX_MICRO } from '../domain/money.js';
import { invalidRequest, type ValidationDetail } from './errors.js';

// One ajv instance for every inbound body. Unknown fields are removed before the handler
// sees them (D9: ignored, never echoed); no type coercion: "100" is not 100.
const ajv = new Ajv({ allErrors: true, removeAdditional: 'all', useDefaults: false, coerceTypes: false, strict: true });
const addFormats = addFormatsModule as unknown as (instance: Ajv, formats: string[]) => Ajv;
addFormats(ajv, ['uuid', 'uri', 'date-time']);
// D18: an integer amount held in a BIGINT column; any other string is left to `pattern`
ajv.addFormat('int64-string', {
  type: 'string',
  validate: (value: string) => !/^-?[0-9]+$/.test(value) || (BigInt(value) >= -MAX_MICRO - 1n && BigInt(value) <= MAX_MICRO),
});

export function compile<T>(schema: JSONSchemaType<T>): ValidateFunction<T> {
  return ajv.compile(schema);
}

// D3: a missing required field is RS_ERROR_WRONG_SYNTAX; a wrong type or pattern is
// RS_ERROR_WRONG_TYPES. Details name paths and rules, never the values sent.
export function toInvalidRequest(errors: ErrorObject[]) {
  const details: ValidationDetail[] = errors.map((error) => ({
    path:
      error.keyword === 'required'
        ? `${error.instancePath}/${(error.params as { missingProperty: string }).missingProperty}`
        : error.instancePath || '/',
    keyword: error.keyword,
    message: error.message ?? 'is invalid',
  }));
  const missing = errors.some((error) => error.keyword === 'required');
  return invalidRequest(
    missing ? 'RS_ERROR_WRONG_SYNTAX' : 'RS_ERROR_WRONG_TYPES',
    missing ? 'a required field is missing' : 'a field has the wrong type or format',
    details,
  );
}

// Free text that is stored (a row, an idempotency entry, D17) or sent to the wallet as given:
// no NUL (Postgres text and jsonb cannot hold it) and no lone surrogate (it would not survive
// UTF-8 unchanged); refused at the edge, before any statement runs (D24)
export const STORABLE_TEXT = '^[^\\u0000\\uD800-\\uDFFF]*$';

// contract 2.1, D9: a playerRef is the operator's opaque id, 1 to 128 characters of storable
// text, never an e-mail address or a phone number. The launch (contract 2.2) and the free-bet
// grants (D42) read it alike.
export const PLAYER_REF_MAX_LENGTH = 128;
export const EMAIL_LIKE = '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$';
export const PHONE_LIKE = '^\\+?[0-9 ()-]{7,}$';
export const playerRefSchema = {
  type: 'string',
  minLength: 1,
  maxLength: PLAYER_REF_MAX_LENGTH,
  pattern: STORABLE_TEXT,
  description: "the operator's opaque player id; never an e-mail address or a phone number (contract 2.1, D9)",
  allOf: [{ not: { type: 'string', pattern: EMAIL_LIKE } }, { not: { type: 'string', pattern: PHONE_LIKE } }],
} as const;
// as ajv reads them: patterns with the u flag, lengths in code points
const PLAYER_REF_RULES = [new RegExp(EMAIL_LIKE, 'u'), new RegExp(PHONE_LIKE, 'u')];
const STORABLE = new RegExp(STORABLE_TEXT, 'u');
// the same rules as playerRefSchema, for a playerRef read elsewhere than a JSON body (a file)
export function isPlayerRef(text: string): boolean {
  const length = [...text].length;
  return length >= 1 && length <= PLAYER_REF_MAX_LENGTH && STORABLE.test(text) && !PLAYER_REF_RULES.some((rule) => rule.test(text));
}
