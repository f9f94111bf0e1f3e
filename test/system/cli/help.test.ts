import { expect } from 'chai';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// `rgs --help` and the usage errors (D11), run as the real subprocess a person runs: help on
// the tool, on every group and on every command prints its usage on stdout and exits 0; a
// command line the tool does not understand gets one line naming the command and a hint on
// stderr, and exit 2. None of it needs a database: DATABASE_URL points at nothing.

const rgs = (...args: string[]) => runRgs(args, { env: { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/nowhere' } });

// Many command lines, a few processes at a time: each start compiles the tool's source, and
// two dozen at once on a small machine share its cores until some pass the per-process limit
// of runRgs, a verdict about the machine's load rather than about the tool.
async function inTurns(lines: string[][], atOnce = 4): Promise<CliResult[]> {
  const results: CliResult[] = new Array(lines.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < lines.length; index = next++) results[index] = await rgs(...lines[index]!);
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, lines.length) }, worker));
  return results;
}

const GROUPS: Record<string, string[]> = {
  operator: ['create', 'update', 'show', 'list'],
  game: ['config', 'show', 'simulate'],
  credential: ['rotate', 'revoke'],
  freebets: ['create', 'list', 'cancel'],
  jobs: ['abandoned', 'reconcile'],
  'master-key': ['rewrap'],
  partitions: ['ensure'],
  retention: ['apply'],
};
// wallet-check's help is read on its own below (D38)
const COMMANDS = [['migrate'], ['verify'], ['archive'], ...Object.entries(GROUPS).flatMap(([group, commands]) => commands.map((command) => [group, command]))];

function usage(result: CliResult, path: string): string {
  expect(result.code, `${path}: ${result.stderr}`).to.equal(0);
  expect(result.stderr).to.equal('');
  expect(result.stdout).to.match(new RegExp(`^Usage: ${path} `));
  return result.stdout;
}

// one line naming the command, then the hint; never JSON
function usageError(result: CliResult, path: string): string {
  expect(result.code, result.stderr).to.equal(2);
  expect(result.stdout).to.equal('');
  const [line, hint, ...rest] = result.stderr.trimEnd().split('\n');
  expect(rest, result.stderr).to.deep.equal([]);
  expect(line).to.satisfy((text: string) => text.startsWith(`${path}: `));
  expect(hint).to.equal(`Run '${path} --help' for usage.`);
  return line!;
}

describe('rgs --help and usage errors (D11)', function () {
  this.timeout(60_000);

  it('--help and -h on the tool list every group and command, with the output and environment conventions', async () => {
    for (const result of await Promise.all([rgs('--help'), rgs('-h'), rgs('help')])) {
      const text = usage(result, 'rgs');
      for (const name of ['migrate', 'verify', 'archive', 'wallet-check', ...Object.keys(GROUPS)]) expect(text).to.match(new RegExp(`^  ${name}\\b`, 'm'));
      expect(text).to.include('MASTER_KEY').and.include('exits 2');
    }
  });

  it('--help on every group lists its commands; -h on every command lists its options', async () => {
    const groups = Object.entries(GROUPS);
    const groupHelp = await inTurns(groups.map(([group]) => [group, '--help']));
    groups.forEach(([group, commands], index) => {
      const text = usage(groupHelp[index]!, `rgs ${group}`);
      for (const command of commands) expect(text, group).to.match(new RegExp(`^  ${command}\\b`, 'm'));
    });
    const commandHelp = await inTurns(COMMANDS.map((path) => [...path, '-h']));
    COMMANDS.forEach((path, index) => {
      const text = usage(commandHelp[index]!, `rgs ${path.join(' ')}`);
      expect(text).to.include('-h, --help');
    });
  });

  it('a command help names its options, and --help wins over a missing required option', async () => {
    const create = usage(await rgs('operator', 'create', '--help'), 'rgs operator create');
    for (const option of ['--id <id>', '--wallet-url <url>', '--currency', '--ip-allow', '--rg-max', '--frame-ancestors', '--wallet-url-private-allowed']) {
      expect(create).to.include(option);
    }
    expect(create).to.include('MASTER_KEY');
    const list = usage(await rgs('operator', 'list', '--help'), 'rgs operator list');
    expect(list).to.include('--json');
    // the rewrap documents where the new key comes from
    const rewrap = usage(await rgs('master-key', 'rewrap', '--help'), 'rgs master-key rewrap');
    expect(rewrap).to.include('NEW_MASTER_KEY').and.include('never from a flag').and.include('Stop every rgs process');
    // D38: the wallet check names its interface and its checks
    const walletCheck = usage(await rgs('wallet-check', '--help'), 'rgs wallet-check');
    for (const option of ['--url <url>', '--kid <kid>', '--secret <secret>', '--operator <id>', '--player <ref>', '--currency <code>', '--json']) {
      expect(walletCheck).to.include(option);
    }
    expect(walletCheck).to.include('debit-after-rollback').and.include('30000').and.include('Exit 0');
  });

  it('an unknown command, an unknown option or a missing command: exit 2, one line and a hint', async () => {
    const [unknown, misspelt, option, nearOption, bare, group, surplus] = await Promise.all([
      rgs('frobnicate'),
      rgs('opertor', 'list'),
      rgs('operator', 'list', '--no-such-flag'),
      rgs('operator', 'list', '--jsn'),
      rgs(),
      rgs('credential'),
      rgs('jobs', 'abandoned', 'extra'),
    ]);
    expect(usageError(unknown, 'rgs')).to.equal("rgs: unknown command 'frobnicate'");
    expect(usageError(misspelt, 'rgs')).to.equal("rgs: unknown command 'opertor' (did you mean operator?)");
    expect(usageError(option, 'rgs operator list')).to.equal("rgs operator list: unknown option '--no-such-flag'");
    expect(usageError(nearOption, 'rgs operator list')).to.equal("rgs operator list: unknown option '--jsn' (did you mean --json?)");
    expect(usageError(bare, 'rgs')).to.include('a command is required: migrate, operator');
    expect(usageError(group, 'rgs credential')).to.equal('rgs credential: a command is required: rotate, add, revoke');
    expect(usageError(surplus, 'rgs jobs abandoned')).to.include('too many arguments');
  });
});
