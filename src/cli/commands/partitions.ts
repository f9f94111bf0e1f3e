import type { Command } from 'commander';
import { DEFAULT_MONTHS_AHEAD, applyRetention, archiveMonth, ensurePartitions } from '../../shared/platform/db/partitions.js';
import { createLogger } from '../../shared/platform/logger.js';
import { isMonth, parseRetentionAge } from '../../shared/domain/months.js';
import { UsageError, integerOption, required, type Action, type Values } from '../kit.js';

// `rgs partitions ensure`, `rgs archive` and `rgs retention apply` (D36): the monthly
// partitions of the money tables.

const ARCHIVE_HELP = `
The file is created, never replaced: an existing --out is refused and left as it is. Once
written it is read back (sha256 of its bytes, rows per table) and recorded in the database;
retention drops a month only with such a record whose rows still match the month and that
was taken when nothing in it was unfinished. Prints {rgsArchive, month, tables, createdAt,
file, sha256, counts, openWork, verifiedAt}.
`;

const RETENTION_HELP = `
A month is kept, and named under "kept" with the reason, while it holds unfinished money
work (a bet in play, a round not settled, a stake held, a wallet job open, or abandoned and
not yet recorded by rgs jobs reconcile, a webhook event pending), and while it has no
verified archive of rgs archive that matches it. --without-archive drops such finished
months anyway and logs each at warn on stderr. The check and the drop are one transaction
that locks the tables: writes to them wait for the moment it takes.
`;

export function partitionsCommands(program: Command, action: Action): void {
  // D36: the monthly partitions of the money tables, their archive and their retention
  const partitions = program.command('partitions').description('the monthly partitions of the money tables (D36)');
  action(
    partitions
      .command('ensure')
      .description('make the partitions of the coming months (the scheduler leader does it daily), and of past months with --from')
      .option('--months-ahead <n>', `months after the current one (default ${DEFAULT_MONTHS_AHEAD})`)
      .option('--from <YYYY-MM>', 'also every month from this one (to load history)'),
    (values, database) =>
      ensurePartitions(database().sql, {
        now: new Date(),
        monthsAhead: integerOption(values, 'months-ahead') ?? DEFAULT_MONTHS_AHEAD,
        from: monthOption(values, 'from'),
      }),
  );
  action(
    program
      .command('archive')
      .description("write one month's rows of every partitioned table to a new gzip JSON-lines file, read it back and record it (retention needs it)")
      .requiredOption('--month <YYYY-MM>', 'the month')
      .requiredOption('--out <file>', 'the file to create; an existing file is never overwritten')
      .addHelpText('after', ARCHIVE_HELP),
    (values, database) => archiveMonth(database().sql, monthOption(values, 'month')!, required(values, 'out'), new Date()),
  );
  const retention = program.command('retention').description('drop whole months of the money tables (D36)');
  action(
    retention
      .command('apply')
      .description(`detach and drop every month that ended more than --older-than ago (at least 120d), holds no unfinished money work and has a verified archive`)
      .requiredOption('--older-than <days>', 'an age in days such as 120d; anything under 120d is refused')
      .option('--dry-run', 'say what would be dropped, drop nothing')
      .option('--without-archive', 'also drop finished months that have no verified archive (logged at warn, with each month and its rows)')
      .addHelpText('after', RETENTION_HELP),
    (values, database) => {
      const age = parseRetentionAge(required(values, 'older-than'));
      if (!age.ok) throw new UsageError(age.reason);
      return applyRetention(database().sql, {
        now: new Date(),
        days: age.days,
        dryRun: values['dry-run'] === true,
        withoutArchive: values['without-archive'] === true,
        // stderr: stdout carries the command's JSON answer
        log: createLogger({ level: 'warn', name: 'rgs-retention', destination: process.stderr }),
      });
    },
  );
}

function monthOption(values: Values, name: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !isMonth(value)) throw new UsageError(`--${name} must be a month, YYYY-MM`);
  return value;
}
