import type { Command } from 'commander';
import { loadConfig } from '../../shared/platform/config.js';
import { TOKEN_KEY, revokeSigningKey, rotateSigningKey } from '../../shared/platform/signing-keys.js';
import { SEALING_NOTE, required, sealing, type Action } from '../kit.js';

// `rgs token-key rotate|revoke` (D34): the session-token signing key.

const TOKEN_KEY_HELP = `
Session tokens are signed with this key when SESSION_TOKEN_ALG is RS256 or EdDSA (the new
key is of that algorithm; EdDSA while it is HS256). Tokens made from now on name the new
kid; the old key stays published at GET /.well-known/jwks.json and keeps verifying for 60
minutes, the longest a session token lives. Prints {purpose, kid, algorithm, retiredKid,
retiredAt}.
`;

export function tokenKeyCommands(program: Command, action: Action): void {
  // D34: the key that signs session tokens when SESSION_TOKEN_ALG is RS256 or EdDSA
  const tokenKey = program.command('token-key').description("the service's own session-token signing key (D34)");
  action(
    tokenKey
      .command('rotate')
      .description('make a new current session-token key (of SESSION_TOKEN_ALG); the old one keeps verifying for a session lifetime')
      .addHelpText('after', TOKEN_KEY_HELP + SEALING_NOTE.replace('The new secrets are', 'The new private key is')),
    (_values, database) => {
      const { sql } = database();
      const alg = loadConfig().sessionTokenAlg;
      return sealing((masterKey) => rotateSigningKey((work) => sql.transaction(work), masterKey, TOKEN_KEY, alg === 'HS256' ? 'EdDSA' : alg));
    },
  );
  action(
    tokenKey
      .command('revoke')
      .description('revoke a session-token key: it is no longer published and verifies no token; a current one is replaced (of SESSION_TOKEN_ALG)')
      .requiredOption('--kid <kid>', 'the key id (tk_...)')
      .addHelpText('after', SEALING_NOTE.replace('The new secrets are', 'The new private key is')),
    (values, database) => {
      const { sql } = database();
      const alg = loadConfig().sessionTokenAlg;
      return sealing((masterKey) => revokeSigningKey((work) => sql.transaction(work), masterKey, TOKEN_KEY, required(values, 'kid'), alg === 'HS256' ? 'EdDSA' : alg));
    },
  );
}
