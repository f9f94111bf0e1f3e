// JSON Schema 2020-12 written by hand: the response schemas of the API and the wallet messages.
// They are documentation (the OpenAPI document, src/api/openapi.ts) and the yardstick of the
// contract tests; the service does not validate its own messages with them at run time.
export type Schema = { readonly [keyword: string]: unknown };

// An object: one schema per key of T, no more and no fewer (the compiler checks both), every
// field required unless T makes it optional and it is named in `optional`.
export function objectSchema<T>(
  properties: { [K in keyof T]-?: Schema },
  keywords: Schema = {},
  optional: readonly { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T][] = [],
): Schema {
  const required = Object.keys(properties).filter((name) => !(optional as readonly string[]).includes(name));
  return { type: 'object', ...keywords, required, properties };
}

// the same value, or null
export const orNull = (schema: Schema & { type: string }): Schema => ({ ...schema, type: [schema.type, 'null'] });
