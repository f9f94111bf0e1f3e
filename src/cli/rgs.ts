import { Command, CommanderError } from 'commander';
import { loadConfig } from '../shared/platform/config.js';
import { createDatabase, type Database } from '../shared/platform/db/client.js';
import { FailedAnswer, TextAnswer, UsageError, type Run, type Values } from './kit.js';
import { migrateCommand } from './commands/migrate.js';
import { operatorCommands } from './commands/operator.js';
import { gameCommands } from './commands/game.js';
import { credentialCommands } from './commands/credential.js';
import { webhookCommands } from './commands/webhook.js';
import { freeBetsCommands } from './commands/freebets.js';
import { jurisdictionCommands } from './commands/jurisdiction.js';
import { jobsCommands } from './commands/jobs.js';
import { partitionsCommands } from './commands/partitions.js';
import { masterKeyCommands } from './commands/master-key.js';
import { signingKeyCommands } from './commands/signing-key.js';
import { tokenKeyCommands } from './commands/token-key.js';
import { verifyPackCommand } from './commands/verify-pack.js';
import { walletCheckCommand } from './commands/wallet-check.js';
import { verifyCommand } from './commands/verify.js';

// `rgs`, the operator administration tool (DECISIONS D11): JSON on stdout (`operator list`
// lays out a table unless --json); a failed command prints a JSON error on stderr and exits
// 1. A command line that is not understood (an unknown command or option, a missing or
// malformed value) is for the person typing it: one readable line and a hint on stderr,
// exit 2. `--help` (or `-h`) on the tool, a group or a command prints its usage on stdout.
//
// Parsing is commander's: it gives every command and group its --help, refuses unknown
// commands, options and surplus arguments, and suggests the near miss ("did you mean").
//
// This file puts the program together: each command group is in commands/<group>.ts, in the
// order `rgs --help` lists them, and reads or writes the database only through the game and
// platform functions that own the data.

const TOOL_HELP = `
Output: JSON on stdout (operator list: a table unless --json). A command that fails prints a
JSON error {error, message} on stderr and exits 1; a command line that is not understood
prints one line and a hint on stderr and exits 2.

Environment: DATABASE_URL; MASTER_KEY, which seals credentials, server seeds and the pack
signing key (without it the development key is used, with a warning; refused with
NODE_ENV=production); NODE_ENV; NEW_MASTER_KEY for master-key rewrap. Run 'rgs COMMAND --help' for a command's options.`;

function buildProgram(answer: (result: unknown) => void): Command {
  const program = new Command('rgs')
    .description('Operator administration of the remote gaming server')
    .addHelpText('after', TOOL_HELP);

  // the command's options by their flag names (--wallet-url: 'wallet-url'), and its
  // arguments by their names
  const valuesOf = (command: Command): Values => ({
    ...Object.fromEntries(command.options.map((option) => [option.long!.slice(2), command.getOptionValue(option.attributeName()) as Values[string]])),
    ...Object.fromEntries(command.registeredArguments.map((argument, i) => [argument.name(), command.processedArgs[i] as Values[string]])),
  });

  let database: Database | undefined;
  const action = (command: Command, run: Run): Command =>
    // commander passes the command's arguments first, then its options, then the command
    command.action(async (...parameters: unknown[]) => {
      const self = parameters.at(-1) as Command;
      try {
        answer(await run(valuesOf(self), () => (database ??= createDatabase(loadConfig().databaseUrl, 2))));
      } catch (err) {
        if (err instanceof UsageError) self.error(err.message, { exitCode: 2, code: 'rgs.usage' });
        throw err;
      } finally {
        await database?.close();
      }
    });

  // the groups in the order --help lists them
  for (const add of [
    migrateCommand,
    operatorCommands,
    gameCommands,
    credentialCommands,
    webhookCommands,
    freeBetsCommands,
    jurisdictionCommands,
    jobsCommands,
    partitionsCommands,
    masterKeyCommands,
    signingKeyCommands,
    tokenKeyCommands,
    verifyPackCommand,
    walletCheckCommand,
    verifyCommand,
  ]) {
    add(program, action);
  }

  configure(program);
  return program;
}

// Every command: commander's errors are thrown back to main (exit 2) instead of exiting,
// printed as one line naming the command, with a hint.
function configure(command: Command, said = new Set<Command>()): void {
  const path = commandPath(command);
  command.exitOverride().configureOutput({
    outputError: (message) => process.stderr.write(usageText(path, message)),
    // commander writes to writeErr only the help of a group called without its command, a
    // piece at a time: one line says so instead
    writeErr: () => {
      if (said.has(command)) return;
      said.add(command);
      process.stderr.write(usageText(path, `a command is required: ${command.commands.map((c) => c.name()).join(', ')}`));
    },
  });
  for (const sub of command.commands) configure(sub, said);
}

const commandPath = (command: Command): string => (command.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name());

function usageText(path: string, message: string): string {
  const line = message
    .trim()
    .replace(/^error: /, '')
    .replace(/\n\((Did you mean [^)]*)\)$/, (_all, suggestion: string) => ` (${suggestion.replace(/^D/, 'd')})`)
    .replace(/\s*\n\s*/g, ' ');
  return `${path}: ${line}\nRun '${path} --help' for usage.\n`;
}

const bigintAsString = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

export async function main(argv = process.argv.slice(2)): Promise<number> {
  let result: unknown;
  try {
    await buildProgram((answer) => (result = answer)).parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help (or `rgs help ...`) printed the usage on stdout; anything else was printed as a
      // usage error
      return err.exitCode === 0 ? 0 : 2;
    }
    const details = (err as { details?: unknown }).details;
    const error = { error: (err as Error).name ?? 'Error', message: (err as Error).message, ...(typeof details === 'object' ? details : {}) };
    process.stderr.write(`${JSON.stringify(error, null, 2)}\n`);
    return 1;
  }
  const answer = result;
  if (answer instanceof TextAnswer) {
    process.stdout.write(answer.text);
    return answer.failed ? 1 : 0;
  }
  const failed = answer instanceof FailedAnswer;
  process.stdout.write(`${JSON.stringify(failed ? answer.answer : answer, bigintAsString, 2)}\n`);
  return failed ? 1 : 0;
}
