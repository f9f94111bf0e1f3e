import { expect } from 'chai';
import { createDb, type Db } from '../../../src/shared/platform/db/client.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { uniqueId } from '../../support/harness.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// D25, as the `rgs` administration tool says it: no credential is sealed under the
// development MASTER_KEY in production (and a warning says so elsewhere), and operator
// settings are checked as the process's NODE_ENV asks (D11: the CLI is the only way in).

const SHIPPED_MASTER_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const REAL = { MASTER_KEY: '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0', JWT_SECRET: 'q'.repeat(48) };

const rgs = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL, ...env }, unset: ['MASTER_KEY', 'JWT_SECRET', 'NODE_ENV'], timeoutMs: 30_000 });

function refused(result: CliResult): { error: string; message: string } {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(1);
  expect(result.stdout).to.equal('');
  const error = JSON.parse(result.stderr);
  expect(error.message).to.be.a('string');
  expect(result.stderr).not.to.match(/\n\s+at /);
  return error;
}

function succeeded(result: CliResult): any {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
  return JSON.parse(result.stdout);
}

describe('rgs CLI in production (D25)', function () {
  this.timeout(60_000);
  let db: Db;

  before(() => {
    db = createDb(TEST_DATABASE_URL, 2);
  });
  after(() => db.$disconnect());

  describe('the development MASTER_KEY', () => {
    it('with NODE_ENV=production: operator create and credential rotate are refused, nothing is stored', async () => {
      const id = uniqueId('devkey');
      const production = { NODE_ENV: 'production', MASTER_KEY: SHIPPED_MASTER_KEY, JWT_SECRET: REAL.JWT_SECRET };
      const create = refused(await rgs(production, 'operator', 'create', '--id', id, '--wallet-url', 'https://8.8.8.8/wallet'));
      expect(create.message).to.include('MASTER_KEY');
      expect(await db.operator.count({ where: { id } })).to.equal(0);

      // an operator onboarded properly; a rotation under the development key is refused
      const onboarded = succeeded(await rgs({ NODE_ENV: 'production', ...REAL }, 'operator', 'create', '--id', id, '--wallet-url', 'https://8.8.8.8/wallet'));
      const rotate = refused(await rgs(production, 'credential', 'rotate', '--operator', onboarded.operatorId, '--kind', 'wallet'));
      expect(rotate.message).to.include('MASTER_KEY');
      expect(await db.credential.count({ where: { operatorId: id } })).to.equal(2);
    });

    it('elsewhere: operator create and credential rotate succeed and warn on stderr', async () => {
      const id = uniqueId('devkey');
      const create = await rgs({}, 'operator', 'create', '--id', id, '--wallet-url', 'http://127.0.0.1:3001');
      const created = succeeded(create);
      expect(created.operatorId).to.equal(id);
      const warning = JSON.parse(create.stderr);
      expect(warning.warning).to.equal('development_master_key');
      expect(warning.message).to.include('MASTER_KEY is not set').and.include('rgs master-key rewrap');

      const rotate = await rgs({ MASTER_KEY: SHIPPED_MASTER_KEY }, 'credential', 'rotate', '--operator', id, '--kind', 'api');
      expect(succeeded(rotate).kind).to.equal('api');
      expect(JSON.parse(rotate.stderr)).to.include({ warning: 'development_master_key' });
      expect(JSON.parse(rotate.stderr).message).to.include('MASTER_KEY is the development key');

      // with a real key there is nothing to say
      const quiet = await rgs(REAL, 'operator', 'create', '--id', uniqueId('realkey'), '--wallet-url', 'http://127.0.0.1:3001');
      succeeded(quiet);
      expect(quiet.stderr).to.equal('');
    });
  });

  describe('operator settings', () => {
    const production = { NODE_ENV: 'production', ...REAL };

    it('a wallet URL that resolves to loopback is refused in production, taken with --wallet-url-private-allowed true', async () => {
      const id = uniqueId('private');
      const plain = refused(await rgs(production, 'operator', 'create', '--id', id, '--wallet-url', 'https://localhost:8443/wallet'));
      expect(plain.message).to.include('loopback').and.to.include('--wallet-url-private-allowed');
      expect(await db.operator.count({ where: { id } })).to.equal(0);

      succeeded(
        await rgs(production, 'operator', 'create', '--id', id, '--wallet-url', 'https://localhost:8443/wallet', '--wallet-url-private-allowed', 'true'),
      );
      const shown = succeeded(await rgs(production, 'operator', 'show', '--id', id));
      expect(shown).to.include({ walletUrl: 'https://localhost:8443/wallet', walletUrlPrivateAllowed: true });

      // the flag taken away while the URL is private: refused, unchanged
      const update = refused(await rgs(production, 'operator', 'update', '--id', id, '--wallet-url-private-allowed', 'false'));
      expect(update.message).to.include('loopback');
      expect((await db.operator.findUniqueOrThrow({ where: { id } })).walletUrlPrivateAllowed).to.equal(true);
    });

    it('http: and credentials are refused in production; http: to 127.0.0.1 is taken outside it', async () => {
      const id = uniqueId('http');
      expect(refused(await rgs(production, 'operator', 'create', '--id', id, '--wallet-url', 'http://8.8.8.8/wallet')).message).to.include('https');
      expect(refused(await rgs(production, 'operator', 'create', '--id', id, '--wallet-url', 'https://a:b@8.8.8.8/wallet')).message).to.include('credentials');
      expect(await db.operator.count({ where: { id } })).to.equal(0);
      succeeded(await rgs(REAL, 'operator', 'create', '--id', id, '--wallet-url', 'http://127.0.0.1:3001'));
    });

    it('--wallet-url-private-allowed takes true or false only', async () => {
      const result = await rgs(REAL, 'operator', 'create', '--id', uniqueId('flag'), '--wallet-url', 'http://127.0.0.1:3001', '--wallet-url-private-allowed', 'yes');
      expect(result.code, result.stderr).to.equal(2);
      expect(result.stderr).to.include("rgs operator create: option '--wallet-url-private-allowed <bool>' argument 'yes' is invalid");
    });

    it('frame ancestors must be origins, in every environment', async () => {
      const id = uniqueId('frames');
      for (const env of [REAL, production]) {
        for (const entry of ['*', 'https:', 'https://*', 'https://a.*.example']) {
          const error = refused(await rgs(env, 'operator', 'create', '--id', id, '--wallet-url', 'https://8.8.8.8/w', '--frame-ancestors', `https://ok.example,${entry}`));
          expect(error.message, entry).to.include('frame ancestor');
        }
      }
      expect(await db.operator.count({ where: { id } })).to.equal(0);
      const created = succeeded(await rgs(REAL, 'operator', 'create', '--id', id, '--wallet-url', 'https://8.8.8.8/w', '--frame-ancestors', 'https://*.casino.example'));
      expect(created.operatorId).to.equal(id);
      expect(refused(await rgs(REAL, 'operator', 'update', '--id', id, '--frame-ancestors', '*')).message).to.include('frame ancestor');
      expect((await db.operator.findUniqueOrThrow({ where: { id } })).frameAncestors).to.deep.equal(['https://*.casino.example']);
    });
  });
});
