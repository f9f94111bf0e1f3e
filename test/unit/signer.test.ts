import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { canonicalString, sha256Hex, sign, signatureMatches } from '../../src/shared/wallet/signer.js';

describe('signer (contract 5.1)', () => {
  it('builds METHOD LF PATH LF TIMESTAMP LF sha256(body)', () => {
    expect(canonicalString('post', '/v1/session', '1700000000', '{}')).to.equal(
      `POST\n/v1/session\n1700000000\n${sha256Hex('{}')}`,
    );
  });

  it('hashes the empty body for requests without one', () => {
    expect(canonicalString('GET', '/v1/rounds', '1', '')).to.match(
      /\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855$/,
    );
  });

  it('signs with the secret text as the HMAC key (D6), agreeing with a plain HMAC', () => {
    const secret = 'ab'.repeat(64);
    const independent = createHmac('sha256', secret)
      .update(`POST\n/wallet/bet\n42\n${sha256Hex('{"a":1}')}`)
      .digest('base64');
    expect(sign(secret, 'POST', '/wallet/bet', '42', '{"a":1}')).to.equal(independent);
  });

  it('compares signatures of any length without throwing', () => {
    const good = sign('s', 'GET', '/', '1', '');
    expect(signatureMatches(good, good)).to.equal(true);
    expect(signatureMatches(good, 'short')).to.equal(false);
    expect(signatureMatches(good, '')).to.equal(false);
    expect(signatureMatches(good, sign('t', 'GET', '/', '1', ''))).to.equal(false);
  });
});
