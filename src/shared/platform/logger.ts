import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';

// One structured logger per process. LOG_FORMAT=json (the default, and what production
// runs): JSON lines on stdout for a log pipeline. LOG_FORMAT=pretty (the demo's default):
// one readable line per entry, rendered by pino-pretty, a development dependency, so it is
// loaded only when asked for and a production install (without development dependencies)
// never needs it. Level from LOG_LEVEL; tests default to silent so that their output stays
// readable.
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const require = createRequire(import.meta.url);

// whether LOG_FORMAT=pretty can be honoured here (config.ts refuses it otherwise)
export function prettyFormatAvailable(): boolean {
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

// D25: what must never reach a log, by the key it is logged under: the service's secrets
// and operators' credentials (contract 5.3), session tokens and the launch URL that carries
// one (5.6), request signatures (5.2), the headers that carry any of these, cookies, server
// seeds not yet revealed (D2), and connection strings, which may hold a password.
const SECRET_KEYS = [
  'secret',
  'secrets',
  'apiSecret',
  'walletSignatureSecret',
  'encryptedSecret',
  'wrappedDataKey',
  'dataKey',
  'masterKey',
  'jwtSecret',
  'metricsToken',
  'password',
  'token',
  'sessionToken',
  'accessToken',
  'refreshToken',
  'botChallengeToken',
  'launchUrl',
  'signature',
  'serverSeed',
  'encryptedServerSeed',
  'databaseUrl',
  'databaseReplicaUrl',
  'redisUrl',
  // the environment, as it names them
  'MASTER_KEY',
  'JWT_SECRET',
  'METRICS_TOKEN',
  'BOT_CHALLENGE_SECRET',
  'DATABASE_URL',
  'DATABASE_REPLICA_URL',
  'REDIS_URL',
  // headers, in the lower case Node gives them
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-rgs-signature',
  'bot-challenge-response',
];

// Where such a key sits when an object is logged whole: at the top, or inside one of these.
// The paths are spelled out rather than wildcarded: pino applies a path only to a line that
// has its first key, so a line without any of these pays nothing, whereas a leading
// wildcard would walk every line.
const CONTAINERS = [
  'headers',
  'req',
  'req.headers',
  'request',
  'request.headers',
  'res',
  'res.headers',
  'response',
  'response.headers',
  'body',
  'payload',
  'fields',
  'query',
  'params',
  'claims',
  'config',
  'config.botChallenge',
  'botChallenge',
  'env',
  'credential',
  'operator',
  'session',
  'auth',
  'handshake',
  'handshake.auth',
  'handshake.headers',
  'handshake.query',
  'err',
  'err.config',
  'err.headers',
  'error',
  'error.headers',
];

const pathOf = (key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`);

export const REDACTED_PATHS: readonly string[] = [
  ...SECRET_KEYS.map(pathOf),
  ...CONTAINERS.flatMap((container) => SECRET_KEYS.map((key) => `${container}.${pathOf(key)}`)),
];

export type LoggerOptions = {
  level: string;
  format?: LogFormat;
  name?: string;
  // where lines go (stdout when not given); tests pass a stream of their own
  destination?: DestinationStream;
};

export function createLogger({ level, format = 'json', name = 'rgs', destination }: LoggerOptions): Logger {
  const options = { name, level, base: { pid: process.pid }, redact: { paths: [...REDACTED_PATHS] } };
  if (format === 'pretty') {
    const pretty = require('pino-pretty') as typeof import('pino-pretty');
    // synchronous, so that its lines and the demo's own messages on stdout keep their order
    return pino(
      options,
      pretty.build({
        sync: true,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,name',
        ...(destination ? { destination, colorize: false } : {}),
      }),
    );
  }
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
