import { expect } from 'chai';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { signedRequest } from '../../support/signed-client.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';
import { hugeExponentKey, shortRsaKey } from '../../support/hostile-keys.js';

// `rgs credential add` (D34, D38) and `rgs token-key rotate` (D34), run as the real subprocess

const SECRETS = { MASTER_KEY: '6b'.repeat(32), JWT_SECRET: 'credential-add-test-jwt-secret-'.padEnd(48, 'x') };
const rgs = (...args: string[]) => runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL, ...SECRETS }, timeoutMs: 30_000 });

function ok(result: CliResult): any {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
  expect(result.stderr).to.equal('');
  return JSON.parse(result.stdout);
}

describe('rgs credential add and token-key rotate (D34, D38)', function () {
  this.timeout(60_000);
  let h: Harness;
  let operator: TestOperator;
  let dir: string;
  const file = (name: string, text: string) => {
    const where = path.join(dir, name);
    writeFileSync(where, text);
    return where;
  };

  before(async () => {
    h = await startHarness(SECRETS);
    operator = await h.onboard();
    dir = mkdtempSync(path.join(tmpdir(), 'rgs-credential-add-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await h.close();
  });

  for (const alg of ['RS256', 'EdDSA'] as const) {
    it(`--alg ${alg} --public-key-file: prints {kind, kid, alg, notBefore}, and requests signed with the private key are accepted`, async () => {
      const { publicKey, privateKey } = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
      const pem = file(`${alg}.pem`, publicKey.export({ type: 'spki', format: 'pem' }).toString());
      const added = ok(await rgs('credential', 'add', '--operator', operator.operatorId, '--kind', 'api', '--alg', alg, '--public-key-file', pem));
      expect(added).to.include({ kind: 'api', alg });
      expect(added.kid).to.match(/^ak_[0-9a-f]{24}$/);
      expect(new Date(added.notBefore).toISOString()).to.equal(added.notBefore);
      const launched = await signedRequest(h.baseUrl, { kid: added.kid, alg, privateKey }, 'POST', '/v1/session', operator.sessionBody({ requestUuid: randomUUID() }));
      expect(launched.status, launched.text).to.equal(200);
    });
  }

  it('--jwks-url: the credential names the URL', async () => {
    const added = ok(await rgs('credential', 'add', '--operator', operator.operatorId, '--kind', 'api', '--alg', 'RS256', '--jwks-url', 'https://keys.example/jwks.json'));
    const row = await h.svc.db.credential.findUnique({ where: { kid: added.kid } });
    expect(row).to.include({ alg: 'RS256', jwksUrl: 'https://keys.example/jwks.json', publicKey: null });
  });

  it('refuses a file that is not a PEM public key, a key of the other algorithm, an RSA key of another exponent than 65537 or under 2048 bits, and a key set URL that is not http(s): exit 1, nothing added', async () => {
    const count = () => h.svc.db.credential.count({ where: { operatorId: operator.operatorId } });
    const before = await count();
    const ed = generateKeyPairSync('ed25519');
    const cases: [string[], RegExp][] = [
      [['--alg', 'RS256', '--public-key-file', file('junk.pem', 'not a key')], /not a PEM public key/],
      [['--alg', 'EdDSA', '--public-key-file', file('private.pem', ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())], /this is a private key/],
      [['--alg', 'RS256', '--public-key-file', file('ed.pem', ed.publicKey.export({ type: 'spki', format: 'pem' }).toString())], /needs an RSA public key/],
      // D34, D24: RSA keys of e = 65537 and 2048 to 4096 bits only
      [['--alg', 'RS256', '--public-key-file', file('huge-e.pem', hugeExponentKey().export({ type: 'spki', format: 'pem' }).toString())], /public exponent 65537/],
      [['--alg', 'RS256', '--public-key-file', file('short.pem', shortRsaKey().export({ type: 'spki', format: 'pem' }).toString())], /at least 2048 bits/],
      [['--alg', 'EdDSA', '--jwks-url', 'ftp://keys.example/jwks.json'], /JWKS URL must be an http\(s\) URL/],
    ];
    for (const [args, message] of cases) {
      const result = await rgs('credential', 'add', '--operator', operator.operatorId, '--kind', 'api', ...args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).to.equal(1);
      expect(result.stdout).to.equal('');
      expect(JSON.parse(result.stderr).message).to.match(message);
    }
    expect(await count()).to.equal(before);
  });

  it('refuses a command line with both or neither key source, an unknown algorithm or kind: exit 2', async () => {
    const pem = file('ok.pem', generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const cases: [string[], RegExp][] = [
      [['--alg', 'EdDSA', '--public-key-file', pem, '--jwks-url', 'https://keys.example/jwks.json'], /exactly one of --public-key-file and --jwks-url/],
      [['--alg', 'EdDSA'], /exactly one of --public-key-file and --jwks-url/],
      [['--alg', 'HS512', '--public-key-file', pem], /'HS512' is invalid/],
      [['--alg', 'HS256', '--public-key-file', pem], /'HS256' is invalid/],
    ];
    for (const [args, message] of cases) {
      const result = await rgs('credential', 'add', '--operator', operator.operatorId, '--kind', 'api', ...args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).to.equal(2);
      expect(result.stderr).to.match(message);
    }
    const wallet = await rgs('credential', 'add', '--operator', operator.operatorId, '--kind', 'wallet', '--alg', 'EdDSA', '--public-key-file', pem);
    expect(wallet.code).to.equal(2);
  });

  it('token-key rotate: a new current token key, the old one retired and still published at /.well-known/jwks.json', async () => {
    const first = ok(await rgs('token-key', 'rotate'));
    const second = ok(await rgs('token-key', 'rotate'));
    expect(second).to.include({ purpose: 'token', algorithm: 'EdDSA', retiredKid: first.kid });
    const set = (await (await fetch(`${h.baseUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(set.keys.map((key) => key.kid)).to.include.members([first.kid, second.kid]);
  });
});
