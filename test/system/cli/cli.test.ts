import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { revealSecret } from '../../../src/shared/wallet/credentials.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { startHarness, uniqueId, type Harness } from '../../support/harness.js';
import { signedRequest, type ApiKey, type ApiResponse } from '../../support/signed-client.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// The `rgs` administration tool (DECISIONS D11), run as the real subprocess an operator's
// administrator runs: JSON on stdout; on failure a JSON error on stderr and exit 1; a
// command line it does not understand gets one line and a hint on stderr and exit 2
// (test/system/cli/help.test.ts has the rest of that). Its effects are checked in the
// database and through the API.

const HEX_SECRET = /^[0-9a-f]{128}$/;
const DAY_MS = 24 * 60 * 60 * 1000;
// the service and the CLI share a master key that is not the development one, which the
// CLI would warn about on stderr (D25; test/system/cli/production.test.ts)
const SECRETS = { MASTER_KEY: '5a'.repeat(32), JWT_SECRET: 'cli-test-jwt-secret-'.padEnd(48, 'x') };

const rgs = (...args: string[]) => runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL, ...SECRETS } });

// exit 0 with one JSON document on stdout and nothing on stderr
function ok(result: CliResult): any {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
  expect(result.stderr).to.equal('');
  return JSON.parse(result.stdout);
}

// a non-zero exit with a JSON error on stderr and nothing on stdout
function failed(result: CliResult, code: number): { error: string; message: string } & Record<string, unknown> {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(code);
  expect(result.stdout).to.equal('');
  const error = JSON.parse(result.stderr);
  expect(error.error).to.be.a('string').and.not.equal('');
  expect(error.message).to.be.a('string').and.not.equal('');
  expect(result.stderr).not.to.match(/\n\s+at /); // no stack trace
  return error;
}

describe('rgs CLI (D11)', () => {
  let h: Harness;

  // created once through the CLI; the create, duplicate and suspension tests use it
  const cliOperatorId = uniqueId('cli');
  let createResult: CliResult;

  before(async () => {
    h = await startHarness(SECRETS);
    createResult = await rgs('operator', 'create', '--id', cliOperatorId, '--wallet-url', `${h.wallet.url}/`, '--currency', 'EUR,USD');
  });
  after(() => h.close());

  // the service clock may be moved; requests are signed with the service's idea of now
  const serviceSeconds = () => Math.floor(h.svc.now().getTime() / 1000);

  const launch = (key: ApiKey, operatorId: string, overrides: Record<string, unknown> = {}) =>
    signedRequest(
      h.baseUrl,
      key,
      'POST',
      '/v1/session',
      { operatorId, playerRef: uniqueId('player'), gameCode: 'dice', currency: 'EUR', lang: 'en', jurisdiction: 'MT', ...overrides },
      { timestamp: serviceSeconds() },
    );

  // a cheap signed call: GET is not replay-checked, and 404 round_not_found means the signature was accepted
  const disputePack = (key: ApiKey) =>
    signedRequest(h.baseUrl, key, 'GET', `/v1/rounds/${randomUUID()}/dispute-pack`, undefined, { timestamp: serviceSeconds() });

  const sessionCount = (operatorId: string) => h.svc.db.session.count({ where: { operatorId } });

  function expectRejected(res: ApiResponse, reason: string): void {
    expect(res.status, res.text).to.equal(422);
    expect(res.body).to.include({ error: 'session_rejected', status: 'RS_ERROR_USER_DISABLED', reason });
  }

  function expectKeyNotValidNow(res: ApiResponse): void {
    expect(res.status, res.text).to.equal(401);
    expect(res.body).to.include({ error: 'key_not_valid_now', status: 'RS_ERROR_INVALID_SIGNATURE' });
  }

  type Created = { operatorId: string; apiKeyId: string; apiSecret: string; walletKeyId: string; walletSignatureSecret: string };

  const apiKey = (created: Created): ApiKey => ({ kid: created.apiKeyId, secret: created.apiSecret });

  it('rgs migrate on the migrated database applies nothing', async () => {
    const result = ok(await rgs('migrate'));
    expect(result.database).to.equal(new URL(TEST_DATABASE_URL).pathname.slice(1));
    expect(result.created).to.equal(false);
    expect(result.applied).to.deep.equal([]);
    expect(result.alreadyApplied).to.be.an('array').that.is.not.empty;
  });

  it('operator create prints the credentials once and stores only their ciphertext', async () => {
    const id = cliOperatorId;
    const created = ok(createResult);
    expect(created).to.have.all.keys('operatorId', 'apiKeyId', 'apiSecret', 'walletKeyId', 'walletSignatureSecret');
    expect(created.operatorId).to.equal(id);
    expect(created.apiSecret).to.match(HEX_SECRET);
    expect(created.walletSignatureSecret).to.match(HEX_SECRET);
    expect(created.apiSecret).not.to.equal(created.walletSignatureSecret);
    expect(created.apiKeyId).to.be.a('string').and.not.equal(created.walletKeyId);

    const operator = await h.svc.db.operator.findUniqueOrThrow({ where: { id } });
    expect(operator.walletUrl).to.equal(h.wallet.url);
    expect(operator.currencies).to.deep.equal(['EUR', 'USD']);
    expect(operator.suspended).to.equal(false);

    const rows = await h.svc.db.credential.findMany({ where: { operatorId: id }, orderBy: { kind: 'asc' } });
    expect(rows.map((row) => [row.kind, row.kid])).to.deep.equal([
      ['API', created.apiKeyId],
      ['WALLET', created.walletKeyId],
    ]);
    for (const row of rows) {
      const secret = row.kind === 'API' ? created.apiSecret : created.walletSignatureSecret;
      for (const column of [Buffer.from(row.encryptedSecret), Buffer.from(row.wrappedDataKey)]) {
        expect(column.includes(Buffer.from(secret, 'utf8')), 'the secret text').to.equal(false);
        expect(column.includes(Buffer.from(secret.slice(0, 32), 'utf8')), 'a part of the secret text').to.equal(false);
        expect(column.includes(Buffer.from(secret, 'hex').subarray(0, 16)), 'the secret bytes').to.equal(false);
      }
      expect(JSON.stringify(row, (_key, value) => (typeof value === 'bigint' ? String(value) : value))).not.to.include(secret);
      // ...and that ciphertext is of exactly the printed secret
      expect(revealSecret(h.svc.config.masterKey, row)).to.equal(secret);
      expect(row.notBefore.getTime()).to.be.closeTo(Date.now(), 60_000);
      expect(row.notAfter).to.equal(null);
      expect(row.revokedAt).to.equal(null);
    }
  });

  // the operator created in before(), its wallet secret registered at the simulator
  function cliOperator(): Created {
    const created = ok(createResult) as Created;
    h.wallet.addCredential(created.walletKeyId, created.walletSignatureSecret);
    return created;
  }

  it('operator create with an existing id exits 1 with a JSON error and changes nothing', async () => {
    const created = cliOperator();
    const error = failed(await rgs('operator', 'create', '--id', created.operatorId, '--wallet-url', 'https://other.example'), 1);
    expect(error.error).not.to.equal('usage');
    expect(error.message).to.include('already exists');
    const operator = await h.svc.db.operator.findUniqueOrThrow({ where: { id: created.operatorId } });
    expect(operator.walletUrl).to.equal(h.wallet.url);
    expect(operator.currencies).to.deep.equal(['EUR', 'USD']);
    expect(await h.svc.db.credential.count({ where: { operatorId: created.operatorId } })).to.equal(2);
  });

  it('usage errors exit 2 with one line naming the command and a hint on stderr, nothing on stdout', async () => {
    const id = uniqueId('cli');
    const cases: [string[], string, string][] = [
      [['frobnicate'], 'rgs', "unknown command 'frobnicate'"],
      [['operator', 'create', '--wallet-url', 'https://wallet.example'], 'rgs operator create', "'--id <id>' not specified"],
      [['operator', 'create', '--id', id, '--wallet-url', 'https://wallet.example', '--no-such-flag', 'x'], 'rgs operator create', "unknown option '--no-such-flag'"],
      [['credential', 'rotate', '--operator', id, '--kind', 'root'], 'rgs credential rotate', "'root' is invalid"],
      [['operator', 'update', '--id', id, '--suspended', 'maybe'], 'rgs operator update', "'maybe' is invalid"],
    ];
    const results = await Promise.all(cases.map(([args]) => rgs(...args)));
    results.forEach((result, index) => {
      const [args, command, message] = cases[index]!;
      expect(result.code, args.join(' ')).to.equal(2);
      expect(result.stdout).to.equal('');
      const [line, hint, ...rest] = result.stderr.trimEnd().split('\n');
      expect(rest, result.stderr).to.deep.equal([]);
      expect(line, args.join(' ')).to.satisfy((text: string) => text.startsWith(`${command}: `)).and.include(message);
      expect(hint).to.equal(`Run '${command} --help' for usage.`);
    });
    // nothing was created on the way
    expect(await h.svc.db.operator.count({ where: { id } })).to.equal(0);
  });

  it('operator update --suspended true refuses launches with 422 operator_suspended; false restores them', async () => {
    const created = cliOperator();
    const key = apiKey(created);
    const before = await launch(key, created.operatorId);
    expect(before.status, before.text).to.equal(200);

    const suspended = ok(await rgs('operator', 'update', '--id', created.operatorId, '--suspended', 'true'));
    expect(suspended).to.include({ operatorId: created.operatorId, suspended: true });
    expect((await h.svc.db.operator.findUniqueOrThrow({ where: { id: created.operatorId } })).suspended).to.equal(true);
    expectRejected(await launch(key, created.operatorId), 'operator_suspended');
    expect(await sessionCount(created.operatorId)).to.equal(1);

    expect(ok(await rgs('operator', 'update', '--id', created.operatorId, '--suspended', 'false'))).to.include({ suspended: false });
    const after = await launch(key, created.operatorId);
    expect(after.status, after.text).to.equal(200);
    expect(await sessionCount(created.operatorId)).to.equal(2);
  });

  it('operator update --rg-max MT:sessionTimeSeconds=600 makes a launch without rgLimits 422 rg_limit_set_too_loose', async () => {
    const created = await h.onboard();
    const key = apiKey(created);
    const updated = ok(await rgs('operator', 'update', '--id', created.operatorId, '--rg-max', 'MT:sessionTimeSeconds=600'));
    expect(updated.rgMaxima).to.deep.equal({ MT: { sessionTimeSeconds: '600' } });

    expectRejected(await launch(key, created.operatorId), 'rg_limit_set_too_loose');
    expectRejected(await launch(key, created.operatorId, { rgLimits: { sessionTimeSeconds: 601 } }), 'rg_limit_set_too_loose');
    expect(await sessionCount(created.operatorId)).to.equal(0);
    const within = await launch(key, created.operatorId, { rgLimits: { sessionTimeSeconds: 600 } });
    expect(within.status, within.text).to.equal(200);
    // the maxima are per jurisdiction
    const elsewhere = await launch(key, created.operatorId, { jurisdiction: 'SE' });
    expect(elsewhere.status, elsewhere.text).to.equal(200);
    expect(await sessionCount(created.operatorId)).to.equal(2);
  });

  it('game config prints the merged config and stores it (payoutMultiplier scaled by 100000)', async () => {
    const created = await h.onboard();
    const printed = ok(
      await rgs(
        'game', 'config', '--operator', created.operatorId, '--game', 'dice', '--currency', 'EUR',
        '--betting-window-ms', '1000', '--payout-multiplier', '1.95', '--min-bet-micro', '100',
      ),
    );
    expect(printed).to.deep.equal({
      operatorId: created.operatorId,
      gameCode: 'dice',
      currency: 'EUR',
      bettingWindowMs: 1000,
      rollingWindowMs: 4000,
      cooldownMs: 3000,
      minBetMicro: '100',
      maxBetMicro: '100000000',
      commissionMicro: '3000',
      payoutMultiplier: '1.95',
      lowWeight: '1',
      highWeight: '1',
      // D46: the currency's minor unit, until the operator sets it
      stakeStepMicro: '1000',
      payoutRounding: 'exact',
    });
    const [row] = await h.svc.db.$queryRaw<Record<string, unknown>[]>`
      SELECT betting_window_ms, min_bet_micro::text AS min_bet_micro, max_bet_micro::text AS max_bet_micro,
             payout_multiplier_scaled::text AS payout_multiplier_scaled
      FROM game_configs WHERE operator_id = ${created.operatorId} AND game_code = 'dice' AND currency = 'EUR'`;
    expect(row).to.deep.equal({
      betting_window_ms: 1000,
      min_bet_micro: '100',
      max_bet_micro: '100000000',
      payout_multiplier_scaled: '195000',
    });

    // a later change merges with what is stored
    const merged = ok(
      await rgs('game', 'config', '--operator', created.operatorId, '--game', 'dice', '--currency', 'EUR', '--max-bet-micro', '12345678901234567'),
    );
    expect(merged).to.include({ bettingWindowMs: 1000, payoutMultiplier: '1.95', minBetMicro: '100', maxBetMicro: '12345678901234567' });
    const stored = await h.svc.db.gameConfig.findUniqueOrThrow({
      where: { operatorId_gameCode_currency: { operatorId: created.operatorId, gameCode: 'dice', currency: 'EUR' } },
    });
    expect(stored.maxBetMicro).to.equal(12345678901234567n);
  });

  it('an invalid game config exits 1 and stores nothing', async () => {
    const created = await h.onboard();
    const base = ['game', 'config', '--operator', created.operatorId, '--currency', 'EUR'];
    const cases: string[][] = [
      [...base, '--game', 'dice', '--min-bet-micro', '500', '--max-bet-micro', '100'],
      [...base, '--game', 'roulette'],
    ];
    const results = await Promise.all(cases.map((args) => rgs(...args)));
    results.forEach((result, index) => {
      const error = failed(result, 1);
      expect(error.error, cases[index]!.join(' ')).not.to.equal('usage');
    });
    expect(await h.svc.db.gameConfig.count({ where: { operatorId: created.operatorId } })).to.equal(0);
  });

  it('credential rotate --kind wallet: the next wallet call is signed with the new wallet kid', async () => {
    const created = await h.onboard();
    const key = apiKey(created);
    const walletRequests = () =>
      h.wallet.requests.filter((request) => (request.body as { operatorId?: string } | undefined)?.operatorId === created.operatorId);

    expect((await launch(key, created.operatorId)).status).to.equal(200);
    expect(walletRequests().at(-1)!.headers['x-rgs-key-id']).to.equal(created.walletKeyId);

    const rotation = ok(await rgs('credential', 'rotate', '--operator', created.operatorId, '--kind', 'wallet'));
    expect(rotation).to.have.all.keys('kind', 'kid', 'secret', 'notBefore', 'previousKid', 'previousNotAfter');
    expect(rotation).to.include({ kind: 'wallet', previousKid: created.walletKeyId });
    expect(rotation.secret).to.match(HEX_SECRET);
    expect(rotation.kid).not.to.equal(created.walletKeyId);
    h.wallet.addCredential(rotation.kid, rotation.secret);

    const res = await launch(key, created.operatorId);
    expect(res.status, res.text).to.equal(200);
    const last = walletRequests().at(-1)!;
    expect(last.endpoint).to.equal('balance');
    expect(last.headers['x-rgs-key-id']).to.equal(rotation.kid);
    expect(last.signatureValid, 'signed with the new wallet secret').to.equal(true);
    expect(walletRequests()).to.have.length(2);
  });

  it('jobs abandoned lists the wallet jobs given up on, and only those', async () => {
    const created = await h.onboard();
    const mine = (result: { jobs: { operatorId: string }[] }) => result.jobs.filter((job) => job.operatorId === created.operatorId);

    const empty = ok(await rgs('jobs', 'abandoned'));
    expect(empty).to.have.all.keys('jobs');
    expect(empty.jobs).to.be.an('array');
    expect(mine(empty)).to.deep.equal([]);

    const abandonedAt = new Date(Date.now() - 60_000);
    const abandoned = {
      id: randomUUID(),
      operatorId: created.operatorId,
      endpoint: 'rollback',
      purpose: 'round_voided',
      transactionUuid: randomUUID(),
      payload: { referenceTransactionUuid: randomUUID(), amountMicro: '12345678901234567' },
      attempts: 57,
      lastError: 'HTTP 500',
      abandonedAt,
    };
    await h.svc.db.walletJob.create({ data: abandoned });
    // a job still being retried and a completed one are not listed
    await h.svc.db.walletJob.create({
      data: { id: randomUUID(), operatorId: created.operatorId, endpoint: 'win', purpose: 'win', transactionUuid: randomUUID(), payload: {}, attempts: 3 },
    });
    await h.svc.db.walletJob.create({
      data: { id: randomUUID(), operatorId: created.operatorId, endpoint: 'win', purpose: 'win', transactionUuid: randomUUID(), payload: {}, completedAt: new Date() },
    });

    const listed = mine(ok(await rgs('jobs', 'abandoned')));
    expect(listed).to.have.length(1);
    expect(listed[0]).to.deep.include({
      id: abandoned.id,
      operatorId: created.operatorId,
      endpoint: 'rollback',
      transactionUuid: abandoned.transactionUuid,
      attempts: 57,
      lastError: 'HTTP 500',
      abandonedAt: abandonedAt.toISOString(),
      payload: abandoned.payload,
    });
  });

  it('operator list: each operator with its status, wallet URL and credentials (kids, validity, never a secret); --json for machines', async () => {
    const created = await h.onboard({ currencies: ['EUR', 'USD'] });
    const rotation = ok(await rgs('credential', 'rotate', '--operator', created.operatorId, '--kind', 'api'));
    ok(await rgs('credential', 'revoke', '--kid', rotation.kid));
    ok(await rgs('operator', 'update', '--id', created.operatorId, '--suspended', 'true'));
    // the wallet key's end has passed (as it would a day after a rotation)
    const walletEnded = new Date(Date.now() - 60_000);
    await h.svc.db.credential.update({ where: { kid: created.walletKeyId }, data: { notAfter: walletEnded } });
    const secrets = [created.apiSecret, created.walletSignatureSecret, rotation.secret as string];

    const json = await rgs('operator', 'list', '--json');
    const listed = ok(json);
    const ids = listed.operators.map((operator: { operatorId: string }) => operator.operatorId);
    expect(ids).to.include.members([created.operatorId, cliOperatorId]);
    expect(ids).to.deep.equal([...ids].sort());
    const mine = listed.operators.find((operator: { operatorId: string }) => operator.operatorId === created.operatorId);
    expect(mine).to.deep.include({ status: 'suspended', walletUrl: h.wallet.url, currencies: ['EUR', 'USD'] });
    expect(mine.credentials).to.deep.equal([
      { kid: created.apiKeyId, kind: 'api', status: 'valid', notBefore: mine.credentials[0].notBefore, notAfter: rotation.previousNotAfter, revokedAt: null },
      { kid: rotation.kid, kind: 'api', status: 'revoked', notBefore: rotation.notBefore, notAfter: null, revokedAt: mine.credentials[1].revokedAt },
      { kid: created.walletKeyId, kind: 'wallet', status: 'expired', notBefore: mine.credentials[2].notBefore, notAfter: walletEnded.toISOString(), revokedAt: null },
    ]);
    expect(Date.parse(mine.credentials[1].revokedAt)).to.be.closeTo(Date.now(), 60_000);
    expect(listed.operators.find((operator: { operatorId: string }) => operator.operatorId === cliOperatorId).status).to.equal('active');

    // the table: one line per credential, the operator's own columns on its first line
    const table = await rgs('operator', 'list');
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stderr).to.equal('');
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).to.match(/^OPERATOR\s+STATUS\s+WALLET URL\s+CURRENCIES\s+KIND\s+KID\s+VALIDITY$/);
    const first = lines.findIndex((line) => line.startsWith(`${created.operatorId} `));
    const [apiLine, rotatedLine, walletLine] = lines.slice(first, first + 3);
    expect(apiLine!.split(/\s+/).slice(0, 6)).to.deep.equal([created.operatorId, 'suspended', h.wallet.url, 'EUR,USD', 'api', created.apiKeyId]);
    expect(apiLine).to.include(`until ${rotation.previousNotAfter.replace(/\.\d{3}Z$/, 'Z')}`).and.include('valid since');
    expect(rotatedLine!.trim().split(/\s+/).slice(0, 3)).to.deep.equal(['api', rotation.kid, 'revoked']);
    expect(walletLine!.trim().split(/\s+/).slice(0, 3)).to.deep.equal(['wallet', created.walletKeyId, 'expired']);

    for (const output of [json.stdout, table.stdout]) {
      for (const secret of secrets) expect(output).not.to.include(secret.slice(0, 16));
    }
  });

  // Last: it moves the service clock a day forward for the rest of this file.
  it('credential rotate --kind api: both keys work for 24 h, then only the new one; revoke is immediate', async () => {
    const created = await h.onboard();
    const oldKey = apiKey(created);
    const rotation = ok(await rgs('credential', 'rotate', '--operator', created.operatorId, '--kind', 'api'));
    expect(rotation).to.have.all.keys('kind', 'kid', 'secret', 'notBefore', 'previousKid', 'previousNotAfter');
    expect(rotation).to.include({ kind: 'api', previousKid: created.apiKeyId });
    expect(rotation.kid).to.be.a('string').and.not.equal(created.apiKeyId);
    expect(rotation.secret).to.match(HEX_SECRET);
    expect(Date.parse(rotation.notBefore)).to.be.closeTo(Date.now(), 60_000);
    expect(Date.parse(rotation.previousNotAfter)).to.be.closeTo(Date.now() + DAY_MS, 60_000);
    const newKey = { kid: rotation.kid as string, secret: rotation.secret as string };

    const oldRow = await h.svc.db.credential.findUniqueOrThrow({ where: { kid: created.apiKeyId } });
    expect(oldRow.notAfter?.toISOString()).to.equal(rotation.previousNotAfter);

    // during the overlap both keys sign accepted requests
    expect((await disputePack(oldKey)).status).to.equal(404);
    expect((await disputePack(newKey)).status).to.equal(404);
    expect((await launch(oldKey, created.operatorId, { mode: 'demo' })).status).to.equal(200);
    expect((await launch(newKey, created.operatorId, { mode: 'demo' })).status).to.equal(200);

    // past previousNotAfter the old key is refused and the new one still works
    h.shiftClock(DAY_MS + 60_000);
    expectKeyNotValidNow(await disputePack(oldKey));
    expectKeyNotValidNow(await launch(oldKey, created.operatorId, { mode: 'demo' }));
    expect((await disputePack(newKey)).status).to.equal(404);
    const res = await launch(newKey, created.operatorId, { mode: 'demo' });
    expect(res.status, res.text).to.equal(200);
    expect(await sessionCount(created.operatorId)).to.equal(3);

    // credential revoke: immediate, and the row stays with its ciphertext zeroed
    const before = await h.svc.db.credential.findUniqueOrThrow({ where: { kid: newKey.kid } });
    const revoked = ok(await rgs('credential', 'revoke', '--kid', newKey.kid));
    expect(revoked).to.include({ kid: newKey.kid, operatorId: created.operatorId, kind: 'api' });
    expect(Date.parse(revoked.revokedAt)).to.be.closeTo(Date.now(), 60_000);
    expectKeyNotValidNow(await disputePack(newKey));
    expectKeyNotValidNow(await launch(newKey, created.operatorId, { mode: 'demo' }));
    expect(await sessionCount(created.operatorId)).to.equal(3);

    const after = await h.svc.db.credential.findUniqueOrThrow({ where: { kid: newKey.kid } });
    expect(after.revokedAt).to.be.instanceOf(Date);
    expect(before.encryptedSecret.length).to.be.above(0);
    expect(before.wrappedDataKey.length).to.be.above(0);
    expect(after.encryptedSecret.length).to.equal(before.encryptedSecret.length);
    expect(after.wrappedDataKey.length).to.equal(before.wrappedDataKey.length);
    expect([...after.encryptedSecret].every((byte) => byte === 0), 'encrypted_secret zeroed').to.equal(true);
    expect([...after.wrappedDataKey].every((byte) => byte === 0), 'wrapped_data_key zeroed').to.equal(true);
  });
});
