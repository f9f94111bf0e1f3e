import type { Command } from 'commander';
import type { Database } from '../shared/platform/db/client.js';
import { loadConfig } from '../shared/platform/config.js';

// What every command group of `rgs` shares (D11): the answers a command returns, the error
// that makes a command line not understood (exit 2), the readers of option values, and the
// sealing of new secrets under MASTER_KEY (D25).

export class UsageError extends Error {
  override name = 'UsageError';
}

// an answer that is printed on stdout like any other, but exits 1 (an invalid proof)
export class FailedAnswer {
  constructor(readonly answer: unknown) {}
}

// an answer laid out for a person (a table), printed as it is; failed: exit 1
export class TextAnswer {
  constructor(
    readonly text: string,
    readonly failed = false,
  ) {}
}

export type Values = Record<string, string | boolean | string[] | undefined>;
export type Run = (values: Values, database: () => Database) => Promise<unknown>;
// gives a command its run: its values parsed, the database opened on first use and closed after
export type Action = (command: Command, run: Run) => Command;

export const TRUE_FALSE = ['true', 'false'];

export const SEALING_NOTE = `
The new secrets are sealed under MASTER_KEY. Without it the development key published with
the source is used and a warning is printed on stderr; with NODE_ENV=production that is
refused.`;

// D25: the commands that seal new secrets under MASTER_KEY. In production loadConfig has
// refused the development key already; elsewhere the secrets are still minted (tests, the
// demo), and once they are, stderr says that anyone with this repository can open them.
export async function sealing<T>(seal: (masterKey: Buffer, production: boolean) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const sealed = await seal(config.masterKey, config.nodeEnv === 'production');
  if (config.developmentMasterKey) {
    warnDevelopmentKey(
      process.env.MASTER_KEY
        ? 'MASTER_KEY is the development key published in this repository and these secrets are sealed under it'
        : 'MASTER_KEY is not set, so these secrets are sealed under the development key published in this repository',
    );
  }
  return sealed;
}

export function warnDevelopmentKey(what: string): void {
  const warning = {
    warning: 'development_master_key',
    message:
      `${what}: anyone with the source can read them. Set MASTER_KEY to a key of your own before onboarding a real ` +
      'operator; rgs master-key rewrap moves what is sealed already',
  };
  process.stderr.write(`${JSON.stringify(warning)}\n`);
}

export function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export const list = (value: unknown): string[] | undefined =>
  typeof value === 'string' ? value.split(',').map((item) => item.trim()).filter(Boolean) : undefined;

export function integerOption(values: Values, name: string): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9]{1,9}$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(value);
}

export function booleanOption(values: Values, name: string): boolean | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false`);
  return value === 'true';
}
