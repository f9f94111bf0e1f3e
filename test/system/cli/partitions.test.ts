import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { dropDatabase } from '../../../src/shared/platform/db/migrate.js';
import { addMonths, monthOf, monthStart } from '../../../src/shared/domain/months.js';
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
  let pool: pg.Pool | undefined;

  // a wallet job written in the middle of `month`: finished, or abandoned after 24 hours
  async function walletJob(month: string, state: 'completed' | 'abandoned'): Promise<string> {
    pool ??= new pg.Pool({ connectionString: url.toString(), max: 1 });
    const id = randomUUID();
    const at = new Date(monthStart(month).getTime() + 14 * 24 * 60 * 60 * 1000);
    await pool.query(
      `INSERT INTO wallet_jobs (id, operator_id, endpoint, transaction_uuid, purpose, payload, attempts, created_at, completed_at, abandoned_at)
       VALUES ($1, 'op-retention', 'win', $2, 'win', '{"amount":"9007199254740993"}', 3, $3, $4, $5)`,
      [id, randomUUID(), at, state === 'completed' ? at : null, state === 'abandoned' ? at : null],
    );
    return id;
  }

  const ok = (result: CliResult): any => {
    expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
    return JSON.parse(result.stdout);
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rgs-partitions-cli-'));
    ok(await rgs('migrate'));
  });
  after(async () => {
    await pool?.end();
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

  it('retention keeps a month with rows and no verified archive, drops it after rgs archive, and with --without-archive warns', async () => {
    const archived = addMonths(monthOf(new Date()), -8);
    const unarchived = addMonths(monthOf(new Date()), -9);
    ok(await rgs('partitions', 'ensure', '--from', unarchived));
    await walletJob(archived, 'completed');
    await walletJob(unarchived, 'completed');

    const refused = ok(await rgs('retention', 'apply', '--older-than', '120d'));
    expect(refused.dropped).to.not.include.members([archived, unarchived]);
    expect(refused.kept).to.deep.include({
      month: archived,
      reason: `no verified archive: run rgs archive --month ${archived} --out FILE first, or pass --without-archive`,
    });

    const file = path.join(dir, `${archived}.ndjson.gz`);
    const manifest = ok(await rgs('archive', '--month', archived, '--out', file));
    expect(manifest.counts).to.include({ wallet_jobs: 1 });
    expect(manifest.sha256).to.match(/^[0-9a-f]{64}$/);
    const applied = await rgs('retention', 'apply', '--older-than', '120d');
    expect(ok(applied).dropped).to.include(archived).and.not.include(unarchived);
    expect(applied.stderr).to.equal('');

    const without = await rgs('retention', 'apply', '--older-than', '120d', '--without-archive');
    expect(ok(without).dropped).to.deep.equal([unarchived]);
    expect(ok(without).droppedWithoutArchive).to.deep.equal([unarchived]);
    const warning = JSON.parse(without.stderr.trim());
    expect(warning).to.include({ level: 40, month: unarchived, msg: 'retention dropped a month without a verified archive (--without-archive)' });
    expect(warning.counts).to.include({ wallet_jobs: 1, bets: 0 });
  });

  it('an abandoned wallet job keeps its month until rgs jobs reconcile records who settled it and why', async () => {
    const month = addMonths(monthOf(new Date()), -10);
    ok(await rgs('partitions', 'ensure', '--from', month));
    const id = await walletJob(month, 'abandoned');

    const kept = ok(await rgs('retention', 'apply', '--older-than', '120d', '--without-archive'));
    expect(kept.dropped).to.not.include(month);
    expect(kept.kept).to.deep.include({ month, reason: 'unfinished money work: 1 abandoned wallet jobs not reconciled' });

    const bad = await rgs('jobs', 'reconcile', '--id', 'not-a-job', '--note', 'x');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('--id must be a wallet job id (a UUID)');
    const blank = await rgs('jobs', 'reconcile', '--id', id, '--note', ' ');
    expect(blank.code).to.equal(2);
    expect(blank.stderr).to.include('--note must say why, in 1 to 1000 characters');
    const done = ok(await rgs('jobs', 'reconcile', '--id', id, '--note', 'paid by the wallet team, ticket 4411', '--by', 'ops-anna'));
    expect(done).to.include({ id, endpoint: 'win', reconciledBy: 'ops-anna', reconciliationNote: 'paid by the wallet team, ticket 4411' });
    const listed = ok(await rgs('jobs', 'abandoned')).jobs.find((job: { id: string }) => job.id === id);
    expect(listed).to.include({ reconciledBy: 'ops-anna', reconciliationNote: 'paid by the wallet team, ticket 4411', reconciledAt: done.reconciledAt });
    const again = await rgs('jobs', 'reconcile', '--id', id, '--note', 'again');
    expect(again.code).to.equal(1);
    expect(JSON.parse(again.stderr).message).to.include('reconciled already, by ops-anna');

    expect(ok(await rgs('retention', 'apply', '--older-than', '120d', '--without-archive')).dropped).to.include(month);
  });

  it('archive refuses an --out file that exists and leaves it as it was', async () => {
    const file = path.join(dir, 'precious.ndjson.gz');
    await writeFile(file, 'last year, the only copy');
    const refused = await rgs('archive', '--month', monthOf(new Date()), '--out', file);
    expect(refused.code).to.equal(1);
    expect(refused.stdout).to.equal('');
    expect(JSON.parse(refused.stderr).message).to.equal(`${file} already exists: an archive never overwrites a file; choose another --out`);
    expect(await readFile(file, 'utf8')).to.equal('last year, the only copy');
  });
});
