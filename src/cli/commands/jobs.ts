import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { ReconcileError, listAbandonedJobs, reconcileWalletJob } from '../../shared/game/wallet-jobs/reconciliation.js';
import { UsageError, required, type Action } from '../kit.js';

// `rgs jobs abandoned|reconcile` (D36): the wallet jobs the service gave up on, for a human.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function jobsCommands(program: Command, action: Action): void {
  const jobs = program.command('jobs').description('wallet jobs');
  action(jobs.command('abandoned').description('wallet jobs given up after 24 hours: tickets for a human'), (_values, database) =>
    listAbandonedJobs(database().db),
  );
  // D36: a human's record that an abandoned job was settled with the wallet; until then
  // retention keeps the job's month
  action(
    jobs
      .command('reconcile')
      .description('record that an abandoned wallet job was settled with the operator: who, when and why (once per job)')
      .requiredOption('--id <id>', 'the wallet job (its id in rgs jobs abandoned)')
      .requiredOption('--note <text>', 'why it is settled: what the wallet says, the ticket, the correction made')
      .option('--by <name>', 'who settled it (default: the user running rgs)'),
    async (values, database) => {
      const id = required(values, 'id');
      if (!UUID.test(id)) throw new UsageError('--id must be a wallet job id (a UUID)');
      try {
        return await reconcileWalletJob(database().sql, { id, note: required(values, 'note'), by: typeof values.by === 'string' ? values.by : runningUser(), now: new Date() });
      } catch (err) {
        if (err instanceof ReconcileError && err.usage) throw new UsageError(err.message);
        throw err;
      }
    },
  );
}

// who runs rgs, for `jobs reconcile` without --by; a process with no such user must name one
function runningUser(): string {
  try {
    return userInfo().username;
  } catch {
    throw new UsageError('--by is required: the user running rgs could not be determined');
  }
}
