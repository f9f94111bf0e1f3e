import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { randomBytes, randomUUID } from 'node:crypto';
import { TOKEN_KEY, rotateSigningKey, type SigningAlgorithm } from '../../../src/shared/platform/signing-keys.js';
import { SESSION_LIFETIME_SECONDS, SessionTokens, signSessionToken, type SessionClaims } from '../../../src/shared/game/sessions/token.js';
import { loadConfig } from '../../../src/shared/platform/config.js';
import { migrate } from '../../../src/shared/platform/db/migrate.js';
import { closeServiceContext, createServiceContext } from '../../../src/bootstrap.js';
import type { Queryable } from '../../../src/shared/platform/db/sql.js';
import { startRoles } from '../../../src/roles.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { Player } from '../../support/player.js';

// D34: with SESSION_TOKEN_ALG=RS256 or EdDSA, session tokens are signed with the service's own
// key, name its kid in their header and verify against GET /.well-known/jwks.json; a rotated
// key keeps verifying the tokens it signed.

// `rgs migrate` with SESSION_TOKEN_ALG set: the current token key rotated to that algorithm (D38)
const migrateTo = (alg: SigningAlgorithm) => migrate(TEST_DATABASE_URL, undefined, { masterKey: loadConfig().masterKey, tokenKeyAlg: alg });

const claimsAt = (iat: number): SessionClaims => ({
  sub: 'player-1',
  operatorId: 'op-1',
  sessionId: '6f1c2a4e-0a57-4c4b-9b39-3f5c2b7f7a10',
  currency: 'EUR',
  jurisdiction: 'MT',
  lang: 'en',
  mode: 'real',
  rgLimits: {},
  iat,
  exp: iat + SESSION_LIFETIME_SECONDS,
});

for (const alg of ['RS256', 'EdDSA'] as const) {
  describe(`session tokens signed with the service's ${alg} key (D34)`, function () {
    this.timeout(60_000);
    let h: Harness;
    let operator: TestOperator;
    before(async () => {
      // the run's database holds a current token key of another algorithm (`rgs migrate`
      // made an EdDSA one while SESSION_TOKEN_ALG was HS256): migrating with SESSION_TOKEN_ALG
      // set rotates it, and only then does the service start (D38)
      await migrateTo(alg);
      h = await startHarness({ SESSION_TOKEN_ALG: alg }, ['api', 'realtime']);
      operator = await h.onboard();
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

    it('forged headers naming fresh kids cost one read of the keys between them, not one each; a key made a moment ago is still found', async () => {
      let reads = 0;
      const counted: Queryable = {
        query: (text, values) => {
          reads += 1;
          return h.svc.sql.query(text as never, values);
        },
      } as Queryable;
      const tokens = new SessionTokens(h.svc.config, counted);
      const [, payload, signature] = (await launchToken()).split('.');
      const forged = (kid: string) => `${Buffer.from(JSON.stringify({ alg, typ: 'JWT', kid })).toString('base64url')}.${payload}.${signature}`;
      const now = Math.floor(Date.now() / 1000);
      const checks = await Promise.all(Array.from({ length: 50 }, () => tokens.verify(forged(`tk_${randomBytes(12).toString('hex')}`), now)));
      expect(checks.filter((check) => check.ok || check.reason !== 'invalid_token')).to.deep.equal([]);
      expect(reads).to.equal(1);
      // a kid of no shape the service makes is refused unread
      for (const kid of ['ak_000000000000000000000000', 'x'.repeat(5000), '../../etc']) expect(await tokens.verify(forged(kid), now)).to.deep.equal({ ok: false, reason: 'invalid_token' });
      expect(reads).to.equal(1);
      // a key rotated in just now (another node's `rgs token-key rotate`): its token verifies
      await rotateSigningKey((work) => h.svc.sql.transaction(work), h.svc.config.masterKey, TOKEN_KEY, alg);
      const fresh = await launchToken();
      expect(await tokens.verify(fresh, now)).to.include({ ok: true });
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

describe('session tokens: the configured algorithm, and the end of HS256 (D34, D38)', function () {
  this.timeout(60_000);
  // the token key as the run's own migrate left it (EdDSA while SESSION_TOKEN_ALG is HS256)
  after(() => migrateTo('EdDSA'));

  it('SESSION_TOKEN_ALG=RS256 with an EdDSA token key from an earlier migrate: the api refuses to start and says to run rgs migrate; after it, tokens are RS256', async () => {
    await migrateTo('EdDSA');
    const config = loadConfig({ ...process.env, SESSION_TOKEN_ALG: 'RS256', ROLES: 'api' });
    const svc = await createServiceContext(config);
    let refusal: Error | undefined;
    try {
      const started = await startRoles(svc, config, 0).catch((err: Error) => void (refusal = err));
      if (started) await started.close();
    } finally {
      await closeServiceContext(svc);
    }
    expect(refusal?.message).to.match(/SESSION_TOKEN_ALG is RS256 but the current session-token key tk_[0-9a-f]{24} is EdDSA: run `rgs migrate` with SESSION_TOKEN_ALG=RS256/);

    await migrateTo('RS256');
    const h = await startHarness({ SESSION_TOKEN_ALG: 'RS256' }, ['api']);
    try {
      const launched = await (await h.onboard()).launch();
      expect(launched.status, launched.text).to.equal(200);
      expect(decodeProtectedHeader(launched.body.sessionToken as string).alg).to.equal('RS256');
    } finally {
      await h.close();
    }
  });

  it('a node still running with SESSION_TOKEN_ALG=RS256 after a migrate made the token key EdDSA answers launches 503 service_unavailable with Retry-After (D38); the same launch, sent again once the key is of its algorithm, succeeds', async () => {
    await migrateTo('RS256');
    const h = await startHarness({ SESSION_TOKEN_ALG: 'RS256' }, ['api']);
    try {
      const operator = await h.onboard();
      expect((await operator.launch()).status).to.equal(200);
      await migrateTo('EdDSA');
      const body = { requestUuid: randomUUID() };
      const refused = await operator.launch(body);
      expect(refused.status, refused.text).to.equal(503);
      expect(refused.body.error).to.equal('service_unavailable');
      expect(refused.headers.get('retry-after')).to.match(/^[0-9]+$/);
      await migrateTo('RS256');
      const retried = await operator.launch(body);
      expect(retried.status, retried.text).to.equal(200);
      expect(decodeProtectedHeader(retried.body.sessionToken as string).alg).to.equal('RS256');
    } finally {
      await h.close();
    }
  });

  it('HS256 tokens end at SESSION_TOKEN_HS256_UNTIL, or else one session lifetime after the process started; with SESSION_TOKEN_ALG=HS256 they never do', async () => {
    const h = await startHarness({}, ['api']);
    try {
      const startedAt = 1_800_000_000;
      const secret = h.svc.config.jwtSecret;
      const early = signSessionToken(secret, claimsAt(startedAt));
      const late = signSessionToken(secret, claimsAt(startedAt + SESSION_LIFETIME_SECONDS - 60));
      const tokens = (config: Partial<Parameters<typeof loadConfig>[0]>) => new SessionTokens(loadConfig({ ...process.env, ...config }), h.svc.sql, startedAt * 1000);

      const byDefault = tokens({ SESSION_TOKEN_ALG: 'EdDSA' });
      expect(await byDefault.verify(early, startedAt + 10)).to.include({ ok: true });
      expect(await byDefault.verify(late, startedAt + SESSION_LIFETIME_SECONDS)).to.include({ ok: true });
      expect(await byDefault.verify(late, startedAt + SESSION_LIFETIME_SECONDS + 1)).to.deep.equal({ ok: false, reason: 'invalid_token' });

      const until = tokens({ SESSION_TOKEN_ALG: 'RS256', SESSION_TOKEN_HS256_UNTIL: new Date((startedAt + 600) * 1000).toISOString() });
      expect(await until.verify(early, startedAt + 600)).to.include({ ok: true });
      expect(await until.verify(early, startedAt + 601)).to.deep.equal({ ok: false, reason: 'invalid_token' });

      const hs256 = tokens({ SESSION_TOKEN_HS256_UNTIL: new Date((startedAt + 600) * 1000).toISOString() });
      expect(await hs256.verify(late, startedAt + SESSION_LIFETIME_SECONDS + 1)).to.include({ ok: true });
    } finally {
      await h.close();
    }
  });
});
