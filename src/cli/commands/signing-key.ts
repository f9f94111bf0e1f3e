import type { Command } from 'commander';
import { PACK_KEY, revokeSigningKey, rotateSigningKey } from '../../shared/platform/signing-keys.js';
import { SEALING_NOTE, required, sealing, type Action } from '../kit.js';

// `rgs signing-key rotate|revoke` (D32): the dispute-pack signing key.

const REVOKE_HELP = `
Revoke a key you believe leaked (a leaked MASTER_KEY together with a database copy). Whoever
holds it can sign a pack with any date, so a verifier refuses every pack it signed, even one
made before; the key stays listed at GET /v1/keys with its revokedAt so the refusal says why.
Ask for the packs you still need again: they are signed by the current key. Revoking the
current key makes a new current key in the same transaction. Prints {purpose, revokedKid,
revokedAt, retiredAt, kid}, kid being the new current key (null when the revoked key was
not current).
`;

export function signingKeyCommands(program: Command, action: Action): void {
  const signingKey = program.command('signing-key').description("the service's own signing keys (dispute packs, D32)");
  action(
    signingKey
      .command('rotate')
      .description('make a new current dispute-pack key; the old one is retired and stays published at GET /v1/keys')
      .addHelpText('after', SEALING_NOTE.replace('The new secrets are', 'The new private key is')),
    (_values, database) => {
      const { sql } = database();
      return sealing((masterKey) => rotateSigningKey((work) => sql.transaction(work), masterKey, PACK_KEY));
    },
  );
  // D32: a leaked key is revoked, not just retired: no pack it signed verifies any more
  action(
    signingKey
      .command('revoke')
      .description('revoke a dispute-pack key: it signs nothing more and no pack it signed verifies, whatever its date')
      .requiredOption('--kid <kid>', 'the key id (pk_...) as GET /v1/keys lists it')
      .addHelpText('after', REVOKE_HELP + SEALING_NOTE.replace('The new secrets are', 'The new private key is')),
    (values, database) => {
      const { sql } = database();
      return sealing((masterKey) => revokeSigningKey((work) => sql.transaction(work), masterKey, PACK_KEY, required(values, 'kid')));
    },
  );
}
