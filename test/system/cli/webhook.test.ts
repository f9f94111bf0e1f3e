import { expect } from 'chai';
import { createDb, type Db } from '../../../src/shared/platform/db/client.js';
import { loadConfig } from '../../../src/shared/platform/config.js';
import { createOperator } from '../../../src/shared/game/operators/operators.js';
import { EVENT_TYPES } from '../../../src/shared/domain/events.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { uniqueId } from '../../support/harness.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// `rgs webhook set/show/disable` (D31): an operator's webhook endpoint, its URL checked like
// a wallet URL (D25), as the administrator's subprocess runs it.

const REAL = { MASTER_KEY: '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0', JWT_SECRET: 'q'.repeat(48) };

const rgs = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL, ...REAL, ...env }, unset: ['NODE_ENV'], timeoutMs: 30_000 });

function succeeded(result: CliResult): any {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
  expect(result.stderr).to.equal('');
  return JSON.parse(result.stdout);
}

function refused(result: CliResult): { error: string; message: string } {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(1);
  expect(result.stdout).to.equal('');
  const error = JSON.parse(result.stderr);
  expect(result.stderr).not.to.match(/\n\s+at /);
  return error;
}

describe('rgs webhook (D31)', function () {
  this.timeout(90_000);
  let db: Db;
  let operatorId: string;

  before(async () => {
    db = createDb(TEST_DATABASE_URL, 2);
    operatorId = (await createOperator(db, loadConfig().masterKey, uniqueId('wh'), { walletUrl: 'http://127.0.0.1:9/wallet' })).operatorId;
  });
  after(() => db.$disconnect());

  it('set takes every event type by default, show prints it, disable stops it, set again enables it', async () => {
    const set = succeeded(await rgs({}, 'webhook', 'set', '--operator', operatorId, '--url', 'http://127.0.0.1:8080/hooks'));
    expect(set).to.deep.include({ operatorId, url: 'http://127.0.0.1:8080/hooks', urlPrivateAllowed: false, events: [...EVENT_TYPES], enabled: true });
    expect(succeeded(await rgs({}, 'webhook', 'show', '--operator', operatorId))).to.deep.equal(set);

    const disabled = succeeded(await rgs({}, 'webhook', 'disable', '--operator', operatorId));
    expect(disabled).to.deep.include({ url: set.url, enabled: false });
    expect((await db.webhookEndpoint.findUniqueOrThrow({ where: { operatorId } })).enabled).to.equal(false);

    const chosen = succeeded(
      await rgs({}, 'webhook', 'set', '--operator', operatorId, '--url', 'https://hooks.example/rgs', '--events', 'session.terminated,round.settled'),
    );
    // in the order of the list of types, whatever the order given
    expect(chosen).to.deep.include({ url: 'https://hooks.example/rgs', events: ['round.settled', 'session.terminated'], enabled: true });
  });

  it('refuses what a wallet URL may not be, an unknown event type and an unknown operator, changing nothing', async () => {
    const before = await db.webhookEndpoint.findUniqueOrThrow({ where: { operatorId } });
    const cases: [string[], RegExp][] = [
      [['--url', 'not a url'], /webhook URL must be an http\(s\) URL/],
      [['--url', 'ftp://hooks.example/x'], /webhook URL must be an http\(s\) URL/],
      [['--url', 'https://hooks.example/x?token=1'], /without query or fragment/],
      [['--url', 'https://user:pw@hooks.example/x'], /must not carry credentials/],
      [['--url', 'https://hooks.example/x', '--events', 'round.settled,round.exploded'], /unknown event type round\.exploded/],
    ];
    for (const [args, message] of cases) {
      const error = refused(await rgs({}, 'webhook', 'set', '--operator', operatorId, ...args));
      expect(error.error, args.join(' ')).to.equal('WebhookInputError');
      expect(error.message, args.join(' ')).to.match(message);
    }
    expect(refused(await rgs({}, 'webhook', 'set', '--operator', 'nobody-here', '--url', 'https://hooks.example/x')).message).to.match(/does not exist/);
    expect(refused(await rgs({}, 'webhook', 'show', '--operator', 'nobody-here')).message).to.match(/does not exist/);
    const bare = (await createOperator(db, loadConfig().masterKey, uniqueId('bare'), { walletUrl: 'http://127.0.0.1:9/wallet' })).operatorId;
    expect(refused(await rgs({}, 'webhook', 'show', '--operator', bare)).message).to.match(/has no webhook endpoint/);
    expect(refused(await rgs({}, 'webhook', 'disable', '--operator', bare)).message).to.match(/has no webhook endpoint/);
    expect(await db.webhookEndpoint.findUniqueOrThrow({ where: { operatorId } })).to.deep.equal(before);
  });

  it('with NODE_ENV=production: https: only, public addresses only unless --url-private-allowed true (D25)', async () => {
    const production = { NODE_ENV: 'production' };
    expect(refused(await rgs(production, 'webhook', 'set', '--operator', operatorId, '--url', 'http://8.8.8.8/hooks')).message).to.match(
      /webhook URL must be https: in production/,
    );
    const loopback = refused(await rgs(production, 'webhook', 'set', '--operator', operatorId, '--url', 'https://127.0.0.1/hooks'));
    expect(loopback.message).to.match(/webhook URL host 127\.0\.0\.1 resolves to 127\.0\.0\.1 \(loopback\), not a public address/);
    expect(loopback.message).to.include('--url-private-allowed true');
    const allowed = succeeded(
      await rgs(production, 'webhook', 'set', '--operator', operatorId, '--url', 'https://127.0.0.1/hooks', '--url-private-allowed', 'true'),
    );
    expect(allowed).to.deep.include({ url: 'https://127.0.0.1/hooks', urlPrivateAllowed: true });
    expect(succeeded(await rgs(production, 'webhook', 'set', '--operator', operatorId, '--url', 'https://8.8.8.8/hooks'))).to.deep.include({
      urlPrivateAllowed: false,
    });
  });

  it('a command line it does not understand is a usage error (exit 2)', async () => {
    const missing = await rgs({}, 'webhook', 'set', '--operator', operatorId);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/--url/);
    const badFlag = await rgs({}, 'webhook', 'set', '--operator', operatorId, '--url', 'https://hooks.example/x', '--url-private-allowed', 'maybe');
    expect(badFlag.code).to.equal(2);
  });
});
