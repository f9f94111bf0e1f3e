import { minorUnitMicro } from '../currency.js';
import { MAX_MICRO } from '../money.js';

// A game's configuration schema (D39): every key with its default and bounds, validated like
// every input (D24). A configuration arrives as a map of keys to values as they are written
// (the JSON file of `rgs game simulate --config`; D39's `rgs game config --set k=v`); an
// unknown key, a malformed value or a value out of its bounds is refused with the key and the
// bound named, every problem at once.

export class GameConfigError extends Error {
  override name = 'GameConfigError';
}

// One key: how its value is read and written, and its inclusive bounds. V is the value the
// game computes with (a number of ms, a bigint of micro-units, a scaled multiplier, D18; a
// choice among words, which has no bounds but its list).
export type ConfigValue = number | bigint | string;
export type ConfigField<V extends ConfigValue> = {
  // what a well-formed value is, for the message that refuses a malformed one
  form: string;
  read(raw: unknown): V | undefined;
  // the value as it is written (D18: bigints as decimal strings)
  write(value: V): string | number;
  min?: V;
  max?: V;
};

// What a default may depend on besides the other keys: the currency the configuration is for
// (D46: the stake step defaults to the currency's minor unit). Left out (a simulation without
// a currency), a default reads as for a currency without a minor unit.
export type ConfigContext = { currency?: string };

// The table of a game's keys: each value the game computes with → its field, its default and,
// when it is written under another name, that key (dice's payoutMultiplierScaled is written
// payoutMultiplier, D18). A default may follow other keys (D40: maxPayoutMicro defaults to
// maxBetMicro * 1000): it is then computed from the values already read, which are the keys
// with a plain default or a given value.
export type ConfigFields<Config> = {
  [K in keyof Config]: Config[K] extends ConfigValue
    ? ConfigField<Config[K]> & { default: Config[K] | ((others: Config, context: ConfigContext) => Config[K]); key?: string }
    : never;
};

// a rule between keys, e.g. maxBetMicro >= minBetMicro: the problem, naming the bound, or
// undefined
export type ConfigCheck<Config> = (config: Config) => string | undefined;

// every game's stakes are bounded per configuration (contract 8.2 rule 3, D9), whatever else
// its configuration holds
export type BetLimits = { minBetMicro: bigint; maxBetMicro: bigint };

export const betLimitsCheck: ConfigCheck<BetLimits> = (c) =>
  c.maxBetMicro < c.minBetMicro ? `maxBetMicro must be at least minBetMicro (${c.minBetMicro}): got ${c.maxBetMicro}` : undefined;

// D46: how a win's payout is booked: `exact` to the micro-unit (contract 8.4), or `minor_unit`,
// rounded down to the currency's minor unit, for wallets that book cents
export const PAYOUT_ROUNDINGS = ['exact', 'minor_unit'] as const;
export type PayoutRounding = (typeof PAYOUT_ROUNDINGS)[number];

// What every game's configuration holds, whatever else it holds (D46): its stake bounds, the
// step a stake must be a multiple of, and how a payout is rounded.
export type StakeTerms = BetLimits & { stakeStepMicro: bigint; payoutRounding: PayoutRounding };

export type ConfigSchema<Config> = {
  readonly keys: readonly string[];
  // each key and the name the game computes with (dice's payoutMultiplier is payoutMultiplierScaled)
  readonly fields: readonly { key: string; property: string }[];
  // the defaults without a context (a currency without a minor unit)
  readonly defaults: Readonly<Config>;
  // a whole configuration from the keys given; a key left out takes its default
  parse(input: Readonly<Record<string, unknown>>, context?: ConfigContext): Config;
  // the configuration as written (the inverse of parse); of a part, that part
  write(config: Partial<Config>): Record<string, string | number>;
};

export function configSchema<Config extends Record<string, ConfigValue>>(
  gameCode: string,
  fields: ConfigFields<Config>,
  checks: readonly ConfigCheck<Config>[] = [],
): ConfigSchema<Config> {
  type Entry = ConfigField<ConfigValue> & { default: unknown; key?: string };
  const entries = Object.entries(fields as Record<string, Entry>).map(([property, entry]) => ({ property, key: entry.key ?? property, ...entry }));
  const keys = entries.map((entry) => entry.key);
  // plain defaults first, then the ones computed from them
  const ordered = [...entries].sort((a, b) => Number(typeof a.default === 'function') - Number(typeof b.default === 'function'));

  const parse = (input: Readonly<Record<string, unknown>>, context: ConfigContext = {}): Config => {
    const problems = Object.keys(input)
      .filter((key) => !keys.includes(key))
      .map((key) => `${key} is not a key of ${gameCode} (its keys: ${keys.join(', ')})`);
    const config: Record<string, ConfigValue> = {};
    for (const { property, key, read, write, min, max, form, default: fallback } of ordered) {
      const raw = input[key];
      if (raw === undefined) {
        // a default computed from other keys needs them read; with a problem the configuration
        // is refused anyway
        if (typeof fallback !== 'function') config[property] = fallback as ConfigValue;
        else if (problems.length === 0) config[property] = (fallback as (others: Config, context: ConfigContext) => ConfigValue)(config as Config, context);
        continue;
      }
      const value = read(raw);
      if (value === undefined) problems.push(`${key} must be ${form}: got ${JSON.stringify(raw)}`);
      else if (min !== undefined && value < min) problems.push(`${key} must be at least ${write(min)}: got ${write(value)}`);
      else if (max !== undefined && value > max) problems.push(`${key} must be at most ${write(max)}: got ${write(value)}`);
      else config[property] = value;
    }
    // the rules between keys need every key read
    if (problems.length === 0) {
      for (const check of checks) {
        const problem = check(config as Config);
        if (problem !== undefined) problems.push(problem);
      }
    }
    if (problems.length) throw new GameConfigError(`${gameCode} config: ${problems.join('; ')}`);
    return config as Config;
  };

  return {
    keys,
    fields: entries.map(({ key, property }) => ({ key, property })),
    defaults: Object.freeze(parse({})),
    parse,
    write: (config) =>
      Object.fromEntries(entries.flatMap(({ property, key, write }) => (config[property] === undefined ? [] : [[key, write(config[property])]]))),
  };
}

// D24: integers as JSON numbers (safe integers) or as decimal strings without leading zeros,
// decimals or a plus sign; the fields below read them this way. A negative one is read, so
// that it is refused by its bound, which the message then names.
const INTEGER_TEXT = /^-?(0|[1-9][0-9]{0,19})$/;

function readInteger(raw: unknown): bigint | undefined {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? BigInt(raw) : undefined;
  return typeof raw === 'string' && INTEGER_TEXT.test(raw) ? BigInt(raw) : undefined;
}

// a duration in ms; the stored column is a Postgres integer
export const INT32_MAX = 2 ** 31 - 1;
export const msField = (min: number, max = INT32_MAX): ConfigField<number> => ({
  form: 'a whole number of milliseconds',
  // a value past MAX_SAFE_INTEGER is above max, and refused as such
  read: (raw) => {
    const value = readInteger(raw);
    return value === undefined ? undefined : Number(value);
  },
  write: (value) => value,
  min,
  max,
});

// D18: an amount of micro-units (or a weight), a bigint written as a decimal string; the stored
// column is a Postgres BIGINT
export const integerField = (min: bigint, max = MAX_MICRO): ConfigField<bigint> => ({
  form: 'a whole number, as a decimal string or a JSON integer',
  read: readInteger,
  write: (value) => value.toString(),
  min,
  max,
});

// a choice among words, written as itself
export const choiceField = <V extends string>(choices: readonly V[]): ConfigField<V> => ({
  form: `one of ${choices.join(', ')}`,
  read: (raw) => (choices as readonly unknown[]).includes(raw) ? (raw as V) : undefined,
  write: (value) => value,
});

// the keys of StakeTerms beside the bet bounds, which each game bounds itself: every game's
// schema spreads them
export const stakeStepFields = {
  stakeStepMicro: { ...integerField(1n), default: (_others: unknown, context: ConfigContext) => minorUnitMicro(context.currency) },
  payoutRounding: { ...choiceField(PAYOUT_ROUNDINGS), default: 'exact' as PayoutRounding },
};
