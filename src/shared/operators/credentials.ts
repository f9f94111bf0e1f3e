import { randomBytes } from 'node:crypto';
import type { Db } from '../db/client.js';
import type { CredentialKind } from '../db/generated/enums.js';
import { generateSecret, openWithDataKey, sealWithDataKey } from '../crypto/envelope.js';

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

// A kid's secret never changes, so it is opened once per process (every signed request
// and wallet call needs one). Callers check validity and revocation on the row first; a
// revoked row has no ciphertext left to open.
const revealed = new Map<string, string>();
const REVEALED_KEPT = 10_000;

export function revealSecret(masterKey: Buffer, row: CredentialRow): string {
  // the master key is part of the key: a secret opened under one is never handed out under another
  const cacheKey = `${masterKey.toString('hex')}:${row.kid}:${Buffer.from(row.wrappedDataKey).toString('base64')}`;
  const known = revealed.get(cacheKey);
  if (known !== undefined) return known;
  const secret = openWithDataKey(
    masterKey,
    { encryptedSecret: Buffer.from(row.encryptedSecret), wrappedDataKey: Buffer.from(row.wrappedDataKey) },
    associatedData(row.kid),
  );
  if (revealed.size >= REVEALED_KEPT) revealed.clear();
  revealed.set(cacheKey, secret);
  return secret;
}

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
    return open[0]?.kid ?? null;
  });
  return {
    kind: kind === 'API' ? 'api' : 'wallet',
    kid: minted.kid,
    secret: minted.secret,
    notBefore: now.toISOString(),
    previousKid: previous,
    previousNotAfter: previous ? previousNotAfter.toISOString() : null,
  };
}

// contract 5.3: revocation is an immediate hard kill; the row stays with its ciphertext zeroed.
export async function revokeCredential(db: Db, kid: string, now = new Date()) {
  const row = await db.credential.findUnique({ where: { kid } });
  if (!row) throw new CredentialError(`credential ${kid} does not exist`);
  const revoked = await db.credential.update({
    where: { kid },
    data: {
      revokedAt: row.revokedAt ?? now,
      encryptedSecret: new Uint8Array(row.encryptedSecret.length),
      wrappedDataKey: new Uint8Array(row.wrappedDataKey.length),
    },
  });
  return { kid, operatorId: revoked.operatorId, kind: revoked.kind === 'API' ? 'api' : 'wallet', revokedAt: revoked.revokedAt!.toISOString() };
}

export type ApiKeyLookup =
  | { kind: 'unknown' }
  | { kind: 'not_valid_now'; operatorId: string }
  | { kind: 'valid'; operatorId: string; secret: string };

// Inbound requests may only be signed with an API credential (contract 5.3).
export async function lookupApiKey(db: Db, masterKey: Buffer, kid: string, now = new Date()): Promise<ApiKeyLookup> {
  const row = await db.credential.findUnique({ where: { kid } });
  if (!row || row.kind !== 'API') return { kind: 'unknown' };
  if (!isValidAt(row, now)) return { kind: 'not_valid_now', operatorId: row.operatorId };
  return { kind: 'valid', operatorId: row.operatorId, secret: revealSecret(masterKey, row) };
}

// Outbound wallet calls are signed with the newest valid WALLET credential (D6).
export async function currentWalletCredential(db: Db, masterKey: Buffer, operatorId: string, now = new Date()) {
  const rows = await db.credential.findMany({
    where: { operatorId, kind: 'WALLET', revokedAt: null, notBefore: { lte: now } },
    orderBy: { notBefore: 'desc' },
  });
  const row = rows.find((r) => isValidAt(r, now));
  if (!row) return undefined;
  return { kid: row.kid, secret: revealSecret(masterKey, row) };
}

export class CredentialError extends Error {
  override name = 'CredentialError';
}
