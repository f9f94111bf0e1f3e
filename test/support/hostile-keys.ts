import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

// Keys no RS256 credential may verify with (D34, D24), as a hostile operator would publish
// them. An RSA public key of exponent n - 2: odd and valid, and as dear to use as a private
// exponent, so that each verification with it costs what a signature does.
export function hugeExponentKey(modulusLength = 3072): KeyObject {
  const jwk = generateKeyPairSync('rsa', { modulusLength }).publicKey.export({ format: 'jwk' });
  const n = BigInt(`0x${Buffer.from(jwk.n!, 'base64url').toString('hex')}`);
  const hex = (n - 2n).toString(16);
  const e = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex').toString('base64url');
  return createPublicKey({ key: { kty: 'RSA', n: jwk.n!, e }, format: 'jwk' });
}

// an RSA key under the 2048 bits of RFC 7518 3.3
export const shortRsaKey = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
