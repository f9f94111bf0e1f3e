import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropDatabase } from '../../../src/shared/platform/db/migrate.js';
import { clearRedisPrefix } from '../../../src/shared/platform/redis.js';
import { WalletSimulator } from '../../../src/simulator/wallet-simulator.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/env.js';
import { uniqueId } from '../../support/harness.js';
import { Player } from '../../support/player.js';
import { freePort } from '../../support/processes.js';
import { send, signedRequest } from '../../support/signed-client.js';

// The deployment as the README and the Dockerfile describe it, on a fresh clone of the
// committed HEAD: install, build and prune with the Dockerfile's build-stage commands, keep
// only the files its runtime stage copies, then run the Procfile's release line and every
// other Procfile line as a platform would (through a shell, NODE_ENV=production, real
// secrets, D25). Each process answers /readyz, the container HEALTHCHECK passes for each,
// and an operator onboarded with the production `rgs` tool gets a signed launch whose
// player bets and is paid through the web, scheduler, bet and settle processes. Nothing runs
// through tsx: the production install does not have it.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

// the Dockerfile's build stage, in order (checked against the file below)
const BUILD_STEPS = ['npm ci --ignore-scripts', 'npm run build', 'npm prune --omit=dev --omit=optional'];
// what the Dockerfile's runtime stage copies from the build stage
const RUNTIME_FILES = ['package.json', 'node_modules', 'dist', 'bin', 'prisma/migrations'];

function parseProcfile(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .map((line) => /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line.trim()))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => [match[1]!, match[2]!]),
  );
}

// The environment of a deploy: this machine's PATH (this node first), HOME (npm's cache and
// user config) and where packages come from, nothing of the test run's own settings (its
// database, NODE_OPTIONS, the npm_* variables of an `npm test` that started the suite).
function deployEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` };
  for (const name of ['HOME', 'TMPDIR', 'LANG', 'npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return { ...env, ...extra };
}

type Ran = { code: number | null; stdout: string; output: string };
type Started = { child: ChildProcess; output: () => string; exited: Promise<Ran> };

// a command line through a shell, as a build step, a platform or an operator runs it; its
// own process group, so that the shell and what it started are stopped together
function start(command: string, cwd: string, env: NodeJS.ProcessEnv): Started {
  const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    output += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<Ran>((resolve) => child.once('close', (code) => resolve({ code, stdout, output })));
  return { child, output: () => output, exited };
}

// its stdout, once it exited 0
async function run(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { code, stdout, output } = await start(command, cwd, env).exited;
  if (code !== 0) throw new Error(`\`${command}\` exited ${code}:\n${output}`);
  return stdout;
}

// a Docker-free stand-in for the wallet's certificate: production wallet URLs are https (D25)
async function selfSignedCertificate(dir: string): Promise<{ key: string; cert: string; certFile: string }> {
  const keyFile = path.join(dir, 'wallet-key.pem');
  const certFile = path.join(dir, 'wallet-cert.pem');
  await new Promise<void>((resolve, reject) =>
    execFile(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
        '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile],
      (error) => (error ? reject(error) : resolve()),
    ),
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

async function waitReady(url: string, name: string, process: Started, timeoutMs = 30_000): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  let exited: Ran | undefined;
  void process.exited.then((ran) => (exited = ran));
  for (;;) {
    if (exited) throw new Error(`${name} exited ${exited.code} before /readyz answered:\n${exited.output}`);
    const answer = await fetch(url).then(
      async (response) => (response.status === 200 ? response.json() : undefined),
      () => undefined,
    );
    if (answer) return answer;
    if (Date.now() > deadline) throw new Error(`${name}: ${url} did not answer 200 within ${timeoutMs} ms:\n${process.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the production sequence on a fresh clone (Dockerfile, Procfile)', function () {
  this.timeout(120_000);

  let procfileLines: Record<string, string> = {};
  let dockerfile = '';
  let dir = '';
  // the runtime stage: the files it copies, nothing else
  let app = '';
  const databaseUrl = (() => {
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `${url.pathname}_production`;
    return url.toString();
  })();
  const redisKeyPrefix = `${process.env.REDIS_KEY_PREFIX}-prod`;
  const secrets = { MASTER_KEY: randomBytes(32).toString('hex'), JWT_SECRET: randomBytes(48).toString('base64') };
  const service = (extra: NodeJS.ProcessEnv = {}) =>
    deployEnv({ DATABASE_URL: databaseUrl, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: redisKeyPrefix, LOG_LEVEL: 'info', ...secrets, ...extra });

  const processes = new Map<string, Started & { healthPort: number }>();
  let releaseOutput = '';
  let webPort = 0;
  let wallet: WalletSimulator | undefined;
  let walletCertFile = '';

  before(async function () {
    this.timeout(600_000);
    dir = mkdtempSync(path.join(tmpdir(), 'rgs-production-'));
    const clone = path.join(dir, 'clone');
    app = path.join(dir, 'app');
    const head = (await run('git rev-parse HEAD', ROOT, deployEnv({}))).trim();
    await run(`git clone --quiet --no-checkout "${ROOT}" clone && git -C clone checkout --quiet --detach ${head}`, dir, deployEnv({}));
    // the npm cache of this machine first: the same packages, fewer downloads
    const npm = deployEnv({ npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' });
    for (const step of BUILD_STEPS) await run(step, clone, npm);
    dockerfile = readFileSync(path.join(clone, 'Dockerfile'), 'utf8');
    procfileLines = parseProcfile(readFileSync(path.join(clone, 'Procfile'), 'utf8'));
    for (const file of RUNTIME_FILES) {
      mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
      renameSync(path.join(clone, file), path.join(app, file));
    }
    rmSync(clone, { recursive: true, force: true });

    // the wallet the operator will name, and the certificate authority the service trusts for it
    const tls = await selfSignedCertificate(dir);
    walletCertFile = tls.certFile;
    wallet = await WalletSimulator.start({ tls: { key: tls.key, cert: tls.cert } });

    releaseOutput = await run(procfileLines.release!, app, service());
    webPort = await freePort();
    for (const [name, line] of Object.entries(procfileLines)) {
      if (name === 'release') continue;
      const healthPort = await freePort();
      const env = service({ HEALTH_PORT: String(healthPort), NODE_EXTRA_CA_CERTS: walletCertFile });
      if (name === 'web') Object.assign(env, { PORT: String(webPort), PUBLIC_URL: `http://127.0.0.1:${webPort}` });
      processes.set(name, { ...start(line, app, env), healthPort });
    }
  });

  after(async function () {
    this.timeout(60_000);
    await Promise.all(
      [...processes.values()].map(async ({ child, exited }) => {
        if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
        const forced = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
        await exited;
        clearTimeout(forced);
      }),
    );
    await wallet?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await dropDatabase(databaseUrl);
    await clearRedisPrefix(TEST_REDIS_URL, redisKeyPrefix);
  });

  it('the Dockerfile builds with these steps and its runtime stage copies these files', () => {
    const runs = [...dockerfile.matchAll(/^RUN (.+)$/gm)].map((match) => match[1]!.trim());
    expect(runs).to.deep.equal(BUILD_STEPS);
    const copied = [...dockerfile.matchAll(/^COPY --from=build \/app\/(\S+) \.\/(\S+)$/gm)].map((match) => {
      expect(match[2], 'copied to the same path').to.equal(match[1]);
      return match[1];
    });
    expect(copied).to.deep.equal(RUNTIME_FILES);
  });

  it('the production install has no tsx, no prisma CLI and no TypeScript, and the build has the game page', () => {
    for (const dev of ['tsx', 'prisma', 'typescript']) expect(existsSync(path.join(app, 'node_modules', dev)), dev).to.equal(false);
    expect(existsSync(path.join(app, 'node_modules/@prisma/client')), '@prisma/client').to.equal(true);
    expect(existsSync(path.join(app, 'dist/shared/platform/db/generated/client.js')), 'the generated client, compiled').to.equal(true);
    expect(existsSync(path.join(app, 'dist/realtime/page/index.html')), 'the game page').to.equal(true);
  });

  it('release migrates a new database', () => {
    const result = JSON.parse(releaseOutput);
    expect(result).to.include({ created: true });
    expect(result.applied).to.have.length.greaterThan(0);
    expect(result.alreadyApplied).to.deep.equal([]);
  });

  it('every Procfile process answers /readyz, on HEALTH_PORT and the web process on PORT too, and passes the HEALTHCHECK', async () => {
    expect([...processes.keys()]).to.include.members(['web', 'scheduler', 'bet', 'settle', 'rollback']);
    for (const [name, proc] of processes) {
      const ready = await waitReady(`http://127.0.0.1:${proc.healthPort}/readyz`, name, proc);
      expect(ready, name).to.deep.equal({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
      const check = await start('node bin/healthcheck.js', app, deployEnv({ HEALTH_PORT: String(proc.healthPort) })).exited;
      expect(check.code, `${name} HEALTHCHECK: ${check.output}`).to.equal(0);
    }
    expect(await waitReady(`http://127.0.0.1:${webPort}/readyz`, 'web', processes.get('web')!)).to.deep.include({ status: 'ready' });
  });

  it('an operator onboarded with the production rgs gets a signed launch; its player bets and is paid', async () => {
    const rgs = async (...args: string[]) => JSON.parse(await run(`node bin/rgs.js ${args.join(' ')}`, app, service({ NODE_ENV: 'production' })));
    // D25: https, and a loopback address allowed explicitly
    const operator = await rgs('operator', 'create', '--id', uniqueId('prod'), '--wallet-url', wallet!.url, '--wallet-url-private-allowed', 'true', '--currency', 'EUR');
    wallet!.addCredential(operator.walletKeyId, operator.walletSignatureSecret);
    // short windows, and LOW always wins: one round pays within seconds
    await rgs('game', 'config', '--operator', operator.operatorId, '--game', 'dice', '--currency', 'EUR',
      '--betting-window-ms', '1500', '--rolling-window-ms', '300', '--cooldown-ms', '200', '--low-weight', '1', '--high-weight', '0');

    const web = `http://127.0.0.1:${webPort}`;
    const body = { operatorId: operator.operatorId, playerRef: uniqueId('player'), gameCode: 'dice', currency: 'EUR', lang: 'en', jurisdiction: 'MT' };
    wallet!.setBalance(body.playerRef, 'EUR', 10_000_000n);
    const launched = await signedRequest(web, { kid: operator.apiKeyId, secret: operator.apiSecret }, 'POST', '/v1/session', body);
    expect(launched.status, launched.text).to.equal(200);

    // the page and its assets come from the build and the production install
    const page = await send(launched.body.launchUrl, {});
    expect(page.status).to.equal(200);
    expect(page.text).to.include('/play/assets/game.js');
    for (const asset of ['/play/assets/game.js', '/socket.io/socket.io.min.js']) expect((await send(`${web}${asset}`, {})).status, asset).to.equal(200);

    const player = await Player.connect(web, launched.body.sessionToken);
    try {
      // a bet can miss a window while the processes are still cold: the next round takes it
      let ack: { ok: boolean; roundId?: string } = { ok: false };
      for (let round = 1; round <= 3 && !ack.ok; round++) {
        await player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
        ack = await player.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
      }
      expect(ack.ok, JSON.stringify(ack)).to.equal(true);
      const result = await player.waitFor('round_result', (p) => p.roundId === ack.roundId, 15_000);
      expect(result).to.include({ won: true, payoutMicro: '1940000' });
      await player.waitFor('balance_update', (p) => p.balanceMicro === '10940000', 15_000);
    } finally {
      player.close();
    }
    expect(wallet!.balanceOf(body.playerRef, 'EUR')).to.equal(10_940_000n);
    expect(wallet!.violations).to.deep.equal([]);
  });
});
