import { expect } from 'chai';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addPublicKeyCredential, revokeCredential, type PublicKeyAlg } from '../../../src/wallet/credentials.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { hugeExponentKey, shortRsaKey } from '../../support/hostile-keys.js';
import { signedRequest, type ApiResponse, type PrivateApiKey, type SignedRequestOptions } from '../../support/signed-client.js';

// D34: API credentials verified with the operator's public key (RS256, EdDSA), from a PEM or
// a key set URL (JWKS), beside HMAC credentials (HS256, contract 5.1), which stay the default.

const DAY_MS = 24 * 60 * 60 * 1000;

const keyPair = (alg: PublicKeyAlg) => (alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519'));
const pemOf = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();

// a key server for a JWKS credential; stop() closes it (connections too)
async function keyServer(keys: KeyObject[]): Promise<{ url: string; stop: () => Promise<void>; fetches: () => number }> {
  let fetches = 0;
  const server: Server = createServer((_req, res) => {
    fetches += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: keys.map((key, i) => ({ ...key.export({ format: 'jwk' }), kid: `operator-key-${i}`, use: 'sig' })) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    fetches: () => fetches,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('asymmetric request signing (D34)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  // requests are signed with the service's idea of now (the clock may be moved)
  const at = (): SignedRequestOptions => ({ timestamp: Math.floor(h.svc.now().getTime() / 1000) });

  const launch = (operator: TestOperator, key: PrivateApiKey | TestOperator['key'], options: SignedRequestOptions = {}) =>
    signedRequest(h.baseUrl, key, 'POST', '/v1/session', operator.sessionBody({ requestUuid: randomUUID() }), { ...at(), ...options });
  const read = (key: PrivateApiKey | TestOperator['key']) => signedRequest(h.baseUrl, key, 'GET', '/v1/rounds', undefined, at());

  function refused(response: ApiResponse, error: string): void {
    expect(response.status, response.text).to.equal(401);
    expect(response.body).to.include({ error, status: 'RS_ERROR_INVALID_SIGNATURE' });
  }

  async function withPublicKey(operator: TestOperator, alg: PublicKeyAlg): Promise<PrivateApiKey> {
    const { publicKey, privateKey } = keyPair(alg);
    const added = await addPublicKeyCredential(h.svc.db, operator.operatorId, alg, { publicKeyPem: pemOf(publicKey) }, { production: false, now: h.svc.now() });
    expect(added).to.include({ kind: 'api', alg });
    return { kid: added.kid, alg, privateKey };
  }

  for (const alg of ['RS256', 'EdDSA'] as const) {
    it(`${alg}: a launch and a read signed with the operator's private key are accepted`, async () => {
      const operator = await h.onboard();
      const key = await withPublicKey(operator, alg);
      const launched = await launch(operator, key);
      expect(launched.status, launched.text).to.equal(200);
      expect(launched.body.sessionToken).to.be.a('string');
      const rounds = await read(key);
      expect(rounds.status, rounds.text).to.equal(200);
      // a replay of the same signed POST is refused (D17), as with HMAC
      const body = operator.sessionBody({ requestUuid: randomUUID() });
      const options = { ...at() };
      expect((await signedRequest(h.baseUrl, key, 'POST', '/v1/session', body, options)).status).to.equal(200);
      refused(await signedRequest(h.baseUrl, key, 'POST', '/v1/session', body, options), 'replayed_signature');
    });
  }

  it('HS256 stays the default: an onboarded operator signs with HMAC, its credential row says HS256', async () => {
    const operator = await h.onboard();
    expect((await launch(operator, operator.key)).status).to.equal(200);
    const row = await h.svc.db.credential.findUnique({ where: { kid: operator.key.kid } });
    expect(row).to.include({ alg: 'HS256', publicKey: null, jwksUrl: null });
    // a public-key credential seals nothing
    const key = await withPublicKey(operator, 'EdDSA');
    const added = await h.svc.db.credential.findUnique({ where: { kid: key.kid } });
    expect(added!.encryptedSecret).to.have.length(0);
    expect(added!.publicKey).to.match(/^-----BEGIN PUBLIC KEY-----/);
  });

  it('a credential accepts its own algorithm only: an RS256 credential refuses an EdDSA or HMAC signature, an EdDSA one an RS256 signature', async () => {
    const operator = await h.onboard();
    const rs = await withPublicKey(operator, 'RS256');
    const ed = await withPublicKey(operator, 'EdDSA');
    refused(await launch(operator, { ...ed, kid: rs.kid }), 'invalid_signature');
    refused(await launch(operator, { kid: rs.kid, secret: operator.key.secret }), 'invalid_signature');
    refused(await launch(operator, { ...rs, kid: ed.kid }), 'invalid_signature');
    // an HMAC credential stays HMAC: a signature by a private key is refused
    refused(await launch(operator, { ...ed, kid: operator.key.kid }), 'invalid_signature');
    // another RSA key than the credential's
    refused(await launch(operator, { ...rs, privateKey: keyPair('RS256').privateKey }), 'invalid_signature');
    expect(await h.svc.db.session.count({ where: { operatorId: operator.operatorId } })).to.equal(0);
  });

  it('an unknown kid is refused unknown_key', async () => {
    const operator = await h.onboard();
    const key = await withPublicKey(operator, 'RS256');
    refused(await launch(operator, { ...key, kid: 'ak_000000000000000000000000' }), 'unknown_key');
  });

  it('revocation applies at once to a public-key credential', async () => {
    const operator = await h.onboard();
    const key = await withPublicKey(operator, 'EdDSA');
    expect((await launch(operator, key)).status).to.equal(200);
    await revokeCredential(h.svc.db, key.kid);
    refused(await launch(operator, key), 'key_not_valid_now');
  });

  describe('key sets (JWKS URL)', () => {
    it('a signature by any key of the set verifies; the set is kept after its server stops', async () => {
      const operator = await h.onboard();
      const first = keyPair('RS256');
      const second = keyPair('RS256');
      const server = await keyServer([first.publicKey, second.publicKey, generateKeyPairSync('ed25519').publicKey]);
      const added = await addPublicKeyCredential(h.svc.db, operator.operatorId, 'RS256', { jwksUrl: server.url }, { production: false, now: h.svc.now() });
      const withFirst: PrivateApiKey = { kid: added.kid, alg: 'RS256', privateKey: first.privateKey };
      const withSecond: PrivateApiKey = { ...withFirst, privateKey: second.privateKey };
      expect((await launch(operator, withFirst)).status).to.equal(200);
      expect((await launch(operator, withSecond)).status).to.equal(200);
      expect((await read(withSecond)).status).to.equal(200);
      // the set's Ed25519 key is not an RS256 key
      refused(await launch(operator, { kid: added.kid, alg: 'EdDSA', privateKey: keyPair('EdDSA').privateKey }), 'invalid_signature');
      expect(server.fetches()).to.be.greaterThan(0);
      const fetched = server.fetches();

      await server.stop();
      // cached: still verifies, with nothing fetched
      expect((await launch(operator, withFirst)).status).to.equal(200);
      expect(server.fetches()).to.equal(fetched);
    });

    it('a key set URL that is down at first use: 401 key_unavailable, and the operator\'s HMAC credential still works', async () => {
      const operator = await h.onboard();
      const { privateKey } = keyPair('EdDSA');
      const server = await keyServer([]);
      await server.stop();
      const added = await addPublicKeyCredential(h.svc.db, operator.operatorId, 'EdDSA', { jwksUrl: server.url }, { production: false, now: h.svc.now() });
      refused(await launch(operator, { kid: added.kid, alg: 'EdDSA', privateKey }), 'key_unavailable');
      expect((await launch(operator, operator.key)).status).to.equal(200);
    });

    it('RSA keys of another exponent than 65537 or under 2048 bits are skipped; a set with no other key fails only its credential, key_unavailable', async () => {
      const operator = await h.onboard();
      const good = keyPair('RS256');
      // the honest key last, behind the hostile ones
      const mixed = await keyServer([hugeExponentKey(), shortRsaKey(), good.publicKey]);
      const short = generateKeyPairSync('rsa', { modulusLength: 1024 });
      const hostile = await keyServer([hugeExponentKey(), short.publicKey]);
      try {
        const withMixed = await addPublicKeyCredential(h.svc.db, operator.operatorId, 'RS256', { jwksUrl: mixed.url }, { production: false, now: h.svc.now() });
        expect((await launch(operator, { kid: withMixed.kid, alg: 'RS256', privateKey: good.privateKey })).status).to.equal(200);
        // a 1024-bit key of the set does not verify, though the signature is its own
        refused(await launch(operator, { kid: withMixed.kid, alg: 'RS256', privateKey: short.privateKey }), 'invalid_signature');

        const withHostile = await addPublicKeyCredential(h.svc.db, operator.operatorId, 'RS256', { jwksUrl: hostile.url }, { production: false, now: h.svc.now() });
        refused(await launch(operator, { kid: withHostile.kid, alg: 'RS256', privateKey: short.privateKey }), 'key_unavailable');
        refused(await launch(operator, { kid: withHostile.kid, alg: 'RS256', privateKey: good.privateKey }), 'key_unavailable');
        expect(await h.svc.db.session.count({ where: { operatorId: operator.operatorId } })).to.equal(1);
        // the operator's HMAC credential is another credential: it still works
        expect((await launch(operator, operator.key)).status).to.equal(200);
      } finally {
        await mixed.stop();
        await hostile.stop();
      }
    });

    it('a PEM stored before these rules (an RSA key of a huge exponent) fails its credential with key_unavailable', async () => {
      const operator = await h.onboard();
      const key = await withPublicKey(operator, 'RS256');
      await h.svc.db.credential.update({ where: { kid: key.kid }, data: { publicKey: pemOf(hugeExponentKey()) } });
      refused(await launch(operator, key), 'key_unavailable');
      expect((await launch(operator, operator.key)).status).to.equal(200);
    });

    it('a key set answering something else than a JWKS: key_unavailable', async () => {
      const operator = await h.onboard();
      const server = createServer((_req, res) => res.end('<html>not a key set</html>'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
        const added = await addPublicKeyCredential(h.svc.db, operator.operatorId, 'EdDSA', { jwksUrl: url }, { production: false, now: h.svc.now() });
        refused(await launch(operator, { kid: added.kid, alg: 'EdDSA', privateKey: keyPair('EdDSA').privateKey }), 'key_unavailable');
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });
  });

  // the clock moves: these run last
  describe('rotation (contract 5.3) and the key set cache, with the clock moved', () => {
    it('a credential added later rotates: the older one verifies until its notAfter (24 h), then key_not_valid_now; a key set is kept 10 minutes at most', async () => {
      const operator = await h.onboard();
      const old = await withPublicKey(operator, 'RS256');
      const pair = keyPair('EdDSA');
      const server = await keyServer([pair.publicKey]);
      const added = await addPublicKeyCredential(h.svc.db, operator.operatorId, 'EdDSA', { jwksUrl: server.url }, { production: false, now: h.svc.now() });
      expect(added.previousKid).to.equal(old.kid);
      const current: PrivateApiKey = { kid: added.kid, alg: 'EdDSA', privateKey: pair.privateKey };
      expect((await launch(operator, old)).status).to.equal(200);
      expect((await launch(operator, current)).status).to.equal(200);
      await server.stop();

      h.shiftClock(9 * 60 * 1000);
      expect((await launch(operator, current)).status, 'the cached set, 9 minutes old').to.equal(200);
      h.shiftClock(2 * 60 * 1000);
      refused(await launch(operator, current), 'key_unavailable');

      h.shiftClock(DAY_MS);
      refused(await launch(operator, old), 'key_not_valid_now');
      refused(await launch(operator, operator.key), 'key_not_valid_now');
    });
  });
});
