import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { dropDatabase } from '../../../src/platform/db/migrate.js';
import { addMonths, monthOf } from '../../../src/domain/months.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// `rgs partitions ensure`, `rgs archive` and `rgs retention apply` (D36) as an operator's
// administrator runs them, against a database of their own made by `rgs migrate`.
describe('rgs partitions, archive and retention (D36)', function () {
  this.timeout(120_000);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/rgs_partitions_cli_${randomBytes(6).toString('hex')}`;
  const env = { DATABASE_URL: url.toString(), MASTER_KEY: '5a'.repeat(32) };
  const rgs = (...args: string[]) => runRgs(args, { env, timeoutMs: 60_000 });
  let dir: string;

  const ok = (result: CliResult): any => {
    expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
    return JSON.parse(result.stdout);
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rgs-partitions-cli-'));
    ok(await rgs('migrate'));
  });
  after(async () => {
    await dropDatabase(url.toString());
    await rm(dir, { recursive: true, force: true });
  });

  it('ensure makes past months with --from and the months ahead, once', async () => {
    const from = addMonths(monthOf(new Date()), -6);
    const first = ok(await rgs('partitions', 'ensure', '--from', from, '--months-ahead', '4'));
    expect(first.months[0]).to.equal(from);
    expect(first.created).to.include('bets_' + from.replace('-', '_'));
    expect(ok(await rgs('partitions', 'ensure', '--from', from, '--months-ahead', '4')).created).to.deep.equal([]);
    const bad = await rgs('partitions', 'ensure', '--from', '2026-13');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('--from must be a month, YYYY-MM');
  });

  it('retention refuses an age under 120 days, exit 2, and drops the months old enough', async () => {
    for (const young of ['119d', '30d', '0d']) {
      const refused = await rgs('retention', 'apply', '--older-than', young);
      expect(refused.code, young).to.equal(2);
      expect(refused.stdout).to.equal('');
      expect(refused.stderr).to.include(`refused: --older-than ${young.replace(/^0+(?=\d)/, '')} is under 120 days`);
    }
    const dry = ok(await rgs('retention', 'apply', '--older-than', '120d', '--dry-run'));
    expect(dry.dryRun).to.equal(true);
    const applied = ok(await rgs('retention', 'apply', '--older-than', '120d'));
    expect(applied.dropped).to.deep.equal(dry.dropped);
    // 6 months back was made above; at least months -6 to -5 ended over 120 days ago
    expect(applied.dropped).to.include(addMonths(monthOf(new Date()), -6));
    expect(applied.dropped).to.not.include(monthOf(new Date()));
    expect(ok(await rgs('retention', 'apply', '--older-than', '120d')).dropped).to.deep.equal([]);
  });

  it('archive writes a month to a file and says what it holds', async () => {
    const month = monthOf(new Date());
    const file = path.join(dir, `${month}.ndjson.gz`);
    const manifest = ok(await rgs('archive', '--month', month, '--out', file));
    expect(manifest).to.include({ month, file, rgsArchive: 1 });
    expect(manifest.counts).to.have.keys('bets', 'rounds', 'pending_round_bets', 'wallet_calls', 'wallet_jobs', 'webhook_events', 'webhook_attempts');
    expect((await stat(file)).size).to.be.greaterThan(0);
    const missing = await rgs('archive', '--month', '1999-01', '--out', path.join(dir, 'none.gz'));
    expect(missing.code).to.equal(1);
    expect(JSON.parse(missing.stderr).message).to.include('no partition holds 1999-01');
  });
});
