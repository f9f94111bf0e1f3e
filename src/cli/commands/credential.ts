import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { loadConfig } from '../../shared/platform/config.js';
import { addPublicKeyCredential, revokeCredential, rotateCredential } from '../../shared/wallet/credentials.js';
import { SEALING_NOTE, UsageError, required, sealing, type Action } from '../kit.js';

// `rgs credential rotate|add|revoke` (contract 5.3, D34): operators' keys.

const CREDENTIAL_ADD_HELP = `
The operator signs the canonical string of contract 5.1 with its private key and sends its
base64 in X-Rgs-Signature, with X-Rgs-Key-Id set to the kid printed here. The credential
accepts signatures of its algorithm only. With --jwks-url any key of the set usable for the
algorithm verifies; the URL follows the wallet URL's rules (https: and a public address in
production, unless the operator has --wallet-url-private-allowed true). Prints {kind, kid,
alg, notBefore, previousKid, previousNotAfter}.

Example:
  rgs credential add --operator casino-1 --kind api --alg EdDSA --public-key-file casino-1.pub.pem`;

export function credentialCommands(program: Command, action: Action): void {
  const credential = program.command('credential').description("rotate and revoke operators' keys");
  action(
    credential
      .command('rotate')
      .description('mint a new key; the keys of that kind before it keep working for 24 hours')
      .requiredOption('--operator <id>', 'the operator')
      .addOption(new Option('--kind <kind>', "api (signs the operator's requests) or wallet (signs our wallet calls)").choices(['api', 'wallet']).makeOptionMandatory())
      .addHelpText('after', SEALING_NOTE),
    (values, database) => {
      const kind = required(values, 'kind');
      if (kind !== 'api' && kind !== 'wallet') throw new UsageError('--kind must be api or wallet');
      const operatorId = required(values, 'operator');
      return sealing((masterKey) => rotateCredential(database().db, masterKey, operatorId, kind === 'api' ? 'API' : 'WALLET'));
    },
  );
  // D34, D38: an API credential verified with the operator's public key
  action(
    credential
      .command('add')
      .description("add an API credential verified with the operator's public key (RS256 or EdDSA); the API keys before it keep working for 24 hours")
      .requiredOption('--operator <id>', 'the operator')
      .addOption(new Option('--kind <kind>', 'api: the only kind an operator signs with').choices(['api']).makeOptionMandatory())
      .addOption(new Option('--alg <alg>', 'RS256 (RSASSA-PKCS1-v1_5 SHA-256) or EdDSA (Ed25519)').choices(['RS256', 'EdDSA']).makeOptionMandatory())
      .option('--public-key-file <file>', 'the public key, PEM (-----BEGIN PUBLIC KEY-----, SPKI)')
      .option('--jwks-url <url>', "the operator's key set (JWKS), fetched and kept at most 10 minutes")
      .addHelpText('after', CREDENTIAL_ADD_HELP),
    async (values, database) => {
      const alg = required(values, 'alg');
      if (alg !== 'RS256' && alg !== 'EdDSA') throw new UsageError('--alg must be RS256 or EdDSA');
      const file = values['public-key-file'];
      const jwksUrl = values['jwks-url'];
      if ((file === undefined) === (jwksUrl === undefined)) throw new UsageError('give exactly one of --public-key-file and --jwks-url');
      let source: { publicKeyPem: string } | { jwksUrl: string };
      if (typeof file === 'string') {
        try {
          source = { publicKeyPem: await readFile(file, 'utf8') };
        } catch (err) {
          throw new UsageError(`cannot read the public key from ${file}: ${(err as Error).message}`);
        }
      } else source = { jwksUrl: String(jwksUrl) };
      return addPublicKeyCredential(database().db, required(values, 'operator'), alg, source, { production: loadConfig().nodeEnv === 'production' });
    },
  );
  action(
    credential.command('revoke').description('stop a key at once (401 key_not_valid_now)').requiredOption('--kid <kid>', 'the key id'),
    (values, database) => revokeCredential(database().db, required(values, 'kid')),
  );
}
