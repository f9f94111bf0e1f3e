import type { Command } from 'commander';
import { describeGameConfig, loadGameConfig, parseMultiplier, setGameConfig, type GameConfigValues } from '../../shared/game/operators/game-config.js';
import { UsageError, integerOption, required, type Action, type Values } from '../kit.js';

// `rgs game config|show`: a game's configuration per operator and currency (D11).

function gameOptions(command: Command): Command {
  return command
    .requiredOption('--operator <id>', 'the operator')
    .requiredOption('--game <code>', 'the game (dice)')
    .requiredOption('--currency <code>', 'the currency');
}

export function gameCommands(program: Command, action: Action): void {
  const game = program.command('game').description("a game's configuration per operator and currency");
  action(
    gameOptions(game.command('config').description('change the configuration; prints it merged with the defaults'))
      .option('--betting-window-ms <n>', 'how long betting is open')
      .option('--rolling-window-ms <n>', 'how long the dice roll')
      .option('--cooldown-ms <n>', 'pause between rounds')
      .option('--min-bet-micro <n>', 'smallest bet in micro-units (1 = 0.000001)')
      .option('--max-bet-micro <n>', 'largest bet in micro-units')
      .option('--commission-micro <n>', 'commission, 0 to 100000 (0% to 100%)')
      .option('--payout-multiplier <x>', 'payout multiplier, at most 5 decimals (1.98)')
      .option('--low-weight <n>', 'weight of LOW')
      .option('--high-weight <n>', 'weight of HIGH')
      .addHelpText('after', '\nOptions left out keep their stored value, or the default.'),
    (values, database) =>
      setGameConfig(database().db, required(values, 'operator'), required(values, 'game'), required(values, 'currency'), gameConfigChanges(values)),
  );
  action(gameOptions(game.command('show').description('print the configuration in force')), async (values, database) => {
    const [operatorId, gameCode, currency] = [required(values, 'operator'), required(values, 'game'), required(values, 'currency')];
    return describeGameConfig(operatorId, gameCode, currency, await loadGameConfig(database().db, operatorId, gameCode, currency));
  });
}

function bigintOption(values: Values, name: string): bigint | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,20}$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer`);
  return BigInt(value);
}

function gameConfigChanges(values: Values): Partial<GameConfigValues> {
  const changes: Partial<GameConfigValues> = {
    bettingWindowMs: integerOption(values, 'betting-window-ms'),
    rollingWindowMs: integerOption(values, 'rolling-window-ms'),
    cooldownMs: integerOption(values, 'cooldown-ms'),
    minBetMicro: bigintOption(values, 'min-bet-micro'),
    maxBetMicro: bigintOption(values, 'max-bet-micro'),
    commissionMicro: bigintOption(values, 'commission-micro'),
    lowWeight: bigintOption(values, 'low-weight'),
    highWeight: bigintOption(values, 'high-weight'),
  };
  const multiplier = values['payout-multiplier'];
  if (typeof multiplier === 'string') changes.payoutMultiplierScaled = parseMultiplier(multiplier);
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
}
