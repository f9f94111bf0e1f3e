import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger, type LogFormat } from '../../src/shared/platform/logger.js';
import { loadConfig } from '../../src/shared/platform/config.js';

// D25: no secret, token or signature reaches a log line, whatever object it was logged
// inside; the service's own logger (src/shared/platform/logger.ts), in both LOG_FORMATs.

function capture(format: LogFormat = 'json') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger({ level: 'info', format, destination });
  return { logger, output: () => lines.join('') };
}

// values that must not be found anywhere in the output
const SECRETS = {
  signature: 'sig-9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  authorization: 'Bearer metrics-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  cookie: 'sid=cookie-value-0123456789',
  sessionToken: 'eyJhbGciOiJIUzI1NiJ9.session-token-claims.mac',
  launchUrl: 'https://rgs.example/play/dice?token=eyJhbGciOiJIUzI1NiJ9.launch.mac',
  apiSecret: 'api-secret-0123456789abcdef0123456789abcdef',
  walletSecret: 'wallet-secret-fedcba9876543210fedcba98765432',
  jwtSecret: 'jwt-secret-jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj',
  metricsToken: 'metrics-token-mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm',
  botSecret: 'bot-challenge-secret-bbbbbbbbbbbbbbbbbbbbb',
  botToken: 'bot-challenge-token-tttttttttttttttttttttttt',
  databasePassword: 'pg-password-pppppppppp',
};

function expectNoSecret(output: string): void {
  for (const [name, value] of Object.entries(SECRETS)) expect(output, name).not.to.include(value);
  expect(output).not.to.include(Buffer.from('7c'.repeat(32), 'hex').toString('hex'));
}

function logEverything(logger: ReturnType<typeof createLogger>): void {
  // an inbound request's headers, as Koa and Node give them (lower case)
  logger.info(
    {
      req: {
        method: 'POST',
        headers: {
          'x-rgs-key-id': 'kid-visible',
          'x-rgs-timestamp': '1700000000',
          'x-rgs-signature': SECRETS.signature,
          authorization: SECRETS.authorization,
          cookie: SECRETS.cookie,
          'bot-challenge-response': SECRETS.botToken,
        },
      },
    },
    'inbound',
  );
  logger.info({ headers: { 'x-rgs-signature': SECRETS.signature, 'set-cookie': SECRETS.cookie } }, 'outbound');
  // a launch answer and a launch body
  logger.info({ sessionId: 'session-visible', sessionToken: SECRETS.sessionToken, launchUrl: SECRETS.launchUrl }, 'launched');
  logger.info({ body: { requestUuid: 'uuid-visible', botChallengeToken: SECRETS.botToken } }, 'body');
  // onboarding output and a wallet credential
  logger.info({ operatorId: 'op-visible', apiSecret: SECRETS.apiSecret, walletSignatureSecret: SECRETS.walletSecret }, 'onboarded');
  logger.info({ credential: { kid: 'kid-visible', secret: SECRETS.walletSecret } }, 'credential');
  // the whole configuration, by mistake
  const config = loadConfig({
    MASTER_KEY: '7c'.repeat(32),
    JWT_SECRET: SECRETS.jwtSecret,
    METRICS_TOKEN: SECRETS.metricsToken,
    DATABASE_URL: `postgresql://rgs:${SECRETS.databasePassword}@db.example:5432/rgs`,
    DATABASE_REPLICA_URL: `postgresql://rgs:${SECRETS.databasePassword}@replica.example:5432/rgs`,
    BOT_CHALLENGE_SECRET: SECRETS.botSecret,
    BOT_CHALLENGE_VERIFY_URL: 'https://challenge.example/siteverify',
  });
  logger.info({ config }, 'config');
  logger.info({ env: { MASTER_KEY: '7c'.repeat(32), JWT_SECRET: SECRETS.jwtSecret } }, 'env');
  // a socket handshake, and an error carrying what it was given
  logger.info({ handshake: { auth: { token: SECRETS.sessionToken }, headers: { cookie: SECRETS.cookie } } }, 'handshake');
  logger.error({ err: Object.assign(new Error('boom'), { token: SECRETS.sessionToken }) }, 'failed');
  // a child logger bound to a token
  logger.child({ token: SECRETS.sessionToken }).info('child');
}

describe('the service logger redacts secrets (D25)', () => {
  it('JSON lines carry no signature, token, secret, cookie or credential, and keep everything else', () => {
    const { logger, output } = capture('json');
    logEverything(logger);
    const text = output();
    expectNoSecret(text);
    const lines = text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
    expect(lines).to.have.length(11);
    expect(lines[0]!.req.headers).to.deep.equal({
      'x-rgs-key-id': 'kid-visible',
      'x-rgs-timestamp': '1700000000',
      'x-rgs-signature': '[Redacted]',
      authorization: '[Redacted]',
      cookie: '[Redacted]',
      'bot-challenge-response': '[Redacted]',
    });
    expect(lines[2]).to.include({ sessionId: 'session-visible', sessionToken: '[Redacted]', launchUrl: '[Redacted]' });
    expect(lines[3]!.body).to.deep.equal({ requestUuid: 'uuid-visible', botChallengeToken: '[Redacted]' });
    expect(lines[5]!.credential).to.deep.equal({ kid: 'kid-visible', secret: '[Redacted]' });
    expect(lines[6]!.config).to.include({ masterKey: '[Redacted]', jwtSecret: '[Redacted]', metricsToken: '[Redacted]', databaseUrl: '[Redacted]', databaseReplicaUrl: '[Redacted]', port: 3000 });
    expect(lines[6]!.config.botChallenge).to.include({ secret: '[Redacted]', verifyUrl: 'https://challenge.example/siteverify' });
    expect(lines[9]!.err).to.include({ message: 'boom', token: '[Redacted]' });
  });

  it('LOG_FORMAT=pretty writes readable lines, redacted the same', () => {
    const { logger, output } = capture('pretty');
    logEverything(logger);
    const text = output();
    expectNoSecret(text);
    // one line per entry, time and level first, not JSON (an error's stack follows its line)
    const entries = text.split('\n').filter((line) => /^\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+: /.test(line));
    expect(entries).to.have.length(11);
    const launched = entries.find((line) => line.includes('INFO: launched '))!;
    expect(launched).to.include('"sessionId":"session-visible"').and.include('"sessionToken":"[Redacted]"');
    expect(() => JSON.parse(launched)).to.throw();
  });
});
