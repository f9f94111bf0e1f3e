import { LOG_FORMATS, prettyFormatAvailable, type LogFormat } from './logger.js';

// Configuration (DECISIONS D12, D20, D25), read from the environment once and validated as a
// whole: a bad start lists every bad variable by name, not only the first.

export const ROLE_NAMES = ['api', 'realtime', 'scheduler', 'bet', 'settle', 'rollback', 'webhooks'] as const;
export type Role = (typeof ROLE_NAMES)[number];
export const BET_HANDOFFS = ['local', 'queue'] as const;
export type BetHandoff = (typeof BET_HANDOFFS)[number];
// D34: how session tokens are signed: HS256 under JWT_SECRET, or the service's own RS256 or
// Ed25519 key (published at GET /.well-known/jwks.json)
export const SESSION_TOKEN_ALGS = ['HS256', 'RS256', 'EdDSA'] as const;
export type SessionTokenAlg = (typeof SESSION_TOKEN_ALGS)[number];

export type Config = {
  nodeEnv: string;
  databaseUrl: string;
  // Postgres connections per process: a bet holds one for its acceptance while the
  // workers' other jobs need theirs; shared between the statements' and Prisma's pools
  // (db/client.ts poolShares)
  databasePoolSize: number;
  // D36: the streaming replica that serves the reports and reconciliation reads (the
  // primary serves them when unset)
  databaseReplicaUrl: string | undefined;
  redisUrl: string;
  // D36: a Redis Cluster, reached through any of these nodes, in place of REDIS_URL's server
  // (whose user, password and TLS still apply); undefined: the one server of REDIS_URL
  redisClusterNodes: RedisNode[] | undefined;
  // namespaces every Redis key, queue and channel of this deployment
  redisKeyPrefix: string;
  port: number;
  publicUrl: string;
  masterKey: Buffer;
  // D25: the master key is one of DEVELOPMENT_MASTER_KEYS (the CLI warns before sealing under it)
  developmentMasterKey: boolean;
  jwtSecret: string;
  sessionTokenAlg: SessionTokenAlg;
  // D34: with SESSION_TOKEN_ALG other than HS256, HS256 session tokens are refused after
  // this instant; undefined: one session lifetime after the process started
  sessionTokenHs256Until: Date | undefined;
  walletCallTimeoutMs: number;
  // D37: the delay of this process's own work (its event loop, its oldest bet waiting for a
  // statement) past which new bets are refused service_busy and the operator calls that
  // start work get 503 (src/api/load-shedding.ts); 0: no bound
  overloadDelayMs: number;
  trustProxy: boolean;
  // D12, D24: how many proxies stand in front; the caller IP is the X-Forwarded-For entry
  // that many places from the right (the left-most entries are chosen by the client)
  trustProxyHops: number;
  roles: Role[];
  // where a process with both the realtime and the bet role debits its players' bets:
  // itself ('local', debit.ts: no queue between) or through the bet queue ('queue')
  betHandoff: BetHandoff;
  // D20: where a process without the api role serves health and metrics
  healthPort: number | undefined;
  // D25: in production, the bearer token that opens /metrics on the public port
  metricsToken: string | undefined;
  logLevel: string;
  // json (the default: log pipelines read it) or pretty (a person reads it: the demo)
  logFormat: LogFormat;
  // D35: sandbox operators' powers (sandboxSeeds, ten times the rate limits) are in effect;
  // off by default in production, where known seeds would make real-money outcomes predictable
  sandboxEnabled: boolean;
  botChallenge:
    | { secret: string; verifyUrl: string; failClosed: boolean; timeoutMs: number }
    | undefined;
  // warnings to print once a logger exists (development defaults in use)
  warnings: string[];
};

export type RedisNode = { host: string; port: number };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

// Development-only defaults: usable on a laptop, refused in production (D12), even when set
// explicitly (D25: they are published in this repository). The first entry is the current
// default; a changed default goes first and the old value stays on its list, still refused.
export const DEVELOPMENT_MASTER_KEYS: readonly string[] = ['00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'];
export const DEVELOPMENT_JWT_SECRETS: readonly string[] = ['development-only-jwt-secret-do-not-use-in-production-0123456789abcdef'];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const warnings: string[] = [];
  const nodeEnv = env.NODE_ENV ?? 'development';
  const production = nodeEnv === 'production';

  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const url = (name: string, fallback: string, protocols: string[]): string => {
    const raw = env[name] || fallback;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
    } catch {
      problems.push(`${name} must be a ${protocols.join(' or ')} URL (got "${raw}")`);
    }
    return raw.replace(/\/+$/, '');
  };
  const secret = (name: string, devDefault: string): string => {
    const raw = env[name];
    if (raw) return raw;
    if (production) problems.push(`${name} is required when NODE_ENV=production`);
    else warnings.push(`${name} is not set: using the INSECURE development default`);
    return devDefault;
  };

  const port = integer('PORT', 3000, 0, 65535);
  const healthPort = env.HEALTH_PORT ? integer('HEALTH_PORT', 0, 0, 65535) : undefined;

  const masterKeyText = secret('MASTER_KEY', DEVELOPMENT_MASTER_KEYS[0]!);
  const masterKey = parseMasterKey(masterKeyText);
  if (!masterKey) problems.push('MASTER_KEY must be 32 bytes as 64 hex characters or base64');
  const developmentMasterKey = masterKey !== undefined && isDevelopmentMasterKey(masterKey);
  if (production && env.MASTER_KEY && developmentMasterKey) {
    problems.push('MASTER_KEY is a development key published in this repository: refused when NODE_ENV=production');
  }

  const jwtSecret = secret('JWT_SECRET', DEVELOPMENT_JWT_SECRETS[0]!);
  if (jwtSecret.length < 32) problems.push('JWT_SECRET must be at least 32 characters');
  if (production && env.JWT_SECRET && DEVELOPMENT_JWT_SECRETS.includes(jwtSecret)) {
    problems.push('JWT_SECRET is a development secret published in this repository: refused when NODE_ENV=production');
  }

  const sessionTokenAlg = (env.SESSION_TOKEN_ALG || 'HS256') as SessionTokenAlg;
  if (!SESSION_TOKEN_ALGS.includes(sessionTokenAlg)) {
    problems.push(`SESSION_TOKEN_ALG must be one of ${SESSION_TOKEN_ALGS.join(', ')} (got "${sessionTokenAlg}")`);
  }

  // an ISO 8601 instant with its offset (Date.parse alone would read a bare date as UTC and
  // a bare date-time as local time)
  let sessionTokenHs256Until: Date | undefined;
  if (env.SESSION_TOKEN_HS256_UNTIL) {
    const raw = env.SESSION_TOKEN_HS256_UNTIL;
    const at = new Date(raw);
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw) || Number.isNaN(at.getTime())) {
      problems.push(`SESSION_TOKEN_HS256_UNTIL must be an ISO 8601 instant with its offset, like 2026-12-01T12:00:00Z (got "${raw}")`);
    } else sessionTokenHs256Until = at;
  }

  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 32) problems.push('METRICS_TOKEN must be at least 32 characters');

  const roles: Role[] = [];
  for (const name of (env.ROLES || ROLE_NAMES.join(',')).split(',').map((r) => r.trim()).filter(Boolean)) {
    if ((ROLE_NAMES as readonly string[]).includes(name)) roles.push(name as Role);
    else problems.push(`ROLES has an unknown role "${name}" (known: ${ROLE_NAMES.join(', ')})`);
  }
  if (roles.length === 0 && problems.length === 0) problems.push('ROLES selects no role');
  // D20, D25: a process that listens on PORT serves HEALTH_PORT beside it
  if (healthPort && healthPort === port && (roles.includes('api') || roles.includes('realtime'))) {
    problems.push('HEALTH_PORT must differ from PORT in a process with the api or realtime role');
  }

  const betHandoff = (env.BET_HANDOFF || 'local') as BetHandoff;
  if (!BET_HANDOFFS.includes(betHandoff)) problems.push(`BET_HANDOFF must be one of ${BET_HANDOFFS.join(', ')} (got "${betHandoff}")`);

  const redisKeyPrefix = env.REDIS_KEY_PREFIX || 'rgs';
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(redisKeyPrefix)) problems.push('REDIS_KEY_PREFIX must be 1 to 32 of A-Z a-z 0-9 _ -');

  const redisClusterNodes = env.REDIS_CLUSTER_NODES ? parseRedisNodes(env.REDIS_CLUSTER_NODES) : undefined;
  if (redisClusterNodes === null) problems.push(`REDIS_CLUSTER_NODES must be host:port pairs separated by commas (got "${env.REDIS_CLUSTER_NODES}")`);
  // a cluster has database 0 only; REDIS_URL lends it no more than its credentials and TLS
  if (redisClusterNodes && /^rediss?:\/\/[^/]*\/[1-9]/.test(env.REDIS_URL ?? '')) {
    problems.push('REDIS_URL names a database other than 0, which a Redis Cluster (REDIS_CLUSTER_NODES) does not have');
  }

  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const logFormat = (env.LOG_FORMAT || 'json') as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) problems.push(`LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')} (got "${logFormat}")`);
  // pretty is rendered by a development dependency, absent from a production install
  else if (logFormat === 'pretty' && !prettyFormatAvailable()) {
    problems.push('LOG_FORMAT=pretty needs the development dependencies installed (pino-pretty); use json');
  }

  let botChallenge: Config['botChallenge'];
  if (env.BOT_CHALLENGE_SECRET) {
    const verifyUrl = env.BOT_CHALLENGE_VERIFY_URL;
    if (!verifyUrl) problems.push('BOT_CHALLENGE_VERIFY_URL is required when BOT_CHALLENGE_SECRET is set');
    botChallenge = {
      secret: env.BOT_CHALLENGE_SECRET,
      verifyUrl: verifyUrl ? url('BOT_CHALLENGE_VERIFY_URL', verifyUrl, ['http:', 'https:']) : '',
      failClosed: boolean('BOT_CHALLENGE_FAIL_CLOSED', false),
      timeoutMs: integer('BOT_CHALLENGE_TIMEOUT_MS', 2000, 1, 60000),
    };
  }

  const sandboxEnabled = boolean('SANDBOX_ENABLED', !production);
  if (production && sandboxEnabled) {
    warnings.push('SANDBOX_ENABLED=true with NODE_ENV=production: sandbox operators may fix their seeds (D35); never on a deployment that moves real money');
  }

  const config: Config = {
    nodeEnv,
    databaseUrl: url('DATABASE_URL', 'postgresql://postgres@127.0.0.1:5432/rgs', ['postgresql:', 'postgres:']),
    databasePoolSize: integer('DATABASE_POOL_SIZE', 20, 1, 500),
    databaseReplicaUrl: env.DATABASE_REPLICA_URL ? url('DATABASE_REPLICA_URL', '', ['postgresql:', 'postgres:']) : undefined,
    redisUrl: url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    redisClusterNodes: redisClusterNodes ?? undefined,
    redisKeyPrefix,
    port,
    publicUrl: url('PUBLIC_URL', `http://127.0.0.1:${port}`, ['http:', 'https:']),
    masterKey: masterKey ?? Buffer.alloc(32),
    developmentMasterKey,
    jwtSecret,
    sessionTokenAlg,
    sessionTokenHs256Until,
    walletCallTimeoutMs: integer('WALLET_CALL_TIMEOUT_MS', 5000, 1, 60000),
    overloadDelayMs: integer('OVERLOAD_DELAY_MS', 100, 0, 10000),
    trustProxy: boolean('TRUST_PROXY', false),
    trustProxyHops: integer('TRUST_PROXY_HOPS', 1, 1, 16),
    roles,
    betHandoff,
    healthPort,
    metricsToken,
    logLevel,
    logFormat,
    sandboxEnabled,
    botChallenge,
    warnings,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

// D25: compared as bytes: the same key in upper-case hex or in base64 is the same key
export const isDevelopmentMasterKey = (key: Buffer): boolean => DEVELOPMENT_MASTER_KEYS.some((known) => parseMasterKey(known)!.equals(key));

// D36: "host:port,host:port" (an IPv6 host in brackets); null when any entry is not one
export function parseRedisNodes(text: string): RedisNode[] | null {
  const nodes: RedisNode[] = [];
  for (const entry of text.split(',').map((part) => part.trim())) {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(entry);
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) return null;
    nodes.push({ host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port: Number(match[2]) });
  }
  return nodes;
}

// 32 bytes as 64 hex characters or base64 (MASTER_KEY, and the new key of `rgs master-key rewrap`)
export function parseMasterKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/]{43}=?$/.test(text)) {
    const key = Buffer.from(text, 'base64');
    if (key.length === 32) return key;
  }
  return undefined;
}
