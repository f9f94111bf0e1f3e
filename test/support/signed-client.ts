import { sign as signWithKey, type KeyObject } from 'node:crypto';
import { SIGNATURE_HEADERS, canonicalString, sign } from '../../src/shared/wallet/signer.js';

// An operator backend, as a test sees it: signs requests per contract 5.1 (HMAC with the
// secret, or D34's RS256 / EdDSA with a private key), and lets a test break any part of the
// signing on purpose.

export type ApiKey = { kid: string; secret: string };
export type PrivateApiKey = { kid: string; alg: 'RS256' | 'EdDSA'; privateKey: KeyObject };

// contract 5.1 with D34: the base64 signature of the canonical string under the key
export function signFor(key: ApiKey | PrivateApiKey, method: string, path: string, timestamp: string, body: string | Buffer): string {
  if ('secret' in key) return sign(key.secret, method, path, timestamp, body);
  const canonical = Buffer.from(canonicalString(method, path, timestamp, body), 'utf8');
  return signWithKey(key.alg === 'RS256' ? 'sha256' : null, canonical, key.privateKey).toString('base64');
}

export type SignedRequestOptions = {
  // the exact bytes to send (default: JSON.stringify(body))
  rawBody?: string | Buffer;
  timestamp?: string | number;
  // sign something other than what is sent
  signPath?: string;
  signMethod?: string;
  signBody?: string | Buffer;
  signature?: string;
  omit?: ('keyId' | 'timestamp' | 'signature')[];
  headers?: Record<string, string>;
};

export type ApiResponse = { status: number; headers: Headers; body: any; text: string; bytes: Buffer };

export async function signedRequest(
  baseUrl: string,
  key: ApiKey | PrivateApiKey,
  method: string,
  path: string,
  body?: unknown,
  options: SignedRequestOptions = {},
): Promise<ApiResponse> {
  const bytes = options.rawBody ?? (body === undefined ? '' : JSON.stringify(body));
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const signature =
    options.signature ??
    signFor(key, options.signMethod ?? method, options.signPath ?? path.split('?')[0]!, timestamp, options.signBody ?? bytes);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  const omit = new Set(options.omit ?? []);
  if (!omit.has('keyId')) headers[SIGNATURE_HEADERS.keyId] = key.kid;
  if (!omit.has('timestamp')) headers[SIGNATURE_HEADERS.timestamp] = timestamp;
  if (!omit.has('signature')) headers[SIGNATURE_HEADERS.signature] = signature;
  const payload = typeof bytes === 'string' ? bytes : new Uint8Array(bytes);
  return send(`${baseUrl}${path}`, { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : payload });
}

export async function send(url: string, init: RequestInit): Promise<ApiResponse> {
  const response = await fetch(url, init);
  // the bytes as received (a binary answer: the dispute pack's ZIP, D32), and as text
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body, text, bytes };
}
