import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig } from '../platform/config.js';
import { createDb, type Db } from '../platform/db/client.js';
import { migrate } from '../platform/db/migrate.js';
import { verifyDiceProof } from '../domain/proof.js';
import { rotateCredential, revokeCredential } from '../wallet/credentials.js';
import {
  describeGameConfig,
  loadGameConfig,
  parseMultiplier,
  setGameConfig,
  type GameConfigValues,
} from '../game/operators/game-config.js';
import { createOperator, describeOperator, updateOperator, type OperatorSettings } from '../game/operators/operators.js';
import { parseRgMaxSpec } from '../domain/rg-limits.js';

// `rgs`, the operator administration tool (DECISIONS D11): JSON on stdout; on failure a
// JSON error on stderr and a non-zero exit (2 for a usage error, 1 otherwise).

export class UsageError extends Error {
  override name = 'UsageError';
}

// an answer that is printed on stdout like any other, but exits 1 (an invalid proof)
class FailedAnswer {
  constructor(readonly answer: unknown) {}
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | string[] | undefined>;

const OPERATOR_OPTIONS: Options = {
  id: { type: 'string' },
  'wallet-url': { type: 'string' },
  'wallet-url-private-allowed': { type: 'string' },
  currency: { type: 'string' },
  'ip-allow': { type: 'string' },
  'jurisdictions-blocked': { type: 'string' },
  'frame-ancestors': { type: 'string' },
  'rg-max': { type: 'string', multiple: true },
  'signature-window-seconds': { type: 'string' },
  suspended: { type: 'string' },
};

const GAME_CONFIG_OPTIONS: Options = {
  operator: { type: 'string' },
  game: { type: 'string' },
  currency: { type: 'string' },
  'betting-window-ms': { type: 'string' },
  'rolling-window-ms': { type: 'string' },
  'cooldown-ms': { type: 'string' },
  'min-bet-micro': { type: 'string' },
  'max-bet-micro': { type: 'string' },
  'commission-micro': { type: 'string' },
  'payout-multiplier': { type: 'string' },
  'low-weight': { type: 'string' },
  'high-weight': { type: 'string' },
};

const USAGE = `usage:
  rgs migrate
  rgs operator create --id ID --wallet-url URL [--wallet-url-private-allowed true|false]
                      [--currency EUR,USD] [--ip-allow CIDR,...]
                      [--jurisdictions-blocked XX,...] [--frame-ancestors ORIGIN,...]
                      [--rg-max JUR:sessionTimeSeconds=N,dailyLossMicro=N,dailyWagerMicro=N]...
                      [--signature-window-seconds N]
  rgs operator update --id ID [the same options] [--suspended true|false]
  rgs operator show --id ID
  rgs game config --operator ID --game dice --currency EUR [--betting-window-ms N] [--rolling-window-ms N]
                  [--cooldown-ms N] [--min-bet-micro N] [--max-bet-micro N] [--commission-micro N]
                  [--payout-multiplier X] [--low-weight N] [--high-weight N]
  rgs credential rotate --operator ID --kind api|wallet
  rgs credential revoke --kid KID
  rgs jobs abandoned
  rgs verify [--proof FILE|-]        (a proof of GET /v1/rounds/{id}/proof; stdin without --proof)`;

type Command = { options: Options; run: (values: Values, db: () => Db) => Promise<unknown> };

const COMMANDS: Record<string, Command> = {
  migrate: {
    options: {},
    run: () => migrate(loadConfig().databaseUrl),
  },
  'operator create': {
    options: OPERATOR_OPTIONS,
    run: (values, db) => {
      const id = required(values, 'id');
      const settings = { ...operatorSettings(values), walletUrl: required(values, 'wallet-url') };
      return sealing((masterKey, production) => createOperator(db(), masterKey, id, settings, { production }));
    },
  },
  'operator update': {
    options: OPERATOR_OPTIONS,
    run: (values, db) =>
      updateOperator(db(), required(values, 'id'), operatorSettings(values), { production: loadConfig().nodeEnv === 'production' }),
  },
  'operator show': {
    options: { id: { type: 'string' } },
    run: async (values, db) => {
      const operator = await db().operator.findUnique({ where: { id: required(values, 'id') } });
      if (!operator) throw new Error(`operator ${String(values.id)} does not exist`);
      return describeOperator(operator);
    },
  },
  'game config': {
    options: GAME_CONFIG_OPTIONS,
    run: (values, db) =>
      setGameConfig(db(), required(values, 'operator'), required(values, 'game'), required(values, 'currency'), gameConfigChanges(values)),
  },
  'game show': {
    options: { operator: { type: 'string' }, game: { type: 'string' }, currency: { type: 'string' } },
    run: async (values, db) => {
      const [operator, game, currency] = [required(values, 'operator'), required(values, 'game'), required(values, 'currency')];
      return describeGameConfig(operator, game, currency, await loadGameConfig(db(), operator, game, currency));
    },
  },
  'credential rotate': {
    options: { operator: { type: 'string' }, kind: { type: 'string' } },
    run: (values, db) => {
      const kind = required(values, 'kind');
      if (kind !== 'api' && kind !== 'wallet') throw new UsageError('--kind must be api or wallet');
      const operatorId = required(values, 'operator');
      return sealing((masterKey) => rotateCredential(db(), masterKey, operatorId, kind === 'api' ? 'API' : 'WALLET'));
    },
  },
  'credential revoke': {
    options: { kid: { type: 'string' } },
    run: (values, db) => revokeCredential(db(), required(values, 'kid')),
  },
  'jobs abandoned': {
    options: {},
    run: async (_values, db) => {
      const jobs = await db().walletJob.findMany({ where: { abandonedAt: { not: null } }, orderBy: { abandonedAt: 'asc' } });
      return {
        jobs: jobs.map((job) => ({
          id: job.id,
          operatorId: job.operatorId,
          endpoint: job.endpoint,
          purpose: job.purpose,
          betId: job.betId,
          transactionUuid: job.transactionUuid,
          attempts: job.attempts,
          lastError: job.lastError,
          createdAt: job.createdAt.toISOString(),
          abandonedAt: job.abandonedAt?.toISOString() ?? null,
          payload: job.payload,
        })),
      };
    },
  },
  // contract 2.11, D2: checks a proof offline, with no database
  verify: {
    options: { proof: { type: 'string' } },
    run: async (values) => {
      const verdict = verifyDiceProof(await readProof(values.proof));
      return verdict.valid ? verdict : new FailedAnswer(verdict);
    },
  },
};

// D25: commands that seal new secrets under MASTER_KEY. In production loadConfig has refused
// the development key already; elsewhere the secrets are still minted (tests, the demo), and
// once they are, stderr says that anyone with this repository can open them.
async function sealing<T>(seal: (masterKey: Buffer, production: boolean) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const sealed = await seal(config.masterKey, config.nodeEnv === 'production');
  if (config.developmentMasterKey) {
    const warning = {
      warning: 'development_master_key',
      message: 'MASTER_KEY is the development key published in this repository and these secrets are sealed under it; set MASTER_KEY before onboarding a real operator',
    };
    process.stderr.write(`${JSON.stringify(warning)}\n`);
  }
  return sealed;
}

async function readProof(file: Values[string]): Promise<unknown> {
  const source = typeof file === 'string' && file !== '-' ? file : 'stdin';
  let proofText: string;
  try {
    proofText = source === 'stdin' ? await text(process.stdin) : await readFile(source, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the proof from ${source}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(proofText);
  } catch {
    throw new UsageError(`the proof in ${source} is not JSON`);
  }
}

function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

const list = (value: unknown): string[] | undefined =>
  typeof value === 'string' ? value.split(',').map((item) => item.trim()).filter(Boolean) : undefined;

function integerOption(values: Values, name: string): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,9}$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(value);
}

function bigintOption(values: Values, name: string): bigint | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,20}$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer`);
  return BigInt(value);
}

function booleanOption(values: Values, name: string): boolean | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false`);
  return value === 'true';
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
    rgMax: Array.isArray(rgMax) ? rgMax.map(parseRgMaxSpec) : undefined,
  };
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

// Resolves "operator create" from the first words, then parses the rest strictly.
export async function runCli(argv: string[]): Promise<unknown> {
  const name = [argv.slice(0, 2).join(' '), argv[0] ?? ''].find((candidate) => candidate in COMMANDS);
  if (!name) throw new UsageError(argv.length ? `unknown command: ${argv.join(' ')}` : 'a command is required');
  const command = COMMANDS[name]!;
  let values: Values;
  try {
    ({ values } = parseArgs({ args: argv.slice(name.split(' ').length), options: command.options, strict: true, allowPositionals: false }) as {
      values: Values;
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  let db: Db | undefined;
  try {
    return await command.run(values, () => (db ??= createDb(loadConfig().databaseUrl, 2)));
  } finally {
    await db?.$disconnect();
  }
}

const bigintAsString = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

export async function main(argv = process.argv.slice(2)): Promise<number> {
  try {
    const result = await runCli(argv);
    const failed = result instanceof FailedAnswer;
    process.stdout.write(`${JSON.stringify(failed ? result.answer : result, bigintAsString, 2)}\n`);
    return failed ? 1 : 0;
  } catch (err) {
    const usage = err instanceof UsageError;
    const error = { error: usage ? 'usage' : ((err as Error).name ?? 'Error'), message: (err as Error).message, ...(usage ? { usage: USAGE } : {}) };
    process.stderr.write(`${JSON.stringify(error, null, 2)}\n`);
    return usage ? 2 : 1;
  }
}
