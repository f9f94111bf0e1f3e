import { expect } from 'chai';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { uniqueId } from '../../support/harness.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// D35, D11: `rgs operator create|update --sandbox true|false`, shown by `operator show` and
// `operator list`; refused with NODE_ENV=production unless SANDBOX_ENABLED=true.

const REAL = { MASTER_KEY: '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0', JWT_SECRET: 'q'.repeat(48) };

const rgs = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL, ...env }, unset: ['MASTER_KEY', 'JWT_SECRET', 'NODE_ENV', 'SANDBOX_ENABLED'], timeoutMs: 30_000 });

function succeeded(result: CliResult): any {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
  return JSON.parse(result.stdout);
}

describe('rgs operator --sandbox (D35)', function () {
  this.timeout(60_000);

  it('creates, shows, lists and updates a sandbox operator', async () => {
    const id = uniqueId('sb');
    succeeded(await rgs(REAL, 'operator', 'create', '--id', id, '--wallet-url', 'http://127.0.0.1:4100', '--sandbox', 'true'));
    expect(succeeded(await rgs(REAL, 'operator', 'show', '--id', id))).to.include({ operatorId: id, sandbox: true });
    const listed = succeeded(await rgs(REAL, 'operator', 'list', '--json')).operators.find((o: { operatorId: string }) => o.operatorId === id);
    expect(listed).to.include({ status: 'active', sandbox: true });
    const table = await rgs(REAL, 'operator', 'list');
    expect(table.stdout.split('\n').find((line) => line.startsWith(id))).to.include('active, sandbox');
    expect(succeeded(await rgs(REAL, 'operator', 'update', '--id', id, '--sandbox', 'false'))).to.include({ sandbox: false });
  });

  it('with NODE_ENV=production: refused unless SANDBOX_ENABLED=true', async () => {
    const production = { ...REAL, NODE_ENV: 'production' };
    const id = uniqueId('sb');
    const refused = await rgs(production, 'operator', 'create', '--id', id, '--wallet-url', 'https://8.8.8.8/wallet', '--sandbox', 'true');
    expect(refused.code, refused.stderr).to.equal(1);
    expect(JSON.parse(refused.stderr).message).to.include('SANDBOX_ENABLED=true');
    succeeded(await rgs(production, 'operator', 'create', '--id', id, '--wallet-url', 'https://8.8.8.8/wallet'));
    const update = await rgs(production, 'operator', 'update', '--id', id, '--sandbox', 'true');
    expect(update.code, update.stderr).to.equal(1);
    const allowed = succeeded(await rgs({ ...production, SANDBOX_ENABLED: 'true' }, 'operator', 'update', '--id', id, '--sandbox', 'true'));
    expect(allowed).to.include({ sandbox: true });
  });
});
