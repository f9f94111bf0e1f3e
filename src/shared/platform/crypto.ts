import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// AES-256-GCM envelope encryption (contract 5.3): each secret is encrypted under its own
// random data key, and the data key is wrapped under MASTER_KEY. A sealed value is
// iv(12) | tag(16) | ciphertext. The associated data binds a ciphertext to its row, so a
// ciphertext copied onto another row does not decrypt.

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function seal(key: Buffer, plaintext: Buffer, associatedData: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

export function open(key: Buffer, sealed: Buffer, associatedData: string): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error('sealed value is too short');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

export type EnvelopeSealed = { encryptedSecret: Buffer; wrappedDataKey: Buffer };

export function sealWithDataKey(masterKey: Buffer, secret: string, associatedData: string): EnvelopeSealed {
  const dataKey = randomBytes(32);
  try {
    return {
      encryptedSecret: seal(dataKey, Buffer.from(secret, 'utf8'), associatedData),
      wrappedDataKey: seal(masterKey, dataKey, `${associatedData}:data-key`),
    };
  } finally {
    dataKey.fill(0);
  }
}

export function openWithDataKey(masterKey: Buffer, sealed: EnvelopeSealed, associatedData: string): string {
  const dataKey = open(masterKey, sealed.wrappedDataKey, `${associatedData}:data-key`);
  try {
    return open(dataKey, sealed.encryptedSecret, associatedData).toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

// D6: secrets are 64 random bytes issued as 128 lower-case hex characters.
export const generateSecret = (): string => randomBytes(64).toString('hex');

// A sealed value moved from one MASTER_KEY to another (`rgs master-key rewrap`, D25): left
// as it is when it already opens under the new key (a rerun), re-sealed when it opens under
// the old one, and unreadable when it opens under neither.
export type Rewrapped = { state: 'current' } | { state: 'rewrapped'; sealed: Buffer } | { state: 'unreadable' };

// An envelope keeps its secret's ciphertext and gets its data key wrapped under `to`. The
// secret is opened under `from` first, so that a row whose data key opens but whose secret
// does not (a corrupt row) is reported, never carried over.
export function rewrapDataKey(from: Buffer, to: Buffer, sealed: EnvelopeSealed, associatedData: string): Rewrapped {
  if (opens(() => openWithDataKey(to, sealed, associatedData))) return { state: 'current' };
  if (!opens(() => openWithDataKey(from, sealed, associatedData))) return { state: 'unreadable' };
  const dataKey = open(from, sealed.wrappedDataKey, `${associatedData}:data-key`);
  try {
    return { state: 'rewrapped', sealed: seal(to, dataKey, `${associatedData}:data-key`) };
  } finally {
    dataKey.fill(0);
  }
}

function opens(attempt: () => unknown): boolean {
  try {
    attempt();
    return true;
  } catch {
    return false;
  }
}
