// The suite's tiers, each run by mocha against the real Postgres and Redis (README "Tests"):
//   node test/support/tiers.mjs                 every tier, one after the other (`npm test`)
//   node test/support/tiers.mjs unit            one tier (`npm run test:unit`, …)
// Every run of the tiers asked for takes place even when one before it failed, and the end
// is the one closing line CI reads: "N passed, N failed, N skipped". A run that ends
// without its counts (a crash outside any test) counts as one failure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MOCHA = createRequire(import.meta.url).resolve('mocha/bin/mocha.js');

// Integration files that need the machine to themselves, run serially after the others:
const ALONE = [
  // a token bucket (contract 8.1, D10) refills in real time while the test sends its burst:
  // the bursts run until one is refused, but what passes after a wait (not a fresh burst)
  // and the listing's reads still count on the machine being quick
  'test/integration/api/rate-limit.test.ts',
  'test/integration/api/reconciliation.test.ts',
  'test/integration/api/proof.test.ts',
  // counts Postgres's WAL syncs, which are the whole server's: other files' commits join
  // them or add to them
  'test/integration/db/deferred-flush.test.ts',
];

// Each tier is one or more mocha runs. The unit tier needs neither Postgres nor Redis: its
// config loads no global fixture. The integration tier runs its files in parallel worker
// processes, each with a database and a key prefix of its own (test/support/env.ts); the
// system tier starts service processes, redis-server and Chromium, and runs serially.
const TIERS = {
  unit: [['--config', 'test/unit/.mocharc.json', 'test/unit/**/*.test.ts']],
  integration: [
    ['--parallel', '--jobs', '3', ...ALONE.flatMap((file) => ['--ignore', file]), 'test/integration/**/*.test.ts'],
    ALONE,
  ],
  system: [['test/system/**/*.test.ts']],
};

const asked = process.argv.slice(2);
for (const tier of asked) if (!(tier in TIERS)) throw new Error(`no tier ${tier} (${Object.keys(TIERS).join(', ')})`);
const tiers = asked.length > 0 ? asked : Object.keys(TIERS);

const dir = mkdtempSync(path.join(tmpdir(), 'rgs-test-tiers-'));
const total = { passes: 0, failures: 0, pending: 0 };
const failed = [];
try {
  for (const tier of tiers) {
    for (const [index, args] of TIERS[tier].entries()) {
      const name = TIERS[tier].length > 1 ? `${tier} ${index + 1}/${TIERS[tier].length}` : tier;
      if (tiers.length > 1 || TIERS[tier].length > 1) process.stdout.write(`\n== ${name} ==\n`);
      const totalsFile = path.join(dir, `${tier}-${index}.json`);
      const run = spawnSync(process.execPath, [MOCHA, ...args], {
        cwd: ROOT,
        stdio: 'inherit',
        env: { ...process.env, TEST_TOTALS_FILE: totalsFile },
      });
      let counts;
      try {
        counts = JSON.parse(readFileSync(totalsFile, 'utf8'));
      } catch {
        counts = undefined;
      }
      if (counts) for (const key of Object.keys(total)) total[key] += counts[key];
      else total.failures += 1;
      if (run.status !== 0 || !counts) failed.push(name);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed.length > 0) process.stdout.write(`\nfailed: ${failed.join(', ')}\n`);
process.stdout.write(`\n${total.passes} passed, ${total.failures} failed, ${total.pending} skipped\n`);
process.exit(failed.length > 0 ? 1 : 0);
