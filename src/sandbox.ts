import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ADMIN_PREFIX, adminHandler } from './simulator/admin.js';
import { WalletSimulator } from './simulator/wallet-simulator.js';

// `npm run sandbox` (D35, docs/sandbox.md): the project's wallet simulator as a process of its
// own, for an integrator to point a staging deployment's sandbox operator at, with the admin
// API of src/simulator/admin.ts on the same port under /admin. No database, no Redis: the
// wallet's state lives in this process and is gone when it stops.

const USAGE = `usage: npm run sandbox -- [--port N] [--host ADDRESS] [--tls-key FILE --tls-cert FILE]

Environment (an option wins over its variable):
  SANDBOX_PORT          port of the wallet and the admin API (default 4100)
  SANDBOX_HOST          address to listen on (default 127.0.0.1)
  SANDBOX_ADMIN_TOKEN   the admin API's bearer token, at least 16 characters (default: a
                        random one, printed at start)
  SANDBOX_WALLET_KID    the operator's walletKeyId whose signatures the wallet accepts,
  SANDBOX_WALLET_SECRET with its walletSignatureSecret (or add them later: POST /admin/credentials)
  SANDBOX_TLS_KEY_FILE, SANDBOX_TLS_CERT_FILE  serve https with this PEM key and certificate
`;

type SandboxSettings = {
  port: number;
  host: string;
  adminToken: string;
  tokenGenerated: boolean;
  credential: { kid: string; secret: string } | undefined;
  tls: { key: Buffer; cert: Buffer } | undefined;
};

class UsageError extends Error {}

function settings(argv: string[], env: NodeJS.ProcessEnv): SandboxSettings {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'tls-key': { type: 'string' },
      'tls-cert': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const portText = values.port ?? env.SANDBOX_PORT ?? '4100';
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65535) throw new UsageError(`the port must be 0 to 65535, got ${portText}`);
  const token = env.SANDBOX_ADMIN_TOKEN;
  if (token !== undefined && !/^[\x21-\x7E]{16,256}$/.test(token)) {
    throw new UsageError('SANDBOX_ADMIN_TOKEN must be 16 to 256 printable characters without spaces');
  }
  const [kid, secret] = [env.SANDBOX_WALLET_KID, env.SANDBOX_WALLET_SECRET];
  if ((kid === undefined) !== (secret === undefined)) throw new UsageError('SANDBOX_WALLET_KID and SANDBOX_WALLET_SECRET go together');
  const [keyFile, certFile] = [values['tls-key'] ?? env.SANDBOX_TLS_KEY_FILE, values['tls-cert'] ?? env.SANDBOX_TLS_CERT_FILE];
  if ((keyFile === undefined) !== (certFile === undefined)) throw new UsageError('--tls-key and --tls-cert go together');
  return {
    port: Number(portText),
    host: values.host ?? env.SANDBOX_HOST ?? '127.0.0.1',
    adminToken: token ?? randomBytes(24).toString('hex'),
    tokenGenerated: token === undefined,
    credential: kid !== undefined && secret !== undefined ? { kid, secret } : undefined,
    tls: keyFile !== undefined && certFile !== undefined ? { key: readFileSync(keyFile), cert: readFileSync(certFile) } : undefined,
  };
}

async function main(): Promise<void> {
  const options = settings(process.argv.slice(2), process.env);
  let wallet: WalletSimulator | undefined;
  const admin = adminHandler(() => wallet!, { token: options.adminToken });
  wallet = await WalletSimulator.start({ port: options.port, host: options.host, tls: options.tls, intercept: admin });
  if (options.credential) wallet.addCredential(options.credential.kid, options.credential.secret);

  const adminUrl = `${wallet.url}${ADMIN_PREFIX}`;
  const auth = `Authorization: Bearer ${options.tokenGenerated ? options.adminToken : '$SANDBOX_ADMIN_TOKEN'}`;
  process.stdout.write(
    `RGS wallet sandbox is running.\n` +
      `  wallet URL:  ${wallet.url}\n` +
      `  admin API:   ${adminUrl}  (${auth})\n` +
      `  signatures:  ${options.credential ? `accepted from kid ${options.credential.kid}` : 'no wallet credential yet: POST /admin/credentials {kid, secret}'}\n\n` +
      `Register it on your staging deployment as a sandbox operator's wallet:\n` +
      `  rgs operator create --id my-sandbox --wallet-url ${wallet.url} --sandbox true\n` +
      `then hand the printed walletKeyId and walletSignatureSecret to the sandbox:\n` +
      `  curl -X POST ${adminUrl}/credentials -H '${auth}' -H 'content-type: application/json' \\\n` +
      `       -d '{"kid": "<walletKeyId>", "secret": "<walletSignatureSecret>"}'\n` +
      `and fund a player:\n` +
      `  curl -X POST ${adminUrl}/balances -H '${auth}' -H 'content-type: application/json' \\\n` +
      `       -d '{"playerRef": "player-1", "currency": "EUR", "balanceMicro": "100000000"}'\n\n` +
      `docs/sandbox.md describes the admin API. Ctrl-C stops it (its balances and ledger go with it).\n`,
  );

  const stop = async () => {
    await wallet?.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((err: unknown) => {
  const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`sandbox: ${(err as Error).message}\n${usage ? USAGE : ''}`);
  process.exit(usage ? 2 : 1);
});
