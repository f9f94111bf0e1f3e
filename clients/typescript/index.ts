import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths, webhooks } from './schema.js';

// The RGS operator client: openapi-fetch typed by schema.d.ts (generated from the service's
// OpenAPI document), with every request signed as the service verifies it (contract 5.1,
// 5.2). It stands alone: nothing here comes from the service's sources, and the signing
// uses only WebCrypto, so it runs wherever a backend runs (Node 20, Deno, Bun). The secret
// signs an operator's backend requests: it never belongs in a browser.

export type { components, operations, paths, webhooks };
/** Every named schema of the document: `Schemas['Event.RoundSettled']`, `Schemas['Error.invalid_signature']`… */
export type Schemas = components['schemas'];
export type OperatorClient = Client<paths>;

export type OperatorClientOptions = {
  /** where the service is, e.g. `https://rgs.example` (no trailing path is needed) */
  baseUrl: string;
  /** the apiKeyId from onboarding */
  keyId: string;
  /** the apiSecret from onboarding: 128 hex characters, used as text, never hex-decoded (D6) */
  secret: string;
  /** a fetch of your own (a proxy agent, a test double); defaults to globalThis.fetch */
  fetch?: (input: Request) => Promise<Response>;
  /** the clock, in milliseconds since the epoch; defaults to Date.now */
  now?: () => number;
};

/** The three headers of contract 5.1, as the service writes them (names are case-insensitive). */
export const SIGNATURE_HEADERS = {
  keyId: 'x-rgs-key-id',
  timestamp: 'x-rgs-timestamp',
  signature: 'x-rgs-signature',
} as const;

const encoder = new TextEncoder();

const toBytes = (body: Uint8Array | string): Uint8Array<ArrayBuffer> =>
  typeof body === 'string' ? encoder.encode(body) : new Uint8Array(body);

const hex = (bytes: ArrayBuffer): string => Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('');

const base64 = (bytes: ArrayBuffer): string => btoa(String.fromCharCode(...new Uint8Array(bytes)));

/** contract 5.1: METHOD LF PATH LF TIMESTAMP LF lowercase_hex(SHA-256(body bytes)) */
export async function canonicalString(method: string, path: string, timestamp: string, body: Uint8Array | string): Promise<string> {
  const bodyHash = hex(await crypto.subtle.digest('SHA-256', toBytes(body)));
  return `${method.toUpperCase()}\n${path}\n${timestamp}\n${bodyHash}`;
}

/**
 * base64(HMAC-SHA256(secret, canonical)), the key being the UTF-8 text of the secret exactly
 * as issued (contract 5.1, D6). `path` is the absolute path without query string or host;
 * `body` the exact bytes sent ('' for none).
 */
export async function sign(secret: string, method: string, path: string, timestamp: string, body: Uint8Array | string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const canonical = await canonicalString(method, path, timestamp, body);
  return base64(await crypto.subtle.sign('HMAC', key, encoder.encode(canonical)));
}

/**
 * The middleware that signs each request just before it is sent: over the bytes the
 * request will carry (never a re-serialised copy, contract 5.2 step 3) and the path the
 * service reads, which excludes the query string (contract 5.1).
 */
export function signingMiddleware({ keyId, secret, now = Date.now }: Pick<OperatorClientOptions, 'keyId' | 'secret' | 'now'>): Middleware {
  return {
    async onRequest({ request }) {
      const body = new Uint8Array(await request.clone().arrayBuffer());
      const path = new URL(request.url).pathname;
      const timestamp = String(Math.floor(now() / 1000));
      request.headers.set(SIGNATURE_HEADERS.keyId, keyId);
      request.headers.set(SIGNATURE_HEADERS.timestamp, timestamp);
      request.headers.set(SIGNATURE_HEADERS.signature, await sign(secret, request.method, path, timestamp, body));
      return request;
    },
  };
}

/**
 * A typed client of the operator API with signing built in:
 *
 *     const rgs = createOperatorClient({ baseUrl, keyId, secret });
 *     const { data, error } = await rgs.POST('/v1/session', { body: { operatorId, ... } });
 *
 * Each call is signed afresh, so a retry of a POST (same body, same requestUuid, D17) made
 * in a later second gets the stored answer; the same second would sign the same bytes and
 * be refused as a replay (401 replayed_signature).
 */
export function createOperatorClient(options: OperatorClientOptions): OperatorClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), ...(options.fetch ? { fetch: options.fetch } : {}) });
  client.use(signingMiddleware(options));
  return client;
}
