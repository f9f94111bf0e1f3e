import { expect } from 'chai';
import { ConfigError, DEVELOPMENT_JWT_SECRETS, DEVELOPMENT_MASTER_KEYS, loadConfig } from '../../src/shared/platform/config.js';

// DECISIONS D12 (and D20): configuration is read from the environment once and validated as
// a whole; a bad start names every bad variable, not only the first.

const HEX_KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0';
const JWT = 'j'.repeat(48);

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  expect.fail('loadConfig accepted a bad environment');
}

describe('config (D12)', () => {
  it('uses the D12 defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).to.equal('postgresql://postgres@127.0.0.1:5432/rgs');
    expect(config.redisUrl).to.equal('redis://127.0.0.1:6379');
    expect(config.port).to.equal(3000);
    expect(config.publicUrl).to.equal('http://127.0.0.1:3000');
    expect(config.walletCallTimeoutMs).to.equal(5000);
    expect(config.trustProxy).to.equal(false);
    expect(config.nodeEnv).to.equal('development');
    expect(config.botChallenge).to.equal(undefined);
    // D36: without a replica, the reports read the primary
    expect(config.databaseReplicaUrl).to.equal(undefined);
    // a process with the realtime and the bet role debits its own players' bets
    expect(config.betHandoff).to.equal('local');
    // the development master key is a usable 32-byte AES key
    expect(config.masterKey).to.be.instanceOf(Buffer);
    expect(config.masterKey.length).to.equal(32);
    expect(config.jwtSecret.length).to.be.at.least(32);
    // ROLES default: every role this build knows
    expect(config.roles).to.include('api');
  });

  it('derives the default PUBLIC_URL from PORT', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).to.equal('http://127.0.0.1:8080');
    expect(loadConfig({ PORT: '8080', PUBLIC_URL: 'https://rgs.example/' }).publicUrl).to.equal('https://rgs.example');
  });

  it('reads the variables that are set', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@db.example:5433/prod',
      DATABASE_REPLICA_URL: 'postgresql://u@replica.example:5433/prod',
      REDIS_URL: 'rediss://cache.example:6380',
      PORT: '0',
      WALLET_CALL_TIMEOUT_MS: '1234',
      TRUST_PROXY: 'true',
      ROLES: 'api',
      BET_HANDOFF: 'queue',
      MASTER_KEY: HEX_KEY,
      JWT_SECRET: JWT,
    });
    expect(config.databaseUrl).to.equal('postgres://u@db.example:5433/prod');
    expect(config.databaseReplicaUrl).to.equal('postgresql://u@replica.example:5433/prod');
    expect(config.redisUrl).to.equal('rediss://cache.example:6380');
    expect(config.port).to.equal(0);
    expect(config.walletCallTimeoutMs).to.equal(1234);
    expect(config.trustProxy).to.equal(true);
    expect(config.roles).to.deep.equal(['api']);
    expect(config.betHandoff).to.equal('queue');
    expect(config.jwtSecret).to.equal(JWT);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).to.equal(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).to.equal(true);
  });

  it('reads TRUST_PROXY_HOPS: 1 by default, an integer from 1 (D12)', () => {
    expect(loadConfig({}).trustProxyHops).to.equal(1);
    expect(loadConfig({ TRUST_PROXY: 'true', TRUST_PROXY_HOPS: '3' }).trustProxyHops).to.equal(3);
    for (const bad of ['0', '-1', '1.5', 'two']) expect(problemsOf({ TRUST_PROXY_HOPS: bad }).join(), bad).to.include('TRUST_PROXY_HOPS');
  });

  it('reads SESSION_TOKEN_ALG: HS256 by default, RS256 or EdDSA (D34)', () => {
    expect(loadConfig({}).sessionTokenAlg).to.equal('HS256');
    for (const alg of ['HS256', 'RS256', 'EdDSA']) expect(loadConfig({ SESSION_TOKEN_ALG: alg }).sessionTokenAlg).to.equal(alg);
    for (const bad of ['rs256', 'HS512', 'none']) expect(problemsOf({ SESSION_TOKEN_ALG: bad }).join(), bad).to.include('SESSION_TOKEN_ALG');
  });

  it('reads SESSION_TOKEN_HS256_UNTIL: an ISO 8601 instant with its offset, unset by default (D34)', () => {
    expect(loadConfig({}).sessionTokenHs256Until).to.equal(undefined);
    expect(loadConfig({ SESSION_TOKEN_HS256_UNTIL: '2026-12-01T12:00:00Z' }).sessionTokenHs256Until?.toISOString()).to.equal('2026-12-01T12:00:00.000Z');
    expect(loadConfig({ SESSION_TOKEN_HS256_UNTIL: '2026-12-01T13:30:00.5+01:00' }).sessionTokenHs256Until?.toISOString()).to.equal('2026-12-01T12:30:00.500Z');
    for (const bad of ['2026-12-01', '2026-12-01T12:00:00', 'tomorrow', '2026-13-01T12:00:00Z']) {
      expect(problemsOf({ SESSION_TOKEN_HS256_UNTIL: bad }).join(), bad).to.include('SESSION_TOKEN_HS256_UNTIL');
    }
  });

  it('lists every bad variable at once in ConfigError.problems', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      DATABASE_URL: 'mysql://root@127.0.0.1/rgs',
      MASTER_KEY: 'too-short',
      ROLES: 'api,croupier',
      TRUST_PROXY: 'maybe',
      BET_HANDOFF: 'pigeon',
    });
    const named = (name: string) => problems.filter((problem) => problem.includes(name));
    expect(named('PORT'), problems.join('\n')).to.have.length(1);
    expect(named('DATABASE_URL'), problems.join('\n')).to.have.length(1);
    expect(named('MASTER_KEY'), problems.join('\n')).to.have.length(1);
    expect(named('ROLES'), problems.join('\n')).to.have.length(1);
    expect(named('croupier'), 'the unknown role is named').to.have.length(1);
    expect(named('TRUST_PROXY'), problems.join('\n')).to.have.length(1);
    expect(named('BET_HANDOFF'), problems.join('\n')).to.have.length(1);
    expect(problems).to.have.length(6);
  });

  it('reads REDIS_CLUSTER_NODES: a Redis Cluster in place of REDIS_URL\'s server, none by default (D36)', () => {
    expect(loadConfig({}).redisClusterNodes).to.equal(undefined);
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'redis-1.example:7000, 10.0.0.2:7001,[::1]:7002' }).redisClusterNodes).to.deep.equal([
      { host: 'redis-1.example', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    for (const bad of ['redis-1.example', 'redis-1.example:0', 'a:7000,', 'a:70000', 'redis://a:7000', 'a:7000;b:7001']) {
      expect(problemsOf({ REDIS_CLUSTER_NODES: bad }).join(), bad).to.include('REDIS_CLUSTER_NODES');
    }
    // a cluster has database 0 only
    expect(problemsOf({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_URL: 'redis://:pw@a:7000/2' }).join()).to.include('database other than 0');
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'a:7000', REDIS_URL: 'rediss://user:pw@a:7000/0' }).redisClusterNodes).to.have.length(1);
  });

  it('refuses out-of-range and non-integer numbers', () => {
    expect(problemsOf({ PORT: '65536' }).join()).to.include('PORT');
    expect(problemsOf({ PORT: '-1' }).join()).to.include('PORT');
    expect(problemsOf({ PORT: '30.5' }).join()).to.include('PORT');
    expect(problemsOf({ WALLET_CALL_TIMEOUT_MS: '0' }).join()).to.include('WALLET_CALL_TIMEOUT_MS');
    expect(problemsOf({ REDIS_URL: 'http://127.0.0.1:6379' }).join()).to.include('REDIS_URL');
    expect(problemsOf({ DATABASE_URL: 'not a url' }).join()).to.include('DATABASE_URL');
    expect(problemsOf({ DATABASE_REPLICA_URL: 'mysql://root@replica.example/rgs' }).join()).to.include('DATABASE_REPLICA_URL');
  });

  it('the ConfigError message names each problem', () => {
    try {
      loadConfig({ PORT: 'x', TRUST_PROXY: 'y' });
      expect.fail('accepted');
    } catch (err) {
      expect((err as Error).message).to.include('PORT').and.to.include('TRUST_PROXY');
    }
  });

  it('takes MASTER_KEY as 64 hex characters or as base64 of 32 bytes', () => {
    const fromHex = loadConfig({ MASTER_KEY: HEX_KEY, JWT_SECRET: JWT }).masterKey;
    expect(fromHex.toString('hex')).to.equal(HEX_KEY);
    const fromUpperHex = loadConfig({ MASTER_KEY: HEX_KEY.toUpperCase(), JWT_SECRET: JWT }).masterKey;
    expect(fromUpperHex.equals(fromHex)).to.equal(true);
    const base64 = Buffer.from(HEX_KEY, 'hex').toString('base64');
    expect(base64).to.have.length(44);
    const fromBase64 = loadConfig({ MASTER_KEY: base64, JWT_SECRET: JWT }).masterKey;
    expect(fromBase64.equals(fromHex)).to.equal(true);
  });

  it('refuses a MASTER_KEY that is not 32 bytes', () => {
    for (const bad of [
      HEX_KEY.slice(0, 62), // 31 bytes of hex
      `${HEX_KEY}00`, // 33 bytes of hex
      Buffer.alloc(31, 7).toString('base64'),
      Buffer.alloc(33, 7).toString('base64'),
      'z'.repeat(64),
    ]) {
      expect(problemsOf({ MASTER_KEY: bad, JWT_SECRET: JWT }).join(), bad).to.include('MASTER_KEY');
    }
  });

  it('refuses to start in production without MASTER_KEY and JWT_SECRET', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems.some((p) => p.includes('MASTER_KEY')), problems.join('\n')).to.equal(true);
    expect(problems.some((p) => p.includes('JWT_SECRET')), problems.join('\n')).to.equal(true);
    // only one missing: that one is named
    const onlyJwt = problemsOf({ NODE_ENV: 'production', MASTER_KEY: HEX_KEY });
    expect(onlyJwt.some((p) => p.includes('JWT_SECRET'))).to.equal(true);
    expect(onlyJwt.some((p) => p.includes('MASTER_KEY'))).to.equal(false);
    // with both, production starts and warns about nothing
    const config = loadConfig({ NODE_ENV: 'production', MASTER_KEY: HEX_KEY, JWT_SECRET: JWT });
    expect(config.warnings).to.deep.equal([]);
  });

  // D25: the development defaults are published in this repository; explicitly set, they
  // are as good as none. These are the values the repository has shipped.
  const SHIPPED_MASTER_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
  const SHIPPED_JWT_SECRET = 'development-only-jwt-secret-do-not-use-in-production-0123456789abcdef';

  it('refuses in production the development MASTER_KEY and JWT_SECRET even when set explicitly, however spelled (D25)', () => {
    const both = problemsOf({ NODE_ENV: 'production', MASTER_KEY: SHIPPED_MASTER_KEY, JWT_SECRET: SHIPPED_JWT_SECRET });
    expect(both.filter((p) => p.includes('MASTER_KEY')), both.join('\n')).to.have.length(1);
    expect(both.filter((p) => p.includes('JWT_SECRET')), both.join('\n')).to.have.length(1);
    expect(both.join('\n')).to.include('development');
    // the same key bytes in upper-case hex or in base64 are the same key
    for (const spelling of [SHIPPED_MASTER_KEY.toUpperCase(), Buffer.from(SHIPPED_MASTER_KEY, 'hex').toString('base64')]) {
      const problems = problemsOf({ NODE_ENV: 'production', MASTER_KEY: spelling, JWT_SECRET: JWT });
      expect(problems, spelling).to.have.length(1);
      expect(problems[0]).to.include('MASTER_KEY');
    }
    expect(problemsOf({ NODE_ENV: 'production', MASTER_KEY: HEX_KEY, JWT_SECRET: SHIPPED_JWT_SECRET })).to.have.length(1);
  });

  it('keeps refusing every development value ever shipped, not only the current default (D25)', () => {
    expect(DEVELOPMENT_MASTER_KEYS).to.include(SHIPPED_MASTER_KEY);
    expect(DEVELOPMENT_JWT_SECRETS).to.include(SHIPPED_JWT_SECRET);
    // the current defaults are on the lists
    const defaults = loadConfig({});
    expect(DEVELOPMENT_MASTER_KEYS.map((key) => Buffer.from(key, 'hex').toString('hex'))).to.include(defaults.masterKey.toString('hex'));
    expect(DEVELOPMENT_JWT_SECRETS).to.include(defaults.jwtSecret);
    for (const key of DEVELOPMENT_MASTER_KEYS) {
      expect(problemsOf({ NODE_ENV: 'production', MASTER_KEY: key, JWT_SECRET: JWT }).join(), key).to.include('MASTER_KEY');
    }
    for (const jwt of DEVELOPMENT_JWT_SECRETS) {
      expect(problemsOf({ NODE_ENV: 'production', MASTER_KEY: HEX_KEY, JWT_SECRET: jwt }).join(), jwt).to.include('JWT_SECRET');
    }
  });

  it('says whether the master key in use is a development key (the CLI warns on it, D25)', () => {
    expect(loadConfig({}).developmentMasterKey).to.equal(true);
    expect(loadConfig({ MASTER_KEY: SHIPPED_MASTER_KEY.toUpperCase() }).developmentMasterKey).to.equal(true);
    expect(loadConfig({ MASTER_KEY: HEX_KEY }).developmentMasterKey).to.equal(false);
  });

  it('reads METRICS_TOKEN, at least 32 characters (D25)', () => {
    expect(loadConfig({}).metricsToken).to.equal(undefined);
    expect(loadConfig({ METRICS_TOKEN: 'm'.repeat(32) }).metricsToken).to.equal('m'.repeat(32));
    expect(problemsOf({ METRICS_TOKEN: 'short' }).join()).to.include('METRICS_TOKEN');
  });

  it('HEALTH_PORT is another port than PORT where PORT is listened on (D20, D25)', () => {
    expect(problemsOf({ PORT: '8080', HEALTH_PORT: '8080' }).join()).to.include('HEALTH_PORT');
    expect(problemsOf({ PORT: '8080', HEALTH_PORT: '8080', ROLES: 'realtime' }).join()).to.include('HEALTH_PORT');
    expect(loadConfig({ PORT: '8080', HEALTH_PORT: '8081' }).healthPort).to.equal(8081);
    // a worker process does not listen on PORT
    expect(loadConfig({ PORT: '8080', HEALTH_PORT: '8080', ROLES: 'bet,settle' }).healthPort).to.equal(8080);
  });

  it('warns loudly in development when the secrets are defaulted', () => {
    const { warnings } = loadConfig({ NODE_ENV: 'development' });
    expect(warnings.some((w) => w.includes('MASTER_KEY'))).to.equal(true);
    expect(warnings.some((w) => w.includes('JWT_SECRET'))).to.equal(true);
    expect(loadConfig({ MASTER_KEY: HEX_KEY, JWT_SECRET: JWT }).warnings).to.deep.equal([]);
  });

  it('reads LOG_FORMAT: json by default (production too), pretty on request, nothing else', () => {
    expect(loadConfig({}).logFormat).to.equal('json');
    expect(loadConfig({ NODE_ENV: 'production', MASTER_KEY: HEX_KEY, JWT_SECRET: JWT }).logFormat).to.equal('json');
    // the development dependencies are installed where the tests run
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).to.equal('pretty');
    expect(problemsOf({ LOG_FORMAT: 'yaml' }).join()).to.include('LOG_FORMAT');
  });

  it('refuses a JWT_SECRET shorter than 32 characters', () => {
    expect(problemsOf({ JWT_SECRET: 'short' }).join()).to.include('JWT_SECRET');
  });

  it('requires BOT_CHALLENGE_VERIFY_URL once BOT_CHALLENGE_SECRET is set (D20)', () => {
    expect(problemsOf({ BOT_CHALLENGE_SECRET: 's' }).join()).to.include('BOT_CHALLENGE_VERIFY_URL');
    const config = loadConfig({ BOT_CHALLENGE_SECRET: 's', BOT_CHALLENGE_VERIFY_URL: 'https://challenge.example/siteverify' });
    expect(config.botChallenge).to.include({ secret: 's', verifyUrl: 'https://challenge.example/siteverify', failClosed: false });
  });
});
