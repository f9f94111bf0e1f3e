import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import type { Credential, Db, Operator, Prisma } from '../platform/db/client.js';
import { statement, type Sql } from '../platform/db/sql.js';
import type { CredentialKind } from '../platform/db/generated/enums.js';
import { recordEvent } from '../platform/outbox.js';
import { generateSecret, openWithDataKey, rewrapDataKey, sealWithDataKey, type Rewrapped } from '../platform/crypto.js';
import { walletUrlFormatProblem, walletUrlProductionProblem } from '../platform/address-policy.js';
import { rsaKeyProblem } from '../domain/rsa-keys.js';

// Operator credentials (contract 5.3, DECISIONS D6, D11). API credentials sign the
// operator's requests to us; WALLET credentials sign our calls to the operator's wallet.

export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000; // contract 5.3: notAfter = now + 24 h

const KID_PREFIX: Record<CredentialKind, string> = { API: 'ak_', WALLET: 'wk_' };
const associatedData = (kid: string) => `credential:${kid}`;

export const newKid = (kind: CredentialKind): string => KID_PREFIX[kind] + randomBytes(12).toString('hex');

type CredentialRow = {
  kid: string;
  notBefore: Date;
  notAfter: Date | null;
  revokedAt: Date | null;
  encryptedSecret: Uint8Array;
  wrappedDataKey: Uint8Array;
};

export const isValidAt = (row: Pick<CredentialRow, 'notBefore' | 'notAfter' | 'revokedAt'>, now: Date): boolean =>
  row.revokedAt === null && row.notBefore <= now && (row.notAfter === null || now <= row.notAfter);

// A credential sealed under another MASTER_KEY (a node started with the wrong key, a database
// restored from elsewhere) cannot be opened; callers turn this into their own refusal, so that
// it fails only that operator's request (D24), never a 500 or a batch of other operators.
export class CredentialUnreadableError extends Error {
  override name = 'CredentialUnreadableError';
  constructor(readonly kid: string) {
    super(`credential ${kid} cannot be decrypted with this process's MASTER_KEY`);
  }
}

// A kid's secret never changes, so it is opened once per process (every signed request
// and wallet call needs one). Callers check validity and revocation on the row first; a
// revoked row has no ciphertext left to open.
const revealed = new Map<string, string>();
const REVEALED_KEPT = 10_000;

export function revealSecret(masterKey: Buffer, row: Pick<CredentialRow, 'kid' | 'encryptedSecret' | 'wrappedDataKey'>): string {
  // the master key is part of the key: a secret opened under one is never handed out under another
  const cacheKey = `${masterKey.toString('hex')}:${row.kid}:${Buffer.from(row.wrappedDataKey).toString('base64')}`;
  const known = revealed.get(cacheKey);
  if (known !== undefined) return known;
  let secret: string;
  try {
    secret = openWithDataKey(
      masterKey,
      { encryptedSecret: Buffer.from(row.encryptedSecret), wrappedDataKey: Buffer.from(row.wrappedDataKey) },
      associatedData(row.kid),
    );
  } catch {
    throw new CredentialUnreadableError(row.kid);
  }
  if (revealed.size >= REVEALED_KEPT) revealed.clear();
  revealed.set(cacheKey, secret);
  return secret;
}

// MASTER_KEY rotation (`rgs master-key rewrap`, D25): the credential's data key is wrapped
// under `to`; its secret, and so the secret the operator holds, stays the same.
export const rewrapCredential = (
  from: Buffer,
  to: Buffer,
  row: Pick<CredentialRow, 'kid' | 'encryptedSecret' | 'wrappedDataKey'>,
): Rewrapped =>
  rewrapDataKey(from, to, { encryptedSecret: Buffer.from(row.encryptedSecret), wrappedDataKey: Buffer.from(row.wrappedDataKey) }, associatedData(row.kid));

export function sealedCredential(masterKey: Buffer, kind: CredentialKind, notBefore: Date) {
  const kid = newKid(kind);
  const secret = generateSecret();
  const sealed = sealWithDataKey(masterKey, secret, associatedData(kid));
  return {
    minted: { kid, secret, notBefore },
    data: {
      kid,
      kind,
      notBefore,
      encryptedSecret: new Uint8Array(sealed.encryptedSecret),
      wrappedDataKey: new Uint8Array(sealed.wrappedDataKey),
    },
  };
}

// D34: how an API credential's requests are signed. HS256 is an HMAC under the sealed secret
// (contract 5.1); RS256 and EdDSA are verified with the operator's public key, given as a PEM
// (public_key) or fetched from its key set (jwks_url). A credential accepts its own algorithm
// only (the allow-list of D34 has one entry).
export const CREDENTIAL_ALGS = ['HS256', 'RS256', 'EdDSA'] as const;
export type CredentialAlg = (typeof CREDENTIAL_ALGS)[number];
export type PublicKeyAlg = Exclude<CredentialAlg, 'HS256'>;

export type PublicKeySource = { publicKeyPem: string; jwksUrl?: undefined } | { jwksUrl: string; publicKeyPem?: undefined };

// The public key of a PEM credential, checked to be of the credential's algorithm: an RSA
// key of e = 65537 and 2048 to 4096 bits for RS256 (D34, D24: src/shared/domain/rsa-keys.ts), an
// Ed25519 key for EdDSA.
export function publicKeyOf(alg: PublicKeyAlg, pem: string): KeyObject {
  let key: KeyObject;
  // node derives the public key from a private one; the service must never be handed it
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) throw new CredentialError('this is a private key: give the public key (SPKI PEM) only, and keep the private key to the operator');
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new CredentialError('the public key is not a PEM public key (-----BEGIN PUBLIC KEY-----, SPKI)');
  }
  if (alg === 'RS256') {
    if (key.asymmetricKeyType !== 'rsa') throw new CredentialError(`an RS256 credential needs an RSA public key, not ${key.asymmetricKeyType}`);
    const problem = rsaKeyProblem(key.asymmetricKeyDetails);
    if (problem) throw new CredentialError(problem);
  } else if (key.asymmetricKeyType !== 'ed25519') {
    throw new CredentialError(`an EdDSA credential needs an Ed25519 public key, not ${key.asymmetricKeyType}`);
  }
  return key;
}

export type Addition = {
  kind: 'api';
  kid: string;
  alg: PublicKeyAlg;
  notBefore: string;
  previousKid: string | null;
  previousNotAfter: string | null;
};

// `rgs credential add` (D34, D38): an API credential verified with the operator's public key.
// It is a rotation (contract 5.3) like `credential rotate`: the operator's other open API
// credentials keep working for 24 hours, then stop. A key set URL follows the wallet URL's
// rules (D25), the operator's --wallet-url-private-allowed included: the service fetches it
// from inside its own network.
export async function addPublicKeyCredential(
  db: Db,
  operatorId: string,
  alg: PublicKeyAlg,
  source: PublicKeySource,
  { production, now = new Date() }: { production: boolean; now?: Date },
): Promise<Addition> {
  let publicKey: string | null = null;
  let jwksUrl: string | null = null;
  if (source.publicKeyPem !== undefined) {
    publicKey = publicKeyOf(alg, source.publicKeyPem).export({ type: 'spki', format: 'pem' }).toString();
  } else {
    const formatProblem = walletUrlFormatProblem(source.jwksUrl, 'JWKS URL');
    if (formatProblem) throw new CredentialError(formatProblem);
    if (production) {
      const operator = await db.operator.findUnique({ where: { id: operatorId }, select: { walletUrlPrivateAllowed: true } });
      const problem = await walletUrlProductionProblem(source.jwksUrl, operator?.walletUrlPrivateAllowed ?? false, 'JWKS URL');
      if (problem) throw new CredentialError(problem);
    }
    jwksUrl = source.jwksUrl;
  }
  const kid = newKid('API');
  // nothing of a public-key credential is secret: its sealed columns stay empty
  const data = { kid, kind: 'API' as const, alg, publicKey, jwksUrl, notBefore: now, encryptedSecret: new Uint8Array(0), wrappedDataKey: new Uint8Array(0) };
  const previous = await replaceCredentials(db, operatorId, 'API', data, now);
  return { kind: 'api', kid, alg, notBefore: now.toISOString(), ...previous };
}

export type Rotation = {
  kind: 'api' | 'wallet';
  kid: string;
  secret: string;
  notBefore: string;
  previousKid: string | null;
  previousNotAfter: string | null;
};

// contract 5.3 rotation: mint with notBefore = now; every older credential of the kind that
// is still open-ended keeps working until now + 24 h, then stops.
export async function rotateCredential(
  db: Db,
  masterKey: Buffer,
  operatorId: string,
  kind: CredentialKind,
  now = new Date(),
): Promise<Rotation> {
  const { minted, data } = sealedCredential(masterKey, kind, now);
  const { previousKid, previousNotAfter } = await replaceCredentials(db, operatorId, kind, data, now);
  return {
    kind: kind === 'API' ? 'api' : 'wallet',
    kid: minted.kid,
    secret: minted.secret,
    notBefore: now.toISOString(),
    previousKid,
    previousNotAfter,
  };
}

// The rotation itself (contract 5.3, D31), whatever the new credential holds
async function replaceCredentials(
  db: Db,
  operatorId: string,
  kind: CredentialKind,
  data: Omit<Prisma.CredentialUncheckedCreateInput, 'operatorId'>,
  now: Date,
): Promise<{ previousKid: string | null; previousNotAfter: string | null }> {
  const previousNotAfter = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  const previous = await db.$transaction(async (tx) => {
    const operator = await tx.operator.findUnique({ where: { id: operatorId }, select: { id: true } });
    if (!operator) throw new CredentialError(`operator ${operatorId} does not exist`);
    const open = await tx.credential.findMany({
      where: {
        operatorId,
        kind,
        revokedAt: null,
        OR: [{ notAfter: null }, { notAfter: { gt: previousNotAfter } }],
      },
      orderBy: { notBefore: 'desc' },
      select: { kid: true },
    });
    if (open.length > 0) {
      await tx.credential.updateMany({
        where: { kid: { in: open.map((c) => c.kid) } },
        data: { notAfter: previousNotAfter },
      });
    }
    await tx.credential.create({ data: { ...data, operatorId } });
    const previousKid = open[0]?.kid ?? null;
    // D31: reported in the transaction that rotates (the secret never leaves in an event)
    await recordEvent(tx, 'credential.rotated', operatorId, now, {
      kind: kind === 'API' ? 'api' : 'wallet',
      kid: data.kid,
      previousKid,
      previousNotAfter: previousKid ? previousNotAfter.toISOString() : null,
    });
    return previousKid;
  });
  return { previousKid: previous, previousNotAfter: previous ? previousNotAfter.toISOString() : null };
}

// contract 5.3: revocation is an immediate hard kill; the row stays with its ciphertext zeroed.
// D31: a first revocation is reported in its transaction; revoking again reports nothing.
export async function revokeCredential(db: Db, kid: string, now = new Date()) {
  const revoked = await db.$transaction(async (tx) => {
    const row = await tx.credential.findUnique({ where: { kid } });
    if (!row) throw new CredentialError(`credential ${kid} does not exist`);
    const updated = await tx.credential.update({
      where: { kid },
      data: {
        revokedAt: row.revokedAt ?? now,
        encryptedSecret: new Uint8Array(row.encryptedSecret.length),
        wrappedDataKey: new Uint8Array(row.wrappedDataKey.length),
      },
    });
    if (!row.revokedAt) await recordEvent(tx, 'credential.revoked', row.operatorId, now, { kid });
    return updated;
  });
  return { kid, operatorId: revoked.operatorId, kind: revoked.kind === 'API' ? 'api' : 'wallet', revokedAt: revoked.revokedAt!.toISOString() };
}

export class CredentialError extends Error {
  override name = 'CredentialError';
}

const CREDENTIAL_WITH_OPERATOR = statement(
  'credential_with_operator',
  `SELECT c.kid, c.operator_id, c.kind, c.alg, c.public_key, c.jwks_url, c.encrypted_secret, c.wrapped_data_key, c.not_before, c.not_after, c.revoked_at,
          c.created_at, o.wallet_url, o.wallet_url_private_allowed, o.currencies, o.ip_allow_list, o.jurisdictions_blocked, o.frame_ancestors, o.rg_maxima,
          o.jurisdiction_overrides, o.signature_window_seconds, o.suspended, o.sandbox, o.created_at AS operator_created_at, o.updated_at AS operator_updated_at
   FROM credentials c JOIN operators o ON o.id = c.operator_id
   WHERE c.kid = $1`,
);

type CredentialOperatorRow = {
  kid: string;
  operator_id: string;
  kind: CredentialKind;
  alg: string;
  public_key: string | null;
  jwks_url: string | null;
  encrypted_secret: Buffer;
  wrapped_data_key: Buffer;
  not_before: Date;
  not_after: Date | null;
  revoked_at: Date | null;
  created_at: Date;
  wallet_url: string;
  wallet_url_private_allowed: boolean;
  currencies: string[];
  ip_allow_list: string[];
  jurisdictions_blocked: string[];
  frame_ancestors: string[];
  rg_maxima: Prisma.JsonValue;
  jurisdiction_overrides: Prisma.JsonValue;
  signature_window_seconds: number;
  suspended: boolean;
  sandbox: boolean;
  operator_created_at: Date;
  operator_updated_at: Date;
};

// The credential an inbound request names (X-Rgs-Key-Id) with its operator, read afresh for
// every request (a revocation applies to the very next one, contract 5.3) by one statement.
export async function credentialWithOperator(sql: Sql, kid: string): Promise<(Credential & { operator: Operator }) | undefined> {
  const [row] = await sql.query<CredentialOperatorRow>(CREDENTIAL_WITH_OPERATOR, [kid]);
  if (!row) return undefined;
  return {
    kid: row.kid,
    operatorId: row.operator_id,
    kind: row.kind,
    alg: row.alg,
    publicKey: row.public_key,
    jwksUrl: row.jwks_url,
    encryptedSecret: new Uint8Array(row.encrypted_secret),
    wrappedDataKey: new Uint8Array(row.wrapped_data_key),
    notBefore: row.not_before,
    notAfter: row.not_after,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
    operator: {
      id: row.operator_id,
      walletUrl: row.wallet_url,
      walletUrlPrivateAllowed: row.wallet_url_private_allowed,
      currencies: row.currencies,
      ipAllowList: row.ip_allow_list,
      jurisdictionsBlocked: row.jurisdictions_blocked,
      frameAncestors: row.frame_ancestors,
      rgMaxima: row.rg_maxima,
      jurisdictionOverrides: row.jurisdiction_overrides,
      signatureWindowSeconds: row.signature_window_seconds,
      suspended: row.suspended,
      sandbox: row.sandbox,
      createdAt: row.operator_created_at,
      updatedAt: row.operator_updated_at,
    },
  };
}
