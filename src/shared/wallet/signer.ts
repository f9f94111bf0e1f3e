import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

// Request signing, both directions (contract 5.1). The HMAC key is the UTF-8 text of the
// secret exactly as issued (D6).

export const SIGNATURE_HEADERS = {
  keyId: 'x-rgs-key-id',
  timestamp: 'x-rgs-timestamp',
  signature: 'x-rgs-signature',
} as const;

export const sha256Hex = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

// contract 5.1: METHOD LF PATH LF TIMESTAMP LF SHA256_HEX(BODY)
export function canonicalString(method: string, path: string, timestamp: string, body: Buffer | string): string {
  return `${method.toUpperCase()}\n${path}\n${timestamp}\n${sha256Hex(body)}`;
}

export function sign(secret: string, method: string, path: string, timestamp: string, body: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(canonicalString(method, path, timestamp, body))
    .digest('base64');
}

// contract 5.2 step 5: constant-time comparison of the decoded MACs.
export function signatureMatches(expectedBase64: string, presented: string): boolean {
  const expected = Buffer.from(expectedBase64, 'base64');
  const actual = Buffer.from(presented, 'base64');
  if (actual.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(expected, actual);
}

export type SignedHeaders = Record<(typeof SIGNATURE_HEADERS)[keyof typeof SIGNATURE_HEADERS], string>;

export function signedHeaders(
  keyId: string,
  secret: string,
  method: string,
  path: string,
  body: Buffer | string,
  nowSeconds = Math.floor(Date.now() / 1000),
): SignedHeaders {
  const timestamp = String(nowSeconds);
  return {
    [SIGNATURE_HEADERS.keyId]: keyId,
    [SIGNATURE_HEADERS.timestamp]: timestamp,
    [SIGNATURE_HEADERS.signature]: sign(secret, method, path, timestamp, body),
  };
}
