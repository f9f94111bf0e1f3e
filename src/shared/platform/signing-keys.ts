import { createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { openWithDataKey, rewrapDataKey, sealWithDataKey, type Rewrapped } from './crypto.js';
import type { Queryable } from './db/sql.js';

// The service's own signing keys (D32; table signing_keys). A key pair is Ed25519; its
// private key is sealed like a credential's secret (contract 5.3): encrypted under a data key
// of its own that MASTER_KEY wraps, bound to its kid. One key of a purpose is current (the
// partial unique index signing_keys_one_current_per_purpose); a rotation retires it and
// makes a new one, and retired keys stay published so that what they signed still verifies.
// A revoked key (believed leaked) is retired too and proves nothing any more, whatever the
// date its signature claims (D32): pack keys stay published with their revokedAt, so that a
// verifier can say why it refuses; token keys stop being published and verifying (D34).
//
// Purposes: 'pack' signs dispute packs (D32), always Ed25519; 'token' signs session tokens
// when SESSION_TOKEN_ALG is RS256 or EdDSA (D34), with a key of that algorithm. Both exist
// from `rgs migrate` on (D38).
//
// public_key holds the JWK "x" of an EdDSA key (RFC 8037) and, of an RS256 key, the public
// JWK's members {"n","e"} as JSON (RFC 7518 6.3.1).

export type SigningPurpose = 'pack' | 'token';
export const PACK_KEY: SigningPurpose = 'pack';
export const TOKEN_KEY: SigningPurpose = 'token';

export const SIGNING_ALGORITHMS = ['EdDSA', 'RS256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];
const KID_PREFIX: Record<SigningPurpose, string> = { pack: 'pk_', token: 'tk_' };
const associatedData = (kid: string) => `signing-key:${kid}`;

export type PublishedKey = {
  kid: string;
  purpose: string;
  algorithm: SigningAlgorithm;
  publicKey: string;
  createdAt: Date;
  retiredAt: Date | null;
  revokedAt: Date | null;
};

// A public key as a JWK (RFC 7517), with the members a verifier selects it by
export type SigningJwk =
  | { kty: 'OKP'; crv: 'Ed25519'; kid: string; x: string; use: 'sig'; alg: 'EdDSA' }
  | { kty: 'RSA'; kid: string; n: string; e: string; use: 'sig'; alg: 'RS256' };

export function jwkOf(key: Pick<PublishedKey, 'kid' | 'algorithm' | 'publicKey'>): SigningJwk {
  if (key.algorithm === 'RS256') {
    const { n, e } = JSON.parse(key.publicKey) as { n: string; e: string };
    return { kty: 'RSA', kid: key.kid, n, e, use: 'sig', alg: 'RS256' };
  }
  return { kty: 'OKP', crv: 'Ed25519', kid: key.kid, x: key.publicKey, use: 'sig', alg: 'EdDSA' };
}

type KeyRow = { kid: string; algorithm: SigningAlgorithm; public_key: string; encrypted_private_key: Buffer; wrapped_data_key: Buffer };

// A new key pair, its private key sealed (PKCS#8 DER, base64, under MASTER_KEY)
function newKey(masterKey: Buffer, purpose: SigningPurpose, algorithm: SigningAlgorithm) {
  const kid = KID_PREFIX[purpose] + randomBytes(12).toString('hex');
  const { publicKey, privateKey } = algorithm === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  const stored = algorithm === 'RS256' ? JSON.stringify({ n: jwk.n, e: jwk.e }) : jwk.x!;
  const sealed = sealWithDataKey(masterKey, privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'), associatedData(kid));
  return [kid, purpose, algorithm, stored, sealed.encryptedSecret, sealed.wrappedDataKey];
}

const INSERT = `INSERT INTO signing_keys (kid, purpose, algorithm, public_key, encrypted_private_key, wrapped_data_key) VALUES ($1, $2, $3, $4, $5, $6)`;

// D38: a current key of the purpose, made (of `algorithm`) when there is none. Safe to run
// concurrently: the partial unique index lets one insert win, the others do nothing. Returns
// the current kid, its algorithm (that of a key made earlier may differ) and whether this
// call made it.
export async function ensureSigningKey(
  db: Queryable,
  masterKey: Buffer,
  purpose: SigningPurpose,
  algorithm: SigningAlgorithm = 'EdDSA',
): Promise<{ kid: string; algorithm: SigningAlgorithm; created: boolean }> {
  const inserted = await db.query<{ kid: string }>(
    `${INSERT} ON CONFLICT (purpose) WHERE retired_at IS NULL DO NOTHING RETURNING kid`,
    newKey(masterKey, purpose, algorithm),
  );
  if (inserted[0]) return { kid: inserted[0].kid, algorithm, created: true };
  const [current] = await db.query<{ kid: string; algorithm: SigningAlgorithm }>(
    `SELECT kid, algorithm FROM signing_keys WHERE purpose = $1 AND retired_at IS NULL`,
    [purpose],
  );
  if (!current) throw new Error(`no current ${purpose} signing key, and none could be made`);
  return { kid: current.kid, algorithm: current.algorithm, created: false };
}

// `rgs signing-key rotate`: the current key retired (still published), a new one current, in
// one transaction; concurrent rotations queue on a transaction lock, each retiring the key
// the one before it made.
export async function rotateSigningKey(
  transaction: <T>(work: (tx: Queryable) => Promise<T>) => Promise<T>,
  masterKey: Buffer,
  purpose: SigningPurpose,
  algorithm: SigningAlgorithm = 'EdDSA',
): Promise<{ purpose: SigningPurpose; kid: string; algorithm: SigningAlgorithm; retiredKid: string | null; retiredAt: string | null }> {
  return transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('signing_keys:' || $1::text))`, [purpose]);
    const retired = await tx.query<{ kid: string; retired_at: Date }>(
      `UPDATE signing_keys SET retired_at = now() WHERE purpose = $1 AND retired_at IS NULL RETURNING kid, retired_at`,
      [purpose],
    );
    const [made] = await tx.query<{ kid: string }>(`${INSERT} RETURNING kid`, newKey(masterKey, purpose, algorithm));
    return { purpose, kid: made!.kid, algorithm, retiredKid: retired[0]?.kid ?? null, retiredAt: retired[0]?.retired_at.toISOString() ?? null };
  });
}

export class SigningKeyNotFoundError extends Error {
  override name = 'SigningKeyNotFoundError';
}

// `rgs signing-key revoke` (D32): the key is revoked and retired at once, so it stops signing.
// When it was the current key a new one is made in the same transaction (of `algorithm`): a
// leaked key is revoked in one step, and the purpose is never left without a current key.
// Revoking a revoked key changes nothing and answers as the first time.
export async function revokeSigningKey(
  transaction: <T>(work: (tx: Queryable) => Promise<T>) => Promise<T>,
  masterKey: Buffer,
  purpose: SigningPurpose,
  kid: string,
  algorithm: SigningAlgorithm = 'EdDSA',
): Promise<{ purpose: SigningPurpose; revokedKid: string; revokedAt: string; retiredAt: string; kid: string | null }> {
  return transaction(async (tx) => {
    // queued behind a rotation of the same purpose, as rotations queue behind each other
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('signing_keys:' || $1::text))`, [purpose]);
    const [before] = await tx.query<{ retired_at: Date | null }>(`SELECT retired_at FROM signing_keys WHERE kid = $1 AND purpose = $2 FOR UPDATE`, [kid, purpose]);
    if (!before) throw new SigningKeyNotFoundError(`there is no ${purpose} signing key ${kid}`);
    const [revoked] = await tx.query<{ revoked_at: Date; retired_at: Date }>(
      `UPDATE signing_keys SET revoked_at = coalesce(revoked_at, now()), retired_at = coalesce(retired_at, now()) WHERE kid = $1 RETURNING revoked_at, retired_at`,
      [kid],
    );
    const made = before.retired_at === null ? (await tx.query<{ kid: string }>(`${INSERT} RETURNING kid`, newKey(masterKey, purpose, algorithm)))[0]!.kid : null;
    return { purpose, revokedKid: kid, revokedAt: revoked!.revoked_at.toISOString(), retiredAt: revoked!.retired_at.toISOString(), kid: made };
  });
}

// A sealed private key opened under another MASTER_KEY fails; its callers answer a refusal
// of their own rather than sign with nothing.
export class SigningKeyUnreadableError extends Error {
  override name = 'SigningKeyUnreadableError';
  constructor(readonly kid: string) {
    super(`signing key ${kid} cannot be decrypted with this process's MASTER_KEY`);
  }
}

// A kid's key never changes: opened once per process
const opened = new Map<string, KeyObject>();

// The current key of the purpose, opened; made first (of `algorithm`) when there is none (a
// database migrated without MASTER_KEY, as the tests' and the demo's are).
export async function currentSigningKey(
  db: Queryable,
  masterKey: Buffer,
  purpose: SigningPurpose,
  algorithm: SigningAlgorithm = 'EdDSA',
): Promise<{ kid: string; algorithm: SigningAlgorithm; privateKey: KeyObject; createdAt: Date }> {
  const select = () =>
    db.query<KeyRow & { created_at: Date }>(
      `SELECT kid, algorithm, public_key, encrypted_private_key, wrapped_data_key, created_at FROM signing_keys WHERE purpose = $1 AND retired_at IS NULL`,
      [purpose],
    );
  let [row] = await select();
  if (!row) {
    await ensureSigningKey(db, masterKey, purpose, algorithm);
    [row] = await select();
  }
  if (!row) throw new Error(`no current ${purpose} signing key`);
  const cacheKey = `${masterKey.toString('hex')}:${row.kid}`;
  let privateKey = opened.get(cacheKey);
  if (!privateKey) {
    try {
      const der = openWithDataKey(masterKey, { encryptedSecret: row.encrypted_private_key, wrappedDataKey: row.wrapped_data_key }, associatedData(row.kid));
      privateKey = createPrivateKey({ key: Buffer.from(der, 'base64'), format: 'der', type: 'pkcs8' });
    } catch {
      throw new SigningKeyUnreadableError(row.kid);
    }
    opened.set(cacheKey, privateKey);
  }
  return { kid: row.kid, algorithm: row.algorithm, privateKey, createdAt: row.created_at };
}

type PublishedRow = {
  kid: string;
  purpose: string;
  algorithm: SigningAlgorithm;
  public_key: string;
  created_at: Date;
  retired_at: Date | null;
  revoked_at: Date | null;
};
const published = (row: PublishedRow): PublishedKey => ({
  kid: row.kid,
  purpose: row.purpose,
  algorithm: row.algorithm,
  publicKey: row.public_key,
  createdAt: row.created_at,
  retiredAt: row.retired_at,
  revokedAt: row.revoked_at,
});

// Every key of the purpose, current, retired and revoked, oldest first (GET /v1/keys); with
// retiredWithinMs, only those current or retired less than that long ago (D34: a token key
// is published while a token it signed can still be live)
export async function publishedKeys(db: Queryable, purpose: SigningPurpose, retiredWithinMs?: number): Promise<PublishedKey[]> {
  const rows = await db.query<PublishedRow>(
    `SELECT kid, purpose, algorithm, public_key, created_at, retired_at, revoked_at FROM signing_keys
     WHERE purpose = $1 AND ($2::bigint IS NULL OR retired_at IS NULL OR retired_at > now() - $2::bigint * interval '1 millisecond')
     ORDER BY created_at, kid`,
    [purpose, retiredWithinMs ?? null],
  );
  return rows.map(published);
}

// `rgs master-key rewrap` (D25): a key's data key moves under `to`, its sealed private key
// stays as it is (envelope encryption, as for a credential)
export const rewrapSigningKey = (from: Buffer, to: Buffer, row: { kid: string; encryptedPrivateKey: Buffer; wrappedDataKey: Buffer }): Rewrapped =>
  rewrapDataKey(from, to, { encryptedSecret: row.encryptedPrivateKey, wrappedDataKey: row.wrappedDataKey }, associatedData(row.kid));
