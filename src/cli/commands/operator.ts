import { Option, type Command } from 'commander';
import { loadConfig } from '../../shared/platform/config.js';
import { parseRgMaxSpec } from '../../shared/domain/rg-limits.js';
import { createOperator, showOperator, updateOperator, type OperatorSettings } from '../../shared/game/operators/operators.js';
import { listOperators, type ListedOperator } from '../../shared/game/operators/operator-list.js';
import { SEALING_NOTE, TRUE_FALSE, TextAnswer, booleanOption, integerOption, list, required, sealing, type Action, type Values } from '../kit.js';

// `rgs operator create|update|show|list` (contract 5.3, 5.4, D11): onboard, change and list
// operators.

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

// the settings of `operator create` and `operator update` (contract 5.3, 5.4, D7, D16, D25)
function operatorOptions(command: Command): Command {
  return command
    .option('--currency <codes>', 'currencies the operator may launch sessions in, comma-separated (none: any)')
    .option('--ip-allow <cidrs>', 'IPs or CIDRs its signed requests may come from, comma-separated (none: any)')
    .option('--jurisdictions-blocked <codes>', 'jurisdictions whose launches are refused, comma-separated')
    .option('--frame-ancestors <origins>', 'origins that may frame the game page, comma-separated (scheme://host[:port])')
    .option('--rg-max <spec>', 'responsible-gambling maxima of a jurisdiction; repeatable', collect)
    .option('--signature-window-seconds <n>', 'accepted clock skew of signed requests, 1 to 300 (default 30)')
    .addOption(
      new Option('--wallet-url-private-allowed <bool>', 'with NODE_ENV=production, let the wallet URL resolve to a private address').choices(
        TRUE_FALSE,
      ),
    )
    .addOption(new Option('--sandbox <bool>', 'a sandbox operator: ten times the rate limits, launches may fix their seeds (D35)').choices(TRUE_FALSE));
}

const OPERATOR_NOTES = `
--rg-max takes JUR:field=N[,field=N...] with the fields sessionTimeSeconds, dailyLossMicro
and dailyWagerMicro; a listed field becomes required at launch in that jurisdiction.
With NODE_ENV=production the wallet URL must be https:, carry no credentials and resolve to
a public address (unless --wallet-url-private-allowed true).
--sandbox true makes a test tenant (docs/sandbox.md): refused with NODE_ENV=production unless
SANDBOX_ENABLED=true, since its launches may choose their seeds.`;

export function operatorCommands(program: Command, action: Action): void {
  const operator = program.command('operator').description('onboard, change and list operators');
  action(
    operatorOptions(
      operator
        .command('create')
        .description('onboard an operator; prints its two secrets, once')
        .requiredOption('--id <id>', 'the operator id: 1 to 64 of A-Z a-z 0-9 _ . -')
        .requiredOption('--wallet-url <url>', "base URL of the operator's wallet"),
    ).addHelpText('after', OPERATOR_NOTES + '\n' + SEALING_NOTE),
    (values, database) => {
      const id = required(values, 'id');
      const settings = { ...operatorSettings(values), walletUrl: required(values, 'wallet-url') };
      return sealing((masterKey, production) =>
        createOperator(database().db, masterKey, id, settings, { production, sandboxEnabled: loadConfig().sandboxEnabled }),
      );
    },
  );
  action(
    operatorOptions(
      operator
        .command('update')
        .description("change an operator's settings; options left out keep their value")
        .requiredOption('--id <id>', 'the operator')
        .option('--wallet-url <url>', "base URL of the operator's wallet"),
    )
      .addOption(new Option('--suspended <bool>', 'refuse (true) or allow again (false) its launches').choices(TRUE_FALSE))
      .addHelpText('after', OPERATOR_NOTES),
    (values, database) => {
      const config = loadConfig();
      return updateOperator(database().db, required(values, 'id'), operatorSettings(values), {
        production: config.nodeEnv === 'production',
        sandboxEnabled: config.sandboxEnabled,
      });
    },
  );
  action(operator.command('show').description("print an operator's settings").requiredOption('--id <id>', 'the operator'), (values, database) =>
    showOperator(database().db, required(values, 'id')),
  );
  action(
    operator
      .command('list')
      .description('every operator with its status, wallet URL and credentials (kids and validity, never a secret)')
      .option('--json', 'print JSON instead of the table'),
    async (values, database) => {
      const operators = await listOperators(database().db, new Date());
      return values.json ? { operators } : new TextAnswer(operatorTable(operators));
    },
  );
}

function operatorSettings(values: Values): OperatorSettings {
  const rgMax = values['rg-max'];
  return {
    walletUrl: typeof values['wallet-url'] === 'string' ? values['wallet-url'] : undefined,
    walletUrlPrivateAllowed: booleanOption(values, 'wallet-url-private-allowed'),
    currencies: list(values.currency),
    ipAllowList: list(values['ip-allow']),
    jurisdictionsBlocked: list(values['jurisdictions-blocked']),
    frameAncestors: list(values['frame-ancestors']),
    signatureWindowSeconds: integerOption(values, 'signature-window-seconds'),
    suspended: booleanOption(values, 'suspended'),
    sandbox: booleanOption(values, 'sandbox'),
    rgMax: Array.isArray(rgMax) ? rgMax.map(parseRgMaxSpec) : undefined,
  };
}

// to the second, as a person reads it
const time = (iso: string) => iso.replace(/\.\d{3}Z$/, 'Z');

function validity(credential: ListedOperator['credentials'][number]): string {
  const until = credential.notAfter ? ` until ${time(credential.notAfter)}` : '';
  switch (credential.status) {
    case 'revoked':
      return `revoked ${time(credential.revokedAt!)}`;
    case 'expired':
      return `expired ${time(credential.notAfter!)}`;
    case 'not_yet_valid':
      return `not yet valid: from ${time(credential.notBefore)}${until}`;
    case 'valid':
      return `valid since ${time(credential.notBefore)}${until}`;
  }
}

// One line per credential; an operator's own columns are on its first line only.
export function operatorTable(operators: ListedOperator[]): string {
  if (operators.length === 0) return 'no operators\n';
  const header = ['OPERATOR', 'STATUS', 'WALLET URL', 'CURRENCIES', 'KIND', 'KID', 'VALIDITY'];
  const rows: string[][] = [];
  for (const operator of operators) {
    const own = [operator.operatorId, operator.sandbox ? `${operator.status}, sandbox` : operator.status, operator.walletUrl, operator.currencies.join(',') || 'any'];
    if (operator.credentials.length === 0) rows.push([...own, '-', '-', 'no credentials']);
    operator.credentials.forEach((credential, index) =>
      rows.push([...(index === 0 ? own : own.map(() => '')), credential.kind, credential.kid, validity(credential)]),
    );
  }
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}
