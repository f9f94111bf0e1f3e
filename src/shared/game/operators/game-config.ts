import type { Db, GameConfig } from '../../platform/db/client.js';
import { CredentialError } from '../../wallet/credentials.js';
import { GameConfigError, type ConfigValue } from '../../domain/games/config.js';
import { diceModule, type DiceConfig } from '../../domain/games/dice.js';
import { LAUNCHABLE_GAME_CODES, availableToEveryOperator, gameModule, isKnownGame } from '../../domain/games/index.js';
import type { AnyGameModule, StakeTerms } from '../../domain/games/types.js';
import { formatMultiplier, multiplierScaledOf } from '../../domain/payout.js';

// A game's configuration per (operator, game, currency) (contract 2.12, D9, D18, D39, D46): the
// game's module says its keys, defaults and bounds; this file stores it. The keys every
// shared-clock game has (windows, stake bounds, commission), dice's own, the stake step and the
// payout rounding have columns, which the engine snapshots into each cycle (clock.ts); a game's
// other keys are held as written in `params`. A key left unset keeps following its default:
// the stake step its currency's minor unit (D46), crash's maxPayoutMicro its maxBetMicro (D40).

// the dice module's defaults (D39), which are contract 2.12's and D9's, without a currency
export const DEFAULT_GAME_CONFIG: Readonly<DiceConfig> = diceModule.config.defaults;

export type GameConfigValues = DiceConfig;

// a configuration of any game, as its module parsed it
export type AnyGameConfig = StakeTerms & Record<string, ConfigValue>;

// the properties with a column of game_configs (and of cycles, their snapshot)
const COLUMNS = [
  'bettingWindowMs',
  'rollingWindowMs',
  'cooldownMs',
  'minBetMicro',
  'maxBetMicro',
  'commissionMicro',
  'payoutMultiplierScaled',
  'lowWeight',
  'highWeight',
  'stakeStepMicro',
  'payoutRounding',
] as const satisfies readonly (keyof GameConfig)[];
type Column = (typeof COLUMNS)[number];
const isColumn = (property: string): property is Column => (COLUMNS as readonly string[]).includes(property);

// D18: payoutMultiplier is a decimal with at most 5 fractional digits, held scaled by 100000
// (read and written by domain/payout.ts).
export function parseMultiplier(text: string): bigint {
  if (!/^[0-9]{1,6}(?:\.[0-9]{1,5})?$/.test(text)) throw new GameConfigError(`payout multiplier must be a decimal with at most 5 fractional digits: ${text}`);
  const scaled = multiplierScaledOf(text);
  if (scaled === undefined) throw new GameConfigError('payout multiplier must be positive');
  return scaled;
}

export { formatMultiplier, GameConfigError };

// the module of a game a configuration may be written for: one a session may launch
export function configurableGame(gameCode: string): AnyGameModule {
  const module = isKnownGame(gameCode) ? gameModule(gameCode) : undefined;
  if (!module) throw new GameConfigError(`unknown game: ${gameCode} (games: ${LAUNCHABLE_GAME_CODES.join(', ')})`);
  return module;
}

// what a stored row holds, as written (a game_configs row, or a cycle's snapshot of one)
type StoredRow = { [C in Column]: GameConfig[C] | NonNullable<GameConfig[C]> } & { params: GameConfig['params'] };

function storedKeys(module: AnyGameModule, row: StoredRow): Record<string, unknown> {
  const values: Record<string, ConfigValue> = {};
  for (const { property } of module.config.fields) {
    const value = isColumn(property) ? row[property] : undefined;
    if (value !== null && value !== undefined) values[property] = value;
  }
  const params = row.params !== null && typeof row.params === 'object' && !Array.isArray(row.params) ? row.params : {};
  return { ...module.config.write(values as Partial<AnyGameConfig>), ...params };
}

// db may be a transaction, so that a caller holding one does not need a second connection
export async function loadGameConfig(db: Pick<Db, 'gameConfig'>, operatorId: string, gameCode: string, currency: string): Promise<AnyGameConfig> {
  const module = configurableGame(gameCode);
  const row = await db.gameConfig.findUnique({ where: { operatorId_gameCode_currency: { operatorId, gameCode, currency } } });
  return module.config.parse(row ? storedKeys(module, row) : {}, { currency }) as AnyGameConfig;
}

// Changes a game's configuration: `values` as the game computes with them (tests, fixtures),
// `written` as an operator writes them (`rgs game config --set k=v`, D39). The result is
// validated whole by the game's module (D24): an unknown key or a value out of its bounds is
// refused with the key and the bound named, and nothing is stored.
export async function setGameConfig(
  db: Db,
  operatorId: string,
  gameCode: string,
  currency: string,
  values: Partial<Record<string, ConfigValue>>,
  written: Readonly<Record<string, unknown>> = {},
) {
  const module = configurableGame(gameCode);
  const operator = await db.operator.findUnique({ where: { id: operatorId }, select: { id: true } });
  if (!operator) throw new CredentialError(`operator ${operatorId} does not exist`);
  const key = { operatorId, gameCode, currency };
  const row = await db.gameConfig.findUnique({ where: { operatorId_gameCode_currency: key } });
  const given = { ...(row ? storedKeys(module, row) : {}), ...module.config.write(values as Partial<AnyGameConfig>), ...written };
  const config = module.config.parse(given, { currency }) as AnyGameConfig;
  const columns: Partial<Record<Column, ConfigValue>> = {};
  const params: Record<string, string | number> = {};
  for (const { property, key: name } of module.config.fields) {
    // a key never given keeps following its default, unless a column must hold a value
    if (isColumn(property)) {
      if (property !== 'stakeStepMicro' || name in given) columns[property] = config[property];
    } else if (name in given) params[name] = module.config.write({ [property]: config[property] } as Partial<AnyGameConfig>)[name]!;
  }
  const data = { ...(columns as Partial<Omit<GameConfig, 'params'>>), params };
  await db.gameConfig.upsert({ where: { operatorId_gameCode_currency: key }, create: { ...key, ...data }, update: data });
  return describeGameConfig(operatorId, gameCode, currency, config);
}

// the configuration as an operator reads it: every key of the game, as written
export function describeGameConfig(operatorId: string, gameCode: string, currency: string, config: AnyGameConfig) {
  return { operatorId, gameCode, currency, ...configurableGame(gameCode).config.write(config) };
}

// What a new cycle snapshots of its engine's configuration (contract 8.6): the columns, each
// from the game's configuration, or for a column the game has no key for, the value the table
// gives it (a crash cycle has no weights); and the game's other keys, as written (`params`).
// `config` is the configuration they are written from, which is what cycleConfig reads back.
export type ConfigSnapshot = { columns: Readonly<Record<Column, ConfigValue>>; params: Record<string, string | number>; config: AnyGameConfig };

// A snapshot as a new cycle's row takes it: the cycles table's columns (SNAPSHOT_COLUMNS_SQL)
// and their values in the same order (snapshotValues), the payout rounding as text and params
// as JSON text, for an INSERT that casts them (a clock's cycle, clock.ts; an instant play's,
// plays/place.ts)
export const SNAPSHOT_COLUMNS_SQL = `betting_window_ms, rolling_window_ms, cooldown_ms, min_bet_micro, max_bet_micro, commission_micro,
  payout_multiplier_scaled, low_weight, high_weight, stake_step_micro, payout_rounding, params`;

export const snapshotValues = ({ columns: c, params }: Pick<ConfigSnapshot, 'columns' | 'params'>): ConfigValue[] => [
  c.bettingWindowMs,
  c.rollingWindowMs,
  c.cooldownMs,
  c.minBetMicro,
  c.maxBetMicro,
  c.commissionMicro,
  c.payoutMultiplierScaled,
  c.lowWeight,
  c.highWeight,
  c.stakeStepMicro,
  c.payoutRounding,
  JSON.stringify(params),
];

const COLUMN_DEFAULTS: Readonly<Record<Column, ConfigValue>> = { ...diceModule.config.defaults };

export async function configSnapshot(db: Pick<Db, 'gameConfig'>, operatorId: string, gameCode: string, currency: string): Promise<ConfigSnapshot> {
  const module = configurableGame(gameCode);
  const config = await loadGameConfig(db, operatorId, gameCode, currency);
  const columns: Record<Column, ConfigValue> = { ...COLUMN_DEFAULTS };
  const others: Partial<AnyGameConfig> = {};
  for (const { property } of module.config.fields) {
    if (isColumn(property)) columns[property] = config[property]!;
    else others[property] = config[property];
  }
  return { columns, params: module.config.write(others), config };
}

// D39: whether a session of the game may be launched for the operator in the currency: a game
// the service plays, available to every operator or configured by this one for the currency
export async function gameAvailable(db: Pick<Db, 'gameConfig'>, operatorId: string, gameCode: string, currency: string): Promise<boolean> {
  if (!isKnownGame(gameCode)) return false;
  if (availableToEveryOperator(gameCode)) return true;
  const row = await db.gameConfig.findUnique({ where: { operatorId_gameCode_currency: { operatorId, gameCode, currency } }, select: { gameCode: true } });
  return row !== null;
}

// D39 `GET /v1/games`: the games a session of the operator may launch, each with the currencies
// the operator configured it for. The return to player and the largest multiplier are those
// of the game's defaults for a bet of its typical parameters (dice: LOW; crash: cashing out
// at 2.00x), and each currency line has its own, from its configuration.
// D41: a game with a jackpot names its pool in the currency: as it stands, or its seed before
// the first play fed it
export type CatalogueCurrency = {
  currency: string;
  minBetMicro: string;
  maxBetMicro: string;
  stakeStepMicro: string;
  rtp: string;
  maxMultiplier: string;
  jackpotPoolMicro?: string;
};
export type CatalogueGame = {
  gameCode: string;
  kind: string;
  name: string;
  rngVersion: string;
  mathVersion: string;
  rtp: string;
  maxMultiplier: string;
  availableInEveryCurrency: boolean;
  currencies: CatalogueCurrency[];
  features: string[];
};

export async function gameCatalogue(db: Pick<Db, 'gameConfig' | 'jackpotPool'>, operatorId: string): Promise<{ games: CatalogueGame[] }> {
  const rows = await db.gameConfig.findMany({
    where: { operatorId, gameCode: { in: [...LAUNCHABLE_GAME_CODES] } },
    orderBy: [{ gameCode: 'asc' }, { currency: 'asc' }],
  });
  const pools = new Map((await db.jackpotPool.findMany({ where: { operatorId } })).map((pool) => [pool.currency, pool.poolMicro]));
  const games: CatalogueGame[] = [];
  for (const gameCode of LAUNCHABLE_GAME_CODES) {
    const module = configurableGame(gameCode);
    const own = rows.filter((row) => row.gameCode === gameCode);
    const everyOperator = availableToEveryOperator(gameCode);
    if (!everyOperator && own.length === 0) continue;
    const terms = (config: AnyGameConfig) => ({ rtp: catalogueRtp(module, config), maxMultiplier: module.maxMultiplier(config) });
    games.push({
      gameCode,
      kind: module.kind,
      name: module.name,
      rngVersion: module.rngVersion,
      mathVersion: module.mathVersion,
      ...terms(module.config.defaults as AnyGameConfig),
      availableInEveryCurrency: everyOperator,
      currencies: own.map((row) => {
        const config = module.config.parse(storedKeys(module, row), { currency: row.currency }) as AnyGameConfig;
        return {
          currency: row.currency,
          minBetMicro: config.minBetMicro.toString(),
          maxBetMicro: config.maxBetMicro.toString(),
          stakeStepMicro: config.stakeStepMicro.toString(),
          ...terms(config),
          ...(module.kind === 'instant' ? { jackpotPoolMicro: (pools.get(row.currency) ?? module.instant.jackpotSeedMicro(config)).toString() } : {}),
        };
      }),
      features: [...module.features],
    });
  }
  return { games };
}

// the exact RTP of a bet of the game's typical parameters, its decimal without trailing zeros
// ("0.97")
function catalogueRtp(module: AnyGameModule, config: AnyGameConfig): string {
  const bet = module.bet.parse(Object.fromEntries(module.bet.keys.map((key) => [key.key, key.example])), config);
  return module.rtp(config, bet).decimal.replace(/0+$/, '').replace(/\.$/, '');
}

// contract 8.6: the configuration a cycle plays, from its snapshot (its columns and params), as
// the game's module reads it. Unlike a launch, a cycle of a game that is not launchable (any
// more) still has a module: its rounds must finish.
export function cycleConfig(cycle: StoredRow & { gameCode: string; currency: string }): AnyGameConfig {
  const module = gameModule(cycle.gameCode);
  if (!module) throw new GameConfigError(`unknown game: ${cycle.gameCode}`);
  return module.config.parse(storedKeys(module, cycle), { currency: cycle.currency }) as AnyGameConfig;
}
