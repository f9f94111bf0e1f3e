import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { amountRefusal } from '../../shared/domain/bet-rules.js';
import { GameConfigError } from '../../shared/domain/games/config.js';
import { GAME_CODES, GAME_MODULES, LAUNCHABLE_GAME_CODES, gameModule } from '../../shared/domain/games/index.js';
import { SIMULATION_CLIENT_SEED, simulate, type SimulationResult } from '../../shared/domain/games/simulation.js';
import { InvalidBetError, type AnyGameModule, type BetKey, type StakeTerms } from '../../shared/domain/games/types.js';
import { generateServerSeed } from '../../shared/domain/seeds.js';
import { describeGameConfig, loadGameConfig, setGameConfig } from '../../shared/game/operators/game-config.js';
import { TextAnswer, UsageError, integerOption, required, type Action, type Values } from '../kit.js';

// `rgs game config|show`: a game's configuration per operator and currency (D11);
// `rgs game simulate`: a game's rounds played offline against its exact par sheet (D39).

function gameOptions(command: Command): Command {
  return command
    .requiredOption('--operator <id>', 'the operator')
    .requiredOption('--game <code>', `the game (${LAUNCHABLE_GAME_CODES.join(', ')})`)
    .requiredOption('--currency <code>', 'the currency');
}

// dice's keys have options of their own, as before D39: each is `--set key=value` spelled
// another way
const DICE_OPTIONS: readonly [option: string, key: string, description: string][] = [
  ['betting-window-ms', 'bettingWindowMs', 'how long betting is open'],
  ['rolling-window-ms', 'rollingWindowMs', 'how long the dice roll'],
  ['cooldown-ms', 'cooldownMs', 'pause between rounds'],
  ['min-bet-micro', 'minBetMicro', 'smallest bet in micro-units (1.00 = 100000)'],
  ['max-bet-micro', 'maxBetMicro', 'largest bet in micro-units'],
  ['commission-micro', 'commissionMicro', 'commission, 0 to 100000 (0% to 100%)'],
  ['payout-multiplier', 'payoutMultiplier', 'payout multiplier, at most 5 decimals (1.98)'],
  ['low-weight', 'lowWeight', 'weight of LOW'],
  ['high-weight', 'highWeight', 'weight of HIGH'],
];

const CONFIG_HELP = `
Every key of the game can be set with --set key=value, repeated (a game's keys and bounds:
docs/games/). Amounts are micro-units: 1.00 = 100000. Keys left out keep their stored
value, or their default. An unknown key or a value out of its bounds is refused, naming
the bound, and nothing is stored.

Examples:
  rgs game config --operator op-1 --game dice --currency EUR --set payoutMultiplier=1.98 --set stakeStepMicro=1000
  rgs game config --operator op-1 --game dice --currency JPY --set payoutRounding=minor_unit`;

export function gameCommands(program: Command, action: Action): void {
  const game = program.command('game').description("a game's configuration per operator and currency, and its simulation");
  const config = gameOptions(game.command('config').description('change the configuration; prints it merged with the defaults')).option(
    '--set <key=value>',
    "one of the game's keys (repeat it)",
    (value: string, previous: string[] = []) => [...previous, value],
  );
  for (const [option, , description] of DICE_OPTIONS) config.option(`--${option} <value>`, `${description} (dice)`);
  config.addHelpText('after', CONFIG_HELP);
  action(config, (values, database) =>
    setGameConfig(database().db, required(values, 'operator'), required(values, 'game'), required(values, 'currency'), {}, writtenChanges(values)),
  );
  action(gameOptions(game.command('show').description('print the configuration in force')), async (values, database) => {
    const [operatorId, gameCode, currency] = [required(values, 'operator'), required(values, 'game'), required(values, 'currency')];
    return describeGameConfig(operatorId, gameCode, currency, await loadGameConfig(database().db, operatorId, gameCode, currency));
  });
  simulateCommand(game, action);
}

// the changes as written: the options of dice's keys, then every --set
function writtenChanges(values: Values): Record<string, string> {
  const changes: Record<string, string> = {};
  for (const [option, key] of DICE_OPTIONS) {
    const value = values[option];
    if (typeof value === 'string') changes[key] = value;
  }
  const sets = values.set;
  for (const pair of Array.isArray(sets) ? (sets as unknown[]) : []) {
    const match = typeof pair === 'string' ? /^([A-Za-z][A-Za-z0-9]*)=(.*)$/s.exec(pair) : null;
    if (!match) throw new UsageError(`--set must be key=value: got ${JSON.stringify(pair)}`);
    changes[match[1]!] = match[2]!;
  }
  return changes;
}

function bigintOption(values: Values, name: string): bigint | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,20}$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer`);
  return BigInt(value);
}

// --auto-cash-out for autoCashOut: a bet parameter's option
const optionOf = (key: string) => key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const MAX_ROUNDS = 999_999_999;

const SIMULATE_HELP = `
Plays N rounds of one session (the server seed, the client seed "${SIMULATION_CLIENT_SEED}", the nonces
0 to N-1) through the game's own derivation and settlement arithmetic, with no wallet and no
database, and prints the measured return to player with its 99% confidence interval beside
the exact one, which the game computes from its math. The same --seed plays the same rounds;
without it a new seed is drawn and printed.

--config is a JSON object of the game's keys (left out: their defaults), amounts as strings,
multipliers as decimal strings. Each parameter of the game's bet has its option above; left
out, the bet takes the value shown as its default.

Example:
  rgs game simulate --game crash --rounds 1000000 --auto-cash-out 10.00 --seed 5e1f`;

function simulateCommand(game: Command, action: Action): void {
  // every bet parameter of every game has its option, named after it (D39: a new game's
  // parameters come with its module)
  const betKeys = [...new Map(GAME_MODULES.flatMap((module) => module.bet.keys.map((key) => [key.key, key] as const))).values()];
  const command = game
    .command('simulate')
    .description("play N rounds offline through a game's derivation and settlement; prints the measured RTP with its 99% interval beside the exact RTP")
    .requiredOption('--game <code>', `the game (${GAME_CODES.join(', ')})`)
    .option('--config <file>', "the game's configuration as a JSON object; left out: its defaults")
    .requiredOption('--rounds <n>', `how many rounds, 2 to ${MAX_ROUNDS}`)
    .option('--seed <hex>', 'the server seed, hex; left out: a random one, printed')
    .option('--stake-micro <n>', "every bet's stake in micro-units; left out: the configuration's minBetMicro");
  for (const key of betKeys) command.option(`--${optionOf(key.key)} <value>`, `${key.description} (default ${key.example})`);
  command.option('--json', 'print JSON instead of the table').addHelpText('after', SIMULATE_HELP);

  action(command, async (values) => {
    const module = gameModule(required(values, 'game'));
    if (!module) throw new UsageError(`--game must be one of ${GAME_CODES.join(', ')}: got ${String(values.game)}`);
    const rounds = integerOption(values, 'rounds')!;
    if (rounds < 2) throw new UsageError(`--rounds must be 2 to ${MAX_ROUNDS}: got ${rounds}`);
    const seed = values.seed;
    if (seed !== undefined && (typeof seed !== 'string' || !/^[0-9a-fA-F]{1,128}$/.test(seed))) throw new UsageError('--seed must be 1 to 128 hex digits');
    // D2: the seed is keyed on as text, its lower-case text here
    const serverSeed = typeof seed === 'string' ? seed.toLowerCase() : generateServerSeed();
    const configJson = typeof values.config === 'string' ? await readConfig(values.config) : {};
    const config = asUsage(() => module.config.parse(configJson));
    const bet = asUsage(() => module.bet.parse(betInput(module, betKeys, values), config));
    const stakeMicro = stakeOf(values, config);
    const result = module.simulate({ config, bet, stakeMicro, rounds, serverSeed });
    const report = {
      gameCode: module.gameCode,
      rngVersion: module.rngVersion,
      mathVersion: module.mathVersion,
      config: module.config.write(config),
      bet: module.bet.write(bet),
      stakeMicro: stakeMicro.toString(),
      serverSeed,
      clientSeed: SIMULATION_CLIENT_SEED,
      ...simulationFigures(result),
    };
    return values.json ? report : new TextAnswer(simulationTable(report));
  });
}

// a configuration or a bet the game refuses is a command line not understood (exit 2), with
// the game's message, which names the key and its bound
function asUsage<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof GameConfigError || err instanceof InvalidBetError) throw new UsageError(err.message);
    throw err;
  }
}

async function readConfig(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --config ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`--config ${file} is not JSON`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new UsageError(`--config ${file} must hold a JSON object of the game's keys`);
  return json as Record<string, unknown>;
}

// the bet parameters of the game, from their options or their examples; an option of another
// game's parameter is refused rather than silently ignored
function betInput(module: AnyGameModule, every: readonly BetKey[], values: Values): Record<string, unknown> {
  const own = module.bet.keys.map((key) => key.key);
  const foreign = every.filter((key) => !own.includes(key.key) && values[optionOf(key.key)] !== undefined);
  if (foreign.length) {
    const options = (keys: readonly BetKey[]) => keys.map((key) => `--${optionOf(key.key)}`).join(', ');
    throw new UsageError(`${options(foreign)}: not a parameter of a ${module.gameCode} bet (its: ${options(module.bet.keys)})`);
  }
  return Object.fromEntries(module.bet.keys.map((key) => [key.key, values[optionOf(key.key)] ?? key.example]));
}

function stakeOf(values: Values, limits: StakeTerms): bigint {
  const stake = bigintOption(values, 'stake-micro') ?? limits.minBetMicro;
  // contract 8.2 rule 3 and D46, as a real bet
  if (amountRefusal(stake, limits)) {
    throw new UsageError(
      `--stake-micro must be minBetMicro to maxBetMicro (${limits.minBetMicro} to ${limits.maxBetMicro}), a multiple of stakeStepMicro (${limits.stakeStepMicro}): got ${stake}`,
    );
  }
  return stake;
}

// statistics, as six decimals
const SIX = new Intl.NumberFormat('en', { minimumFractionDigits: 6, maximumFractionDigits: 6, useGrouping: false });

function simulationFigures(result: SimulationResult) {
  return {
    rounds: result.rounds,
    wins: result.wins,
    totalStakeMicro: result.totalStakeMicro.toString(),
    totalPayoutMicro: result.totalPayoutMicro.toString(),
    measuredRtp: result.measured.decimal,
    confidence99: { low: SIX.format(result.confidence99.low), high: SIX.format(result.confidence99.high) },
    exactRtp: { fraction: result.exact.fraction, decimal: result.exact.decimal },
    exactInside: result.exactInside,
  };
}

type SimulationReport = ReturnType<typeof simulationFigures> & {
  gameCode: string;
  rngVersion: string;
  mathVersion: string;
  bet: Record<string, string | null>;
  stakeMicro: string;
  serverSeed: string;
  clientSeed: string;
};

function simulationTable(report: SimulationReport): string {
  const bet = Object.entries(report.bet)
    .map(([key, value]) => `${key} ${value ?? 'none'}`)
    .join(', ');
  const rows: [string, string][] = [
    ['game', `${report.gameCode} (${report.rngVersion}, ${report.mathVersion})`],
    ['bet', `${bet}, stake ${report.stakeMicro} micro`],
    ['rounds', `${report.rounds}, won ${report.wins}`],
    ['seeds', `server ${report.serverSeed}, client ${report.clientSeed}, nonces 0 to ${report.rounds - 1}`],
    ['measured', `${report.measuredRtp}  99% interval ${report.confidence99.low} to ${report.confidence99.high}`],
    ['exact', `${report.exactRtp.decimal}  (${report.exactRtp.fraction}) ${report.exactInside ? 'inside' : 'OUTSIDE'} the interval`],
  ];
  return rows.map(([name, value]) => `${name.padEnd(10)}${value}\n`).join('');
}
