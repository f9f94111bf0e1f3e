import { createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { openWithDataKey, rewrapDataKey, sealWithDataKey, type Rewrapped } from './crypto.js';
import type { Queryable } from './db/sql.js';

// The service's own signing keys (D32; table signing_keys). A key pair is Ed25519; its
// private key is sealed like a credential's secret (contract 5.3): encrypted under a data key
// of its own that MASTER_KEY wraps, bound to its kid. One key of a purpose is current (the
// partial unique index signing_keys_one_current_per_purpose); a rotation retires it and
// makes a new one, and retired keys stay published so that what they signed still verifies.
//
// Purposes: 'pack' signs dispute packs (D32). The key exists from `rgs migrate` on (D38).

export type SigningPurpose = 'pack';
export const PACK_KEY: SigningPurpose = 'pack';

const ALGORITHM = 'EdDSA';
const KID_PREFIX: Record<SigningPurpose, string> = { pack: 'pk_' };
const associatedData = (kid: string) => `signing-key:${kid}`;

export type PublishedKey = { kid: string; purpose: string; x: string; createdAt: Date; retiredAt: Date | null };

type KeyRow = { kid: string; public_key: string; encrypted_private_key: Buffer; wrapped_data_key: Buffer };

// A new key pair, its private key sealed (PKCS#8 DER, base64, under MASTER_KEY)
function newKey(masterKey: Buffer, purpose: SigningPurpose) {
  const kid = KID_PREFIX[purpose] + randomBytes(12).toString('hex');
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  // RFC 8037: the JWK's x is the raw public key, base64url
  const x = publicKey.export({ format: 'jwk' }).x!;
  const sealed = sealWithDataKey(masterKey, privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'), associatedData(kid));
  return [kid, purpose, ALGORITHM, x, sealed.encryptedSecret, sealed.wrappedDataKey];
}

const INSERT = `INSERT INTO signing_keys (kid, purpose, algorithm, public_key, encrypted_private_key, wrapped_data_key) VALUES ($1, $2, $3, $4, $5, $6)`;

// D38: a current key of the purpose, made when there is none. Safe to run concurrently: the
// partial unique index lets one insert win, the others do nothing. Returns the current kid
// and whether this call made it.
export async function ensureSigningKey(db: Queryable, masterKey: Buffer, purpose: SigningPurpose): Promise<{ kid: string; created: boolean }> {
  const inserted = await db.query<{ kid: string }>(
    `${INSERT} ON CONFLICT (purpose) WHERE retired_at IS NULL DO NOTHING RETURNING kid`,
    newKey(masterKey, purpose),
  );
  if (inserted[0]) return { kid: inserted[0].kid, created: true };
  const [current] = await db.query<{ kid: string }>(`SELECT kid FROM signing_keys WHERE purpose = $1 AND retired_at IS NULL`, [purpose]);
  if (!current) throw new Error(`no current ${purpose} signing key, and none could be made`);
  return { kid: current.kid, created: false };
}

// `rgs signing-key rotate`: the current key retired (still published), a new one current, in
// one transaction; concurrent rotations queue on a transaction lock, each retiring the key
// the one before it made.
export async function rotateSigningKey(
  transaction: <T>(work: (tx: Queryable) => Promise<T>) => Promise<T>,
  masterKey: Buffer,
  purpose: SigningPurpose,
): Promise<{ purpose: SigningPurpose; kid: string; retiredKid: string | null; retiredAt: string | null }> {
  return transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('signing_keys:' || $1::text))`, [purpose]);
    const retired = await tx.query<{ kid: string; retired_at: Date }>(
      `UPDATE signing_keys SET retired_at = now() WHERE purpose = $1 AND retired_at IS NULL RETURNING kid, retired_at`,
      [purpose],
    );
    const [made] = await tx.query<{ kid: string }>(`${INSERT} RETURNING kid`, newKey(masterKey, purpose));
    return { purpose, kid: made!.kid, retiredKid: retired[0]?.kid ?? null, retiredAt: retired[0]?.retired_at.toISOString() ?? null };
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

// The current key of the purpose, opened; made first when there is none (a database
// migrated without MASTER_KEY, as the tests' and the demo's are).
export async function currentSigningKey(db: Queryable, masterKey: Buffer, purpose: SigningPurpose): Promise<{ kid: string; privateKey: KeyObject }> {
  const select = () =>
    db.query<KeyRow>(
      `SELECT kid, public_key, encrypted_private_key, wrapped_data_key FROM signing_keys WHERE purpose = $1 AND retired_at IS NULL`,
      [purpose],
    );
  let [row] = await select();
  if (!row) {
    await ensureSigningKey(db, masterKey, purpose);
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
  return { kid: row.kid, privateKey };
}

// Every key of the purpose, current and retired, oldest first (GET /v1/keys)
export async function publishedKeys(db: Queryable, purpose: SigningPurpose): Promise<PublishedKey[]> {
  const rows = await db.query<{ kid: string; purpose: string; public_key: string; created_at: Date; retired_at: Date | null }>(
    `SELECT kid, purpose, public_key, created_at, retired_at FROM signing_keys WHERE purpose = $1 ORDER BY created_at, kid`,
    [purpose],
  );
  return rows.map((row) => ({ kid: row.kid, purpose: row.purpose, x: row.public_key, createdAt: row.created_at, retiredAt: row.retired_at }));
}

// `rgs master-key rewrap` (D25): a key's data key moves under `to`, its sealed private key
// stays as it is (envelope encryption, as for a credential)
export const rewrapSigningKey = (from: Buffer, to: Buffer, row: { kid: string; encryptedPrivateKey: Buffer; wrappedDataKey: Buffer }): Rewrapped =>
  rewrapDataKey(from, to, { encryptedSecret: row.encryptedPrivateKey, wrappedDataKey: row.wrappedDataKey }, associatedData(row.kid));
