import type { Command } from 'commander';
import { setJurisdiction, showJurisdictions } from '../../shared/game/operators/jurisdictions.js';
import { required, UsageError, type Action } from '../kit.js';

// `rgs jurisdiction set|show` (D44): an operator's stricter values per jurisdiction code over
// the built-in profiles (GB, DE, CA-ON, default).

const SET_HELP = `
Keys: minRoundMs (ms between two bets of a session), autoplay (true|false),
realityCheckMinutes (1 to 1440), showElapsedTime, showNetPosition (true|false),
maxStakeMicro.<CURRENCY> (micro-units, 1.00 = 100000). A value may only be stricter than the
rules in force (the profile's, with earlier overrides): a looser one is refused, naming the
bound, and nothing is stored. Sessions launched after the change play under it.

Examples:
  rgs jurisdiction set --operator op-1 --code GB --set realityCheckMinutes=30
  rgs jurisdiction set --operator op-1 --code DE --set maxStakeMicro.EUR=50000 --set minRoundMs=10000
  rgs jurisdiction set --operator op-1 --code MT --set showNetPosition=true`;

export function jurisdictionCommands(program: Command, action: Action): void {
  const jurisdiction = program.command('jurisdiction').description("an operator's jurisdiction profiles: stricter values over the built-in ones (D44)");
  action(
    jurisdiction
      .command('set')
      .description('make a jurisdiction stricter for the operator; prints the rules in force')
      .requiredOption('--operator <id>', 'the operator')
      .requiredOption('--code <code>', 'the jurisdiction code, as sessions name it (GB, DE, CA-ON, ...), or default for every code without a profile')
      .requiredOption('--set <key=value>', 'a rule (repeat it)', (value: string, previous: string[] = []) => [...previous, value])
      .addHelpText('after', SET_HELP),
    (values, database) => {
      const sets = values.set;
      if (!Array.isArray(sets) || sets.length === 0) throw new UsageError('--set key=value is required');
      return setJurisdiction(database().db, required(values, 'operator'), required(values, 'code'), sets);
    },
  );
  action(
    jurisdiction
      .command('show')
      .description('print the rules in force: for one code, or for every built-in profile and overridden code')
      .requiredOption('--operator <id>', 'the operator')
      .option('--code <code>', 'one jurisdiction code'),
    (values, database) => showJurisdictions(database().db, required(values, 'operator'), typeof values.code === 'string' ? values.code : undefined),
  );
}
