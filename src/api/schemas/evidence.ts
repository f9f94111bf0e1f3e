import { PACK_FILES, type PublicJwk, type Jwks } from '../../shared/domain/dispute-pack.js';
import { objectSchema, orNull, type Schema } from './common.js';

// The answers of the dispute pack (D32) and of the service's public keys: a ZIP, described
// here, and a JWKS (RFC 7517, 8037).

export const disputePackSchema: Schema = {
  type: 'string',
  contentMediaType: 'application/zip',
  description:
    'A ZIP archive: manifest.json ({packVersion, roundId, operatorId, createdAt, signingKeyId, files: [{name, sha256}]}), manifest.sig (the ' +
    `base64 Ed25519 signature of manifest.json's bytes, under the key signingKeyId of GET /v1/keys) and the files ${PACK_FILES.join(', ')} ` +
    '(D32, docs/dispute-pack.md). `rgs verify-pack` checks it offline.',
};

export const jwksSchema = objectSchema<Jwks>({
  keys: {
    type: 'array',
    description:
      'every dispute-pack signing key: the current one, those retired by a rotation and those revoked (D32). A pack is valid under a key only ' +
      'if its manifest createdAt is at or after the key\'s createdAt and before its retiredAt, and the key is not revoked.',
    items: objectSchema<PublicJwk>({
      kty: { const: 'OKP' },
      crv: { const: 'Ed25519' },
      kid: { type: 'string', description: 'the key id a pack manifest names as signingKeyId' },
      x: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', description: 'the raw 32-byte public key, base64url (RFC 8037)' },
      use: { const: 'sig' },
      alg: { const: 'EdDSA' },
      createdAt: { type: 'string', format: 'date-time', description: 'when the key was made: it signs no pack made before' },
      retiredAt: orNull({ type: 'string', format: 'date-time', description: 'when a rotation retired it: it signs no pack made from then on; null while current' }),
      revokedAt: orNull({
        type: 'string',
        format: 'date-time',
        description: 'when it was revoked (believed leaked): no pack it signed is valid, whatever its date; null unless revoked',
      }),
    }),
  },
});
