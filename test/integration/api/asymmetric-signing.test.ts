import { expect } from 'chai';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addPublicKeyCredential, revokeCredential, type PublicKeyAlg } from '../../../src/shared/wallet/credentials.js';
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

  describe('failed signatures, limited per key id and per client address before verifying (D24)', () => {
    // behind a proxy, so that each test address is its own client (D12)
    let proxied: Harness;
    before(async () => {
      proxied = await startHarness({ TRUST_PROXY: 'true' });
    });
    after(() => proxied.close());

    const from = (address: string): SignedRequestOptions => ({
      timestamp: Math.floor(proxied.svc.now().getTime() / 1000),
      headers: { 'x-forwarded-for': address },
    });
    const read = (key: PrivateApiKey | TestOperator['key'], address: string, options: SignedRequestOptions = {}) =>
      signedRequest(proxied.baseUrl, key, 'GET', '/v1/rounds', undefined, { ...from(address), ...options });
    const added = async (operator: TestOperator): Promise<PrivateApiKey> => {
      const { publicKey, privateKey } = keyPair('EdDSA');
      const addition = await addPublicKeyCredential(proxied.svc.db, operator.operatorId, 'EdDSA', { publicKeyPem: pemOf(publicKey) }, { production: false, now: proxied.svc.now() });
      return { kid: addition.kid, alg: 'EdDSA', privateKey };
    };
    // forged signatures sent one after another until the first refusal that is not
    // invalid_signature: the buckets hold 10 and refill 1 a second, so it comes after 10
    // failures at least, and long before 40 (which would take more than 30 s)
    const failuresUntilLimited = async (send: (i: number) => Promise<ApiResponse>): Promise<number> => {
      for (let i = 0; i < 40; i++) {
        const response = await send(i);
        if (response.status === 401 && response.body.error === 'invalid_signature') continue;
        expect(response.status, response.text).to.equal(429);
        expect(response.body).to.include({ error: 'rate_limited' });
        expect(Number(response.headers.get('retry-after'))).to.be.at.least(1);
        return i;
      }
      return expect.fail('40 forged signatures were all verified');
    };
    const forgedBy = (key: PrivateApiKey): PrivateApiKey => ({ ...key, privateKey: keyPair('EdDSA').privateKey });

    it('a kid past 10 failed signatures is refused rate_limited, from any address; another kid is served, and so is HMAC', async () => {
      const target = await proxied.onboard();
      const other = await proxied.onboard();
      const key = await added(target);
      const otherKey = await added(other);
      // each from an address of its own: only the kid's bucket is charged
      expect(await failuresUntilLimited((i) => read(forgedBy(key), `198.51.100.${i + 1}`))).to.be.at.least(10);
      expect((await read(otherKey, '203.0.113.11')).status).to.equal(200);
      // the target's HMAC credential costs no public-key verification, and is not limited so
      expect((await read(target.key, '203.0.113.10')).status).to.equal(200);
    });

    it('an address past 10 failed signatures is refused rate_limited, whatever kids it names; other addresses are served', async () => {
      const operators = await Promise.all([0, 1, 2].map(() => proxied.onboard()));
      const keys = await Promise.all(operators.map((operator) => added(operator)));
      // two kids in turn from one address: neither kid's bucket is empty when the address's is
      expect(await failuresUntilLimited((i) => read(forgedBy(keys[i % 2]!), '192.0.2.66'))).to.be.at.least(10);
      expect((await read(keys[2]!, '192.0.2.67')).status).to.equal(200);
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
