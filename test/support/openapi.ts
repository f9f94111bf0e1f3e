import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { MAX_MICRO } from '../../src/shared/domain/money.js';

// The OpenAPI document as a client sees it (docs/openapi.json), and its schemas compiled as
// the JSON Schema 2020-12 that OpenAPI 3.1 says they are, with a validator that is not the
// service's own (a strict Ajv2020, not src/shared/platform/validation.ts).

type Json = Record<string, any>;

export const COMMITTED_DOCUMENT_PATH = new URL('../../docs/openapi.json', import.meta.url);
export const committedDocument = (): Json => JSON.parse(readFileSync(COMMITTED_DOCUMENT_PATH, 'utf8'));

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// `closed`: every object with `properties` also gets `unevaluatedProperties: false`, so that
// a field the document does not describe fails (the document itself leaves objects open, as
// an API may add fields)
export function schemaCompiler(document: Json, options: { closed: boolean }) {
  const ajv = new Ajv2020({ strict: true, allErrors: true, strictRequired: false });
  addFormats(ajv);
  // the document's custom format (D18): a decimal integer that fits a BIGINT
  ajv.addFormat('int64-string', { type: 'string', validate: (v: string) => !/^-?[0-9]+$/.test(v) || (BigInt(v) >= -MAX_MICRO - 1n && BigInt(v) <= MAX_MICRO) });
  // OpenAPI's own keyword, an annotation here (ajv does not implement its `mapping`)
  ajv.addVocabulary(['discriminator']);
  const rewrite = (schema: unknown): unknown => {
    if (Array.isArray(schema)) return schema.map(rewrite);
    if (!schema || typeof schema !== 'object') return schema;
    const out: Json = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' && typeof value === 'string') out[key] = value.replace('#/components/schemas/', 'components#/$defs/');
      else if (key === 'properties' || key === '$defs') out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, rewrite(v)]));
      else if (key === 'discriminator') out[key] = value;
      else out[key] = rewrite(value);
    }
    if (options.closed && out.properties && out.unevaluatedProperties === undefined) out.unevaluatedProperties = false;
    return out;
  };
  ajv.addSchema({ $id: 'components', $defs: rewrite(document.components?.schemas ?? {}) });
  const compiled = new Map<unknown, ValidateFunction>();
  return (schema: unknown): ValidateFunction => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(rewrite(schema) as Json);
      compiled.set(schema, validate);
    }
    return validate;
  };
}

// the operation of a method and a concrete path (`/v1/rounds/abc/proof`) in the document
export function operationOf(document: Json, method: string, path: string): { template: string; operation: Json } {
  const bare = path.split('?')[0]!;
  for (const [template, item] of Object.entries(document.paths as Json)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const operation = (item as Json)[method.toLowerCase()];
    if (pattern.test(bare) && operation) return { template, operation };
  }
  throw new Error(`the document has no operation ${method} ${bare}`);
}
