import type { Command } from 'commander';
import { loadConfig } from '../../shared/platform/config.js';
import { migrate } from '../../shared/platform/db/migrate.js';
import type { Action } from '../kit.js';

// `rgs migrate` (D11, P2): the database, its migrations and the service's own signing keys.

export function migrateCommand(program: Command, action: Action): void {
  // D38: the service's own signing keys exist from here on, sealed under MASTER_KEY
  action(
    program
      .command('migrate')
      .description('create the database if it is missing, apply the migrations, and make the pack and token signing keys if there are none'),
    () => {
      const config = loadConfig();
      const tokenKeyAlg = config.sessionTokenAlg === 'HS256' ? undefined : config.sessionTokenAlg;
      return migrate(config.databaseUrl, undefined, { masterKey: config.masterKey, tokenKeyAlg });
    },
  );
}
