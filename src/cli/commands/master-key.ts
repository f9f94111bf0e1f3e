import type { Command } from 'commander';
import { isDevelopmentMasterKey, loadConfig, parseMasterKey, type Config } from '../../shared/platform/config.js';
import { rewrapMasterKey } from '../../shared/game/secrets/master-key.js';
import { UsageError, warnDevelopmentKey, type Action } from '../kit.js';

// `rgs master-key rewrap` (D25): what is sealed under MASTER_KEY moved to a new key.

const REWRAP_HELP = `
Re-encrypts everything sealed under MASTER_KEY with the key in NEW_MASTER_KEY, in one
transaction: every credential's data key (the secrets the operators hold do not change)
and every server seed (their commitments do not change). The new key is read from the
environment only, never from a flag, so that it stays out of the process list and the shell
history. It is 32 bytes as 64 hex characters or base64, like MASTER_KEY.

Stop every rgs process first: they seal new seeds under the key they started with. Then
start them with MASTER_KEY set to the new key.

If any row opens neither under MASTER_KEY nor under NEW_MASTER_KEY, nothing is changed and
the error names the rows. A row already under NEW_MASTER_KEY is left as it is, so running it
again is safe and re-encrypts only what is still under the old key.

Without MASTER_KEY (never with NODE_ENV=production, where it is required) the old key is
the development key, which is how secrets sealed under it are moved to a real one. A
development key as NEW_MASTER_KEY is refused with NODE_ENV=production and warned about
otherwise.

Prints {credentials: {rewrapped, alreadyUnderNewKey, revokedSkipped}, seeds: {rewrapped,
alreadyUnderNewKey}}.

Example:
  MASTER_KEY=<current key> NEW_MASTER_KEY=<new key> rgs master-key rewrap`;

export function masterKeyCommands(program: Command, action: Action): void {
  const masterKey = program.command('master-key').description('move what is sealed under MASTER_KEY to a new key');
  action(
    masterKey.command('rewrap').description('re-encrypt every credential and server seed from MASTER_KEY to NEW_MASTER_KEY').addHelpText('after', REWRAP_HELP),
    async (_values, database) => {
      const config = loadConfig();
      const newKey = newMasterKey(config);
      const counts = await rewrapMasterKey(database().sql, config.masterKey, newKey);
      if (isDevelopmentMasterKey(newKey)) {
        warnDevelopmentKey('NEW_MASTER_KEY is the development key published in this repository and the credentials and seeds are now sealed under it');
      }
      return counts;
    },
  );
}

// D25: the key `master-key rewrap` seals under, from the environment only (a flag's value
// shows in the process list and the shell history)
function newMasterKey(config: Config): Buffer {
  const text = process.env.NEW_MASTER_KEY;
  if (!text) throw new UsageError('NEW_MASTER_KEY is required: the key to re-encrypt under, 32 bytes as 64 hex characters or base64');
  const key = parseMasterKey(text);
  if (!key) throw new UsageError('NEW_MASTER_KEY must be 32 bytes as 64 hex characters or base64');
  if (config.nodeEnv === 'production' && isDevelopmentMasterKey(key)) {
    throw new Error('NEW_MASTER_KEY is a development key published in this repository: refused when NODE_ENV=production');
  }
  return key;
}
