import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { generateSecret, open, openWithDataKey, seal, sealWithDataKey } from '../../src/shared/platform/crypto.js';

// contract 5.3: secrets are stored AES-256-GCM encrypted under per-credential data keys that
// are wrapped under MASTER_KEY; the associated data binds a ciphertext to its row.

const IV = 12;
const TAG = 16;

const flip = (buffer: Buffer, index: number): Buffer => {
  const copy = Buffer.from(buffer);
  copy[index] = copy[index]! ^ 0x01;
  return copy;
};

describe('envelope encryption (contract 5.3)', () => {
  const key = randomBytes(32);
  const plaintext = Buffer.from('the quick brown fox', 'utf8');

  it('seal then open returns the plaintext', () => {
    const sealed = seal(key, plaintext, 'credential:ak_1');
    expect(sealed.length).to.equal(IV + TAG + plaintext.length);
    expect(open(key, sealed, 'credential:ak_1').equals(plaintext)).to.equal(true);
    expect(open(key, seal(key, Buffer.alloc(0), 'x'), 'x').length).to.equal(0);
  });

  it('does not contain the plaintext and uses a fresh IV each time', () => {
    const a = seal(key, plaintext, 'ad');
    const b = seal(key, plaintext, 'ad');
    expect(a.includes(plaintext)).to.equal(false);
    expect(a.equals(b)).to.equal(false);
    expect(a.subarray(0, IV).equals(b.subarray(0, IV))).to.equal(false);
  });

  it('fails with the wrong associated data', () => {
    const sealed = seal(key, plaintext, 'credential:ak_1');
    expect(() => open(key, sealed, 'credential:ak_2')).to.throw();
    expect(() => open(key, sealed, '')).to.throw();
  });

  it('fails with the wrong key', () => {
    const sealed = seal(key, plaintext, 'ad');
    expect(() => open(randomBytes(32), sealed, 'ad')).to.throw();
  });

  it('fails when any part of the sealed value is tampered with', () => {
    const sealed = seal(key, plaintext, 'ad');
    expect(() => open(key, flip(sealed, 0), 'ad'), 'iv').to.throw();
    expect(() => open(key, flip(sealed, IV), 'ad'), 'tag').to.throw();
    expect(() => open(key, flip(sealed, IV + TAG), 'ad'), 'ciphertext').to.throw();
    expect(() => open(key, flip(sealed, sealed.length - 1), 'ad'), 'last byte').to.throw();
    expect(() => open(key, sealed.subarray(0, sealed.length - 1), 'ad'), 'truncated').to.throw();
    expect(() => open(key, Buffer.concat([sealed, Buffer.from([0])]), 'ad'), 'extended').to.throw();
  });

  it('fails on a value shorter than iv and tag, and on an all-zero (revoked) value', () => {
    expect(() => open(key, Buffer.alloc(IV + TAG - 1), 'ad')).to.throw();
    const sealed = seal(key, plaintext, 'ad');
    expect(() => open(key, Buffer.alloc(sealed.length), 'ad')).to.throw();
  });

  describe('data key wrapping', () => {
    const masterKey = randomBytes(32);
    const secret = generateSecret();

    it('round-trips a secret through a per-credential data key', () => {
      const sealed = sealWithDataKey(masterKey, secret, 'credential:ak_1');
      expect(openWithDataKey(masterKey, sealed, 'credential:ak_1')).to.equal(secret);
    });

    it('stores neither the secret nor the data key in the clear', () => {
      const sealed = sealWithDataKey(masterKey, secret, 'credential:ak_1');
      const secretBytes = Buffer.from(secret, 'utf8');
      expect(sealed.encryptedSecret.includes(secretBytes)).to.equal(false);
      expect(sealed.encryptedSecret.toString('latin1')).not.to.include(secret.slice(0, 16));
      expect(sealed.wrappedDataKey.length).to.equal(IV + TAG + 32);
      // the wrapped data key opens under the master key and decrypts the secret
      const dataKey = open(masterKey, sealed.wrappedDataKey, 'credential:ak_1:data-key');
      expect(dataKey.length).to.equal(32);
      expect(open(dataKey, sealed.encryptedSecret, 'credential:ak_1').toString('utf8')).to.equal(secret);
    });

    it('uses a new data key per secret', () => {
      const a = sealWithDataKey(masterKey, secret, 'credential:ak_1');
      const b = sealWithDataKey(masterKey, secret, 'credential:ak_1');
      const keyA = open(masterKey, a.wrappedDataKey, 'credential:ak_1:data-key');
      const keyB = open(masterKey, b.wrappedDataKey, 'credential:ak_1:data-key');
      expect(keyA.equals(keyB)).to.equal(false);
    });

    it('refuses the wrong master key, another row, or swapped parts', () => {
      const a = sealWithDataKey(masterKey, secret, 'credential:ak_1');
      const b = sealWithDataKey(masterKey, generateSecret(), 'credential:ak_2');
      expect(() => openWithDataKey(randomBytes(32), a, 'credential:ak_1')).to.throw();
      expect(() => openWithDataKey(masterKey, a, 'credential:ak_2'), 'ciphertext copied onto another row').to.throw();
      expect(() => openWithDataKey(masterKey, { encryptedSecret: a.encryptedSecret, wrappedDataKey: b.wrappedDataKey }, 'credential:ak_1')).to.throw();
      expect(() => openWithDataKey(masterKey, { ...a, encryptedSecret: flip(a.encryptedSecret, IV + TAG) }, 'credential:ak_1')).to.throw();
      expect(() => openWithDataKey(masterKey, { ...a, wrappedDataKey: flip(a.wrappedDataKey, IV + TAG) }, 'credential:ak_1')).to.throw();
    });
  });

  it('generateSecret issues 128 lower-case hex characters, different each time (D6)', () => {
    const a = generateSecret();
    expect(a).to.match(/^[0-9a-f]{128}$/);
    expect(generateSecret()).not.to.equal(a);
  });
});
