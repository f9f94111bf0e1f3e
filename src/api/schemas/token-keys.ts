import type { SigningJwk } from '../../shared/platform/signing-keys.js';
import { objectSchema, type Schema } from './common.js';

// GET /.well-known/jwks.json (D34): the session-token keys as a JWKS (RFC 7517, 7518, 8037)

type RsaJwk = Extract<SigningJwk, { kty: 'RSA' }>;
type OkpJwk = Extract<SigningJwk, { kty: 'OKP' }>;
const KID = { type: 'string', description: 'the key id a session token names in its header (kid)' } as const;

export const tokenJwksSchema: Schema = objectSchema<{ keys: SigningJwk[] }>({
  keys: {
    type: 'array',
    description:
      'the session-token signing keys: the current one and those retired by `rgs token-key rotate` less than 60 minutes ago (a token they ' +
      'signed may still be live); empty while SESSION_TOKEN_ALG has never been RS256 or EdDSA and `rgs migrate` ran without MASTER_KEY',
    items: {
      oneOf: [
        objectSchema<RsaJwk>({
          kty: { const: 'RSA' },
          kid: KID,
          n: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', description: 'the modulus, base64url (RFC 7518 6.3.1)' },
          e: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', description: 'the public exponent, base64url' },
          use: { const: 'sig' },
          alg: { const: 'RS256' },
        }),
        objectSchema<OkpJwk>({
          kty: { const: 'OKP' },
          crv: { const: 'Ed25519' },
          kid: KID,
          x: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', description: 'the raw 32-byte public key, base64url (RFC 8037)' },
          use: { const: 'sig' },
          alg: { const: 'EdDSA' },
        }),
      ],
    },
  },
});
