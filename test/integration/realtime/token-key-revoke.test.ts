import { expect } from 'chai';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { TOKEN_KEY, rotateSigningKey } from '../../../src/shared/platform/signing-keys.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { Player } from '../../support/player.js';
import { runRgs } from '../../support/rgs-cli.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// D32, D34: `rgs token-key revoke --kid` for a session-token key believed leaked. Unlike a
// retired key, which keeps verifying for a session's lifetime, a revoked key is no longer
// published at /.well-known/jwks.json and verifies no token; revoking the current key makes a
// new one in the same transaction.

describe("a revoked session-token key (D32, D34)", function () {
  this.timeout(60_000);
  let h: Harness;
  let operator: TestOperator;
  const rgs = (...args: string[]) => runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL, SESSION_TOKEN_ALG: 'EdDSA' }, timeoutMs: 30_000 });
  before(async () => {
    h = await startHarness({ SESSION_TOKEN_ALG: 'EdDSA' }, ['api', 'realtime']);
    operator = await h.onboard();
    await rotateSigningKey((work) => h.svc.sql.transaction(work), h.svc.config.masterKey, TOKEN_KEY, 'EdDSA');
  });
  after(() => h.close());

  const launchToken = async (): Promise<string> => {
    const launched = await operator.launch();
    expect(launched.status, launched.text).to.equal(200);
    return launched.body.sessionToken as string;
  };
  const publishedKids = async (): Promise<string[]> => {
    const response = await fetch(`${h.baseUrl}/.well-known/jwks.json`);
    expect(response.status).to.equal(200);
    return ((await response.json()) as JSONWebKeySet).keys.map((key) => key.kid!);
  };
  const refusal = async (token: string): Promise<string | undefined> => {
    let refused: Error | undefined;
    const player = await Player.connect(h.baseUrl, token).catch((err: Error) => {
      refused = err;
      return undefined;
    });
    player?.close();
    return refused?.message;
  };

  it('revoking the current key: a new current key at once, the revoked one unpublished and its tokens refused', async () => {
    // launched, never yet presented to the player channel
    const token = await launchToken();
    const kid = decodeProtectedHeader(token).kid!;
    expect(await publishedKids()).to.include(kid);

    const revoked = await rgs('token-key', 'revoke', '--kid', kid);
    expect(revoked.code, revoked.stderr).to.equal(0);
    const answer = JSON.parse(revoked.stdout);
    expect(answer).to.include({ purpose: 'token', revokedKid: kid });
    expect(answer.kid).to.match(/^tk_/).and.not.equal(kid);

    expect(await publishedKids()).to.not.include(kid);
    expect(await refusal(token)).to.equal('invalid_token');

    // tokens from now on name the new key and connect
    const fresh = await launchToken();
    expect(decodeProtectedHeader(fresh).kid).to.equal(answer.kid);
    expect(await refusal(fresh)).to.equal(undefined);
  });

  it('a pack key is not a token key: revoking it as one is refused, nothing changes', async () => {
    const pack = await h.svc.db.signingKey.findFirstOrThrow({ where: { purpose: 'pack', retiredAt: null } });
    const result = await rgs('token-key', 'revoke', '--kid', pack.kid);
    expect(result.code).to.equal(1);
    expect(JSON.parse(result.stderr)).to.deep.equal({ error: 'SigningKeyNotFoundError', message: `there is no token signing key ${pack.kid}` });
    expect(await h.svc.db.signingKey.findUniqueOrThrow({ where: { kid: pack.kid } })).to.include({ retiredAt: null, revokedAt: null });
  });
});
