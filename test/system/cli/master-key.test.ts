import { expect } from 'chai';
import { createDb, type Db } from '../../../src/shared/platform/db/client.js';
import { dropDatabase } from '../../../src/shared/platform/db/migrate.js';
import type { Config } from '../../../src/shared/platform/config.js';
import { openServerSeed } from '../../../src/shared/game/fairness/seed-vault.js';
import { CredentialUnreadableError, revealSecret } from '../../../src/shared/wallet/credentials.js';
import { serverSeedHash } from '../../../src/shared/domain/seeds.js';
import { verifyDiceProof } from '../../../src/shared/domain/proof.js';
import { WalletSimulator } from '../../../src/simulator/wallet-simulator.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { startHarness, uniqueId, type Harness } from '../../support/harness.js';
import { roundFixtures, type RoundFixture, type SessionFixture } from '../../support/round-fixtures.js';
import { signedRequest, type ApiKey } from '../../support/signed-client.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// `rgs master-key rewrap` (contract 5.3, D25), run as the real subprocess: every credential
// and server seed sealed under MASTER_KEY moves to NEW_MASTER_KEY, and the service started
// with the new key then works with the operators' unchanged secrets (a launch, a signed
// wallet call) and reveals the same seeds (a proof). The rewrap reads every sealed row of
// its database, so this file has a database of its own: the other files' rows are sealed
// under other keys.

const DEVELOPMENT_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const OLD = '3c'.repeat(32);
// base64, as MASTER_KEY may be given
const NEW = Buffer.from('7d'.repeat(32), 'hex').toString('base64');
const OTHER = '9e'.repeat(32);
const JWT_SECRET = 'master-key-test-jwt-secret-'.padEnd(48, 'x');
const key = (text: string) => (/^[0-9a-f]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64'));

describe('rgs master-key rewrap (contract 5.3, D25)', function () {
  this.timeout(120_000);

  const databaseUrl = (() => {
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `${url.pathname}_rewrap`;
    return url.toString();
  })();
  let db: Db;
  let wallet: WalletSimulator;

  const rgs = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    runRgs(args, { env: { DATABASE_URL: databaseUrl, JWT_SECRET, ...env }, unset: ['MASTER_KEY', 'NEW_MASTER_KEY', 'NODE_ENV'], timeoutMs: 30_000 });

  const rewrap = (from: string | undefined, to: string | undefined, env: NodeJS.ProcessEnv = {}) =>
    rgs({ ...(from ? { MASTER_KEY: from } : {}), ...(to ? { NEW_MASTER_KEY: to } : {}), ...env }, 'master-key', 'rewrap');

  function ok(result: CliResult, stderr = ''): any {
    expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
    expect(result.stderr).to.equal(stderr);
    return JSON.parse(result.stdout);
  }

  function refused(result: CliResult): { error: string; message: string } & Record<string, any> {
    expect(result.code, `${result.stderr}${result.stdout}`).to.equal(1);
    expect(result.stdout).to.equal('');
    expect(result.stderr).not.to.match(/\n\s+at /);
    return JSON.parse(result.stderr);
  }

  // every sealed column of the database, to tell what a run changed
  async function sealedRows(): Promise<Record<string, string>> {
    const credentials = await db.credential.findMany({ select: { kid: true, encryptedSecret: true, wrappedDataKey: true } });
    const seeds = await db.seed.findMany({ select: { id: true, encryptedServerSeed: true, serverSeedHash: true } });
    const signingKeys = await db.signingKey.findMany({ select: { kid: true, encryptedPrivateKey: true, wrappedDataKey: true } });
    return Object.fromEntries([
      ...signingKeys.map((k) => [k.kid, `${Buffer.from(k.encryptedPrivateKey).toString('hex')}:${Buffer.from(k.wrappedDataKey).toString('hex')}`]),
      ...credentials.map((c) => [c.kid, `${Buffer.from(c.encryptedSecret).toString('hex')}:${Buffer.from(c.wrappedDataKey).toString('hex')}`]),
      ...seeds.map((s) => [s.id, `${Buffer.from(s.encryptedServerSeed).toString('hex')}:${s.serverSeedHash}`]),
    ]);
  }

  const serviceEnv = (masterKey: string) => ({
    DATABASE_URL: databaseUrl,
    MASTER_KEY: masterKey,
    JWT_SECRET,
    REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}-rewrap`,
  });

  before(async () => {
    // `rgs migrate` creates the database
    const migrated = await rgs({ MASTER_KEY: OLD }, 'migrate');
    expect(migrated.code, migrated.stderr).to.equal(0);
    db = createDb(databaseUrl, 2);
    wallet = await WalletSimulator.start();
  });
  after(async () => {
    await wallet?.close();
    await db?.$disconnect();
    await dropDatabase(databaseUrl);
  });

  type Created = { operatorId: string; apiKeyId: string; apiSecret: string; walletKeyId: string; walletSignatureSecret: string };
  let created: Created;
  let apiKey: ApiKey;
  let fixture: SessionFixture;
  let round: RoundFixture;
  let launchedSessionId: string;

  const launch = (h: Harness) =>
    signedRequest(h.baseUrl, apiKey, 'POST', '/v1/session', {
      operatorId: created.operatorId,
      playerRef: uniqueId('player'),
      gameCode: 'dice',
      currency: 'EUR',
      lang: 'en',
      jurisdiction: 'MT',
    });

  it('moves every credential, seed and signing key to NEW_MASTER_KEY; the service started with it launches, signs wallet calls and dispute packs, and reveals proofs', async () => {
    // under the old key: an operator (its two credentials), a revoked credential, a launched
    // session's seed and a settled round under a retired seed
    created = ok(await rgs({ MASTER_KEY: OLD }, 'operator', 'create', '--id', uniqueId('rewrap'), '--wallet-url', wallet.url, '--currency', 'EUR'));
    wallet.addCredential(created.walletKeyId, created.walletSignatureSecret);
    apiKey = { kid: created.apiKeyId, secret: created.apiSecret };
    const rotated = ok(await rgs({ MASTER_KEY: OLD }, 'credential', 'rotate', '--operator', created.operatorId, '--kind', 'api'));
    ok(await rgs({ MASTER_KEY: OLD }, 'credential', 'revoke', '--kid', rotated.kid));

    const before = await startHarness(serviceEnv(OLD));
    try {
      const launched = await launch(before);
      expect(launched.status, launched.text).to.equal(200);
      launchedSessionId = (launched.body as { sessionId: string }).sessionId;
      const f = roundFixtures(before.svc);
      fixture = await f.session(created.operatorId);
      round = await f.round(fixture);
      await before.svc.db.seed.update({ where: { id: fixture.seedId }, data: { current: false, retiredAt: new Date() } });
    } finally {
      await before.close();
    }
    const underOld = await sealedRows();

    // the processes are stopped; the rewrap
    const counts = ok(await rewrap(OLD, NEW));
    expect(counts).to.deep.equal({
      credentials: { rewrapped: 2, alreadyUnderNewKey: 0, revokedSkipped: 1, publicKeySkipped: 0 },
      seeds: { rewrapped: 2, alreadyUnderNewKey: 0 },
      // the dispute pack and session-token keys `rgs migrate` made (D32, D34, D38)
      signingKeys: { rewrapped: 2, alreadyUnderNewKey: 0 },
    });
    const underNew = await sealedRows();
    const signingKeys = await db.signingKey.findMany({ orderBy: { purpose: 'asc' } });
    expect(signingKeys.map((k) => k.purpose)).to.deep.equal(['pack', 'token']);
    for (const kid of [created.apiKeyId, created.walletKeyId, ...signingKeys.map((k) => k.kid)]) {
      const [secretBefore, dataKeyBefore] = underOld[kid]!.split(':');
      const [secretAfter, dataKeyAfter] = underNew[kid]!.split(':');
      // envelope encryption: the secret's own ciphertext stays, its data key is wrapped anew
      expect(secretAfter, kid).to.equal(secretBefore);
      expect(dataKeyAfter, kid).not.to.equal(dataKeyBefore);
    }
    expect(underNew[rotated.kid]).to.equal(underOld[rotated.kid]);
    const seeds = await db.seed.findMany({ where: { session: { operatorId: created.operatorId } } });
    expect(seeds).to.have.length(2);
    for (const seed of seeds) {
      expect(underNew[seed.id], seed.id).not.to.equal(underOld[seed.id]);
      expect(serverSeedHash(openServerSeed(key(NEW), seed.id, seed.encryptedServerSeed)), 'the commitment still holds').to.equal(seed.serverSeedHash);
      expect(() => openServerSeed(key(OLD), seed.id, seed.encryptedServerSeed)).to.throw();
    }
    const apiRow = await db.credential.findUniqueOrThrow({ where: { kid: created.apiKeyId } });
    expect(revealSecret(key(NEW), apiRow)).to.equal(created.apiSecret);
    expect(() => revealSecret(key(OLD), apiRow)).to.throw(CredentialUnreadableError);

    // a rerun finds everything under the new key and changes nothing
    expect(ok(await rewrap(OLD, NEW))).to.deep.equal({
      credentials: { rewrapped: 0, alreadyUnderNewKey: 2, revokedSkipped: 1, publicKeySkipped: 0 },
      seeds: { rewrapped: 0, alreadyUnderNewKey: 2 },
      signingKeys: { rewrapped: 0, alreadyUnderNewKey: 2 },
    });
    expect(await sealedRows()).to.deep.equal(underNew);

    // the service started with the new key
    const after = await startHarness(serviceEnv(NEW));
    try {
      const walletCalls = wallet.requests.length;
      const launched = await launch(after);
      expect(launched.status, launched.text).to.equal(200);
      const balanceCall = wallet.requests.slice(walletCalls).find((request) => request.endpoint === 'balance');
      expect(balanceCall?.headers['x-rgs-key-id']).to.equal(created.walletKeyId);
      expect(balanceCall?.signatureValid, 'the wallet call is signed with the unchanged wallet secret').to.equal(true);

      const proof = await signedRequest(after.baseUrl, apiKey, 'GET', `/v1/rounds/${round.roundId}/proof`);
      expect(proof.status, proof.text).to.equal(200);
      expect((proof.body as { serverSeed: string }).serverSeed).to.equal(fixture.serverSeed);
      const hashCheck = verifyDiceProof(proof.body).checks.find((check) => check.name === 'server_seed_hash');
      expect(hashCheck?.ok).to.equal(true);

      // the dispute pack is signed with the same key, opened under the new MASTER_KEY (D32)
      const pack = await signedRequest(after.baseUrl, apiKey, 'GET', `/v1/rounds/${round.roundId}/dispute-pack`);
      expect(pack.status, pack.text).to.equal(200);
      expect(pack.headers.get('content-type')).to.equal('application/zip');

      // the session launched before the rewrap ends normally
      const terminated = await signedRequest(after.baseUrl, apiKey, 'POST', `/v1/session/${launchedSessionId}/terminate`, { reason: 'rewrap test' });
      expect(terminated.status, terminated.text).to.equal(200);
    } finally {
      await after.close();
    }
  });

  it('without MASTER_KEY the development key is the old one; a development NEW_MASTER_KEY is refused in production and warned about elsewhere', async () => {
    const before = await sealedRows();
    // usage errors: the new key missing or malformed
    for (const [result, message] of [
      [await rewrap(NEW, undefined), 'NEW_MASTER_KEY is required'],
      [await rewrap(NEW, 'not-a-key'), 'NEW_MASTER_KEY must be 32 bytes'],
    ] as const) {
      expect(result.code, result.stderr).to.equal(2);
      const [line, hint, ...rest] = result.stderr.trimEnd().split('\n');
      expect(rest).to.deep.equal([]);
      expect(line).to.satisfy((text: string) => text.startsWith(`rgs master-key rewrap: ${message}`));
      expect(hint).to.equal("Run 'rgs master-key rewrap --help' for usage.");
    }
    const production = refused(await rewrap(NEW, DEVELOPMENT_KEY, { NODE_ENV: 'production' }));
    expect(production.message).to.include('NEW_MASTER_KEY').and.include('production');
    expect(await sealedRows()).to.deep.equal(before);

    // elsewhere the rows move to the development key, and stderr says so
    const toDevelopment = await rewrap(NEW, DEVELOPMENT_KEY);
    expect(toDevelopment.code, toDevelopment.stderr).to.equal(0);
    expect(JSON.parse(toDevelopment.stdout).credentials.rewrapped).to.equal(2);
    const warning = JSON.parse(toDevelopment.stderr);
    expect(warning.warning).to.equal('development_master_key');
    expect(warning.message).to.include('NEW_MASTER_KEY is the development key');

    // and back: with MASTER_KEY unset the old key is the development key
    const back = ok(await rewrap(undefined, NEW));
    expect(back).to.deep.equal({
      credentials: { rewrapped: 2, alreadyUnderNewKey: 0, revokedSkipped: 1, publicKeySkipped: 0 },
      // the two of the first test and the session launched after its rewrap
      seeds: { rewrapped: 3, alreadyUnderNewKey: 0 },
      signingKeys: { rewrapped: 2, alreadyUnderNewKey: 0 },
    });
    const apiRow = await db.credential.findUniqueOrThrow({ where: { kid: created.apiKeyId } });
    expect(revealSecret(key(NEW), apiRow)).to.equal(created.apiSecret);
  });

  it('refuses when a row opens under neither key, names every such row, and changes nothing', async () => {
    // a credential and a seed sealed under a third key (a database restored from elsewhere)
    const stranger = ok(
      await rgs({ MASTER_KEY: OTHER }, 'operator', 'create', '--id', uniqueId('stranger'), '--wallet-url', wallet.url),
    ) as Created;
    const strangerSeed = await roundFixtures({ db, config: { masterKey: key(OTHER) } as Config }).session(stranger.operatorId);
    const strangerKey = ok(await rgs({ MASTER_KEY: OTHER }, 'signing-key', 'rotate')) as { kid: string };
    const before = await sealedRows();

    const error = refused(await rewrap(NEW, OLD));
    expect(error.error).to.equal('MasterKeyRewrapError');
    expect(error.message).to.include('nothing was changed');
    for (const name of [stranger.apiKeyId, stranger.walletKeyId, strangerSeed.seedId, strangerKey.kid]) expect(error.message).to.include(name);
    expect(error.unreadable).to.deep.equal({
      credentialCount: 2,
      seedCount: 1,
      signingKeyCount: 1,
      signingKeys: [{ kid: strangerKey.kid }],
      credentials: [
        { kid: stranger.apiKeyId, operatorId: stranger.operatorId },
        { kid: stranger.walletKeyId, operatorId: stranger.operatorId },
      ].sort((a, b) => (a.kid < b.kid ? -1 : 1)),
      seeds: [{ seedId: strangerSeed.seedId, sessionId: strangerSeed.sessionId }],
    });
    // the rows that did open under NEW were not moved either: one transaction
    expect(await sealedRows()).to.deep.equal(before);

    // with the wrong MASTER_KEY nothing opens, and the error says what that suggests
    const wrong = refused(await rewrap('11'.repeat(32), '22'.repeat(32)));
    expect(wrong.message).to.include('MASTER_KEY is probably not the key');
    expect(await sealedRows()).to.deep.equal(before);
  });
});
