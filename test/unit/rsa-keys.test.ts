import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { RSA_MAX_BITS, RSA_MIN_BITS, rsaKeyProblem } from '../../src/shared/domain/rsa-keys.js';
import { hugeExponentKey } from '../support/hostile-keys.js';

// D34, D24: an RS256 credential verifies with RSA keys of e = 65537 and 2048 to 4096 bits
// only: a key of a huge exponent makes each verification cost as much as a signature.

const rsa = (modulusLength: number, publicExponent?: number) => generateKeyPairSync('rsa', { modulusLength, publicExponent }).publicKey;

describe('RSA public keys an RS256 credential accepts (D34, D24)', () => {
  it('accepts e = 65537 from 2048 to 4096 bits', () => {
    expect(rsaKeyProblem(rsa(RSA_MIN_BITS).asymmetricKeyDetails)).to.equal(undefined);
    // (larger keys take seconds to make: their details as node gives them)
    for (const bits of [3072, RSA_MAX_BITS]) expect(rsaKeyProblem({ modulusLength: bits, publicExponent: 65537n }), `${bits} bits`).to.equal(undefined);
  });

  it('refuses a modulus under 2048 or over 4096 bits', () => {
    expect(rsaKeyProblem(rsa(1024).asymmetricKeyDetails)).to.match(/at least 2048 bits/);
    expect(rsaKeyProblem(rsa(2040).asymmetricKeyDetails)).to.match(/at least 2048 bits/);
    expect(rsaKeyProblem({ modulusLength: 4104, publicExponent: 65537n })).to.match(/at most 4096 bits/);
    expect(rsaKeyProblem(undefined)).to.match(/at least 2048 bits/);
  });

  it('refuses any exponent but 65537: a small one, and a huge one (e = n - 2)', () => {
    expect(rsaKeyProblem(rsa(2048, 3).asymmetricKeyDetails)).to.match(/public exponent 65537/);
    const huge = hugeExponentKey(2048).asymmetricKeyDetails;
    expect(huge?.modulusLength).to.equal(2048);
    expect(rsaKeyProblem(huge)).to.match(/public exponent 65537/);
    expect(rsaKeyProblem({ modulusLength: 2048, publicExponent: 2n ** 32n + 1n })).to.match(/public exponent 65537/);
  });
});
