import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { TOKEN_KEY, rotateSigningKey } from '../../../src/platform/signing-keys.js';
import { signSessionToken, type SessionClaims } from '../../../src/game/sessions/token.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { Player } from '../../support/player.js';

// D34: with SESSION_TOKEN_ALG=RS256 or EdDSA, session tokens are signed with the service's own
// key, name its kid in their header and verify against GET /.well-known/jwks.json; a rotated
// key keeps verifying the tokens it signed.

for (const alg of ['RS256', 'EdDSA'] as const) {
  describe(`session tokens signed with the service's ${alg} key (D34)`, function () {
    this.timeout(60_000);
    let h: Harness;
    let operator: TestOperator;
    before(async () => {
      h = await startHarness({ SESSION_TOKEN_ALG: alg }, ['api', 'realtime']);
      operator = await h.onboard();
      // the run's database may hold a current token key of another algorithm: `rgs migrate`
      // with SESSION_TOKEN_ALG set rotates it, as here
      await rotateSigningKey((work) => h.svc.sql.transaction(work), h.svc.config.masterKey, TOKEN_KEY, alg);
    });
    after(() => h.close());

    const launchToken = async (): Promise<string> => {
      const launched = await operator.launch();
      expect(launched.status, launched.text).to.equal(200);
      return launched.body.sessionToken as string;
    };
    const jwks = async (): Promise<JSONWebKeySet> => {
      const response = await fetch(`${h.baseUrl}/.well-known/jwks.json`);
      expect(response.status).to.equal(200);
      return (await response.json()) as JSONWebKeySet;
    };
    const connects = async (token: string) => {
      const player = await Player.connect(h.baseUrl, token);
      try {
        await player.waitFor('connected');
      } finally {
        player.close();
      }
    };

    it('the token names its kid, verifies against the published key set, and opens the player channel', async () => {
      const token = await launchToken();
      const header = decodeProtectedHeader(token);
      expect(header.alg).to.equal(alg);
      expect(header.kid).to.match(/^tk_[0-9a-f]{24}$/);
      const set = await jwks();
      const published = set.keys.find((key) => key.kid === header.kid);
      expect(published).to.include({ alg, use: 'sig', kty: alg === 'RS256' ? 'RSA' : 'OKP' });
      const { payload } = await jwtVerify(token, createLocalJWKSet(set), { algorithms: [alg] });
      expect(payload).to.include({ operatorId: operator.operatorId });
      await connects(token);
    });

    it('the launch page reads the token (its operator frames it)', async () => {
      const response = await fetch(`${h.baseUrl}/play/dice?token=${await launchToken()}`);
      expect(response.status).to.equal(200);
    });

    it('a token naming an unknown kid is refused invalid_token', async () => {
      const token = await launchToken();
      const [, payload, signature] = token.split('.');
      const forged = `${Buffer.from(JSON.stringify({ alg, typ: 'JWT', kid: 'tk_000000000000000000000000' })).toString('base64url')}.${payload}.${signature}`;
      let refusal: Error | undefined;
      await Player.connect(h.baseUrl, forged).catch((err: Error) => (refusal = err));
      expect(refusal?.message).to.equal('invalid_token');
    });

    it('an HS256 token under JWT_SECRET (signed before SESSION_TOKEN_ALG changed) still connects; under another secret it is refused', async () => {
      const claims = JSON.parse(Buffer.from((await launchToken()).split('.')[1]!, 'base64url').toString('utf8')) as SessionClaims;
      await connects(signSessionToken(h.svc.config.jwtSecret, claims));
      let refusal: Error | undefined;
      await Player.connect(h.baseUrl, signSessionToken('another-secret-of-at-least-32-characters!!', claims)).catch((err: Error) => (refusal = err));
      expect(refusal?.message).to.equal('invalid_token');
    });

    it('rgs token-key rotate: new tokens name the new kid, a token of the old key still connects, both keys are published', async () => {
      const before = await launchToken();
      const oldKid = decodeProtectedHeader(before).kid;
      const rotated = await rotateSigningKey((work) => h.svc.sql.transaction(work), h.svc.config.masterKey, TOKEN_KEY, alg);
      expect(rotated).to.include({ retiredKid: oldKid, algorithm: alg });
      const after = await launchToken();
      expect(decodeProtectedHeader(after).kid).to.equal(rotated.kid);
      const set = await jwks();
      expect(set.keys.map((key) => key.kid)).to.include.members([oldKid, rotated.kid]);
      for (const token of [before, after]) await jwtVerify(token, createLocalJWKSet(set), { algorithms: [alg] });
      await connects(before);
      await connects(after);
    });
  });
}
