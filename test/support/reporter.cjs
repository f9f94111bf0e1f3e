// Mocha's spec reporter plus the plain closing line CI reads: "N passed, N failed, N skipped".
// Under `npm test` (test/support/tiers.mjs) each tier hands its counts to the runner instead,
// which prints one closing line for the whole suite.
const { writeFileSync } = require('node:fs');
const Mocha = require('mocha');

const { EVENT_RUN_END } = Mocha.Runner.constants;

class SpecWithTotals extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats;
      if (process.env.TEST_TOTALS_FILE) writeFileSync(process.env.TEST_TOTALS_FILE, JSON.stringify({ passes, failures, pending }));
      else process.stdout.write(`\n${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

module.exports = SpecWithTotals;
