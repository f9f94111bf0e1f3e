import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { until } from '../../support/game.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { freePort } from '../../support/processes.js';

// The examples of docs/operator-guide.md and docs/wallet-api.md, run as a reader would run
// them against a running service: the shell blocks with bash, openssl and curl, the Node
// blocks as ES modules. Each runnable block follows an `<!-- example: NAME -->` marker.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// where the documents say the service is
const DOCUMENTED_URL = 'http://127.0.0.1:3000';

type Example = { lang: string; code: string };

function examples(document: string): Map<string, Example> {
  const text = readFileSync(new URL(document, `file://${ROOT}`), 'utf8');
  const found = new Map<string, Example>();
  for (const match of text.matchAll(/<!-- example: ([\w-]+) -->\n```(\w+)\n([\s\S]*?)\n```/g)) {
    found.set(match[1]!, { lang: match[2]!, code: match[3]! });
  }
  return found;
}

type Run = { code: number; stdout: string; stderr: string };

function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

// `rgs` as `npm link` would put it on the PATH
const RGS = `rgs() { node ${JSON.stringify(`${ROOT}bin/rgs.js`)} "$@"; }\n`;
const bash = (script: string) => runProcess('bash', ['-euo', 'pipefail', '-c', RGS + script]);
const nodeModule = (code: string, env: NodeJS.ProcessEnv) => runProcess(process.execPath, ['--input-type=module', '-e', code], env);

function succeeded(run: Run): string {
  expect(run.code, `exit ${run.code}\n${run.stderr}\n${run.stdout}`).to.equal(0);
  return run.stdout;
}

describe('the documents’ examples, against a running service', function () {
  this.timeout(60_000);
  const guide = examples('docs/operator-guide.md');
  const wallet = examples('docs/wallet-api.md');
  let h: Harness;

  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h?.close());

  it('finds every example the documents mark', () => {
    expect([...guide.keys()]).to.deep.equal(['onboard', 'shell-setup', 'shell-sign', 'shell-launch', 'shell-read', 'node-client', 'node-player']);
    expect([...wallet.keys()]).to.deep.equal(['wallet-node']);
  });

  it('operator-guide: onboarding prints the operator’s ids and its two secrets', async () => {
    const created = JSON.parse(succeeded(await bash(guide.get('onboard')!.code)));
    expect(created).to.have.keys(['operatorId', 'apiKeyId', 'apiSecret', 'walletKeyId', 'walletSignatureSecret']);
    expect(created.operatorId).to.equal('casino-one');
    expect(created.apiSecret).to.match(/^[0-9a-f]{128}$/);
  });

  it('operator-guide: the shell examples launch, retry, read and terminate, signed with openssl and sent with curl', async () => {
    const script = ['shell-setup', 'shell-sign', 'shell-launch', 'shell-read'].map((name) => guide.get(name)!.code).join('\n');
    const stdout = succeeded(await bash(script.replaceAll(DOCUMENTED_URL, h.baseUrl)));
    const [launched, retried, rounds, ggr, terminated, ...rest] = stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(rest).to.deep.equal([]);
    expect(launched).to.have.keys(['sessionId', 'sessionToken', 'launchUrl', 'expiresAt', 'serverSeedHash', 'sandbox']);
    // the retry, signed afresh with the same requestUuid, is answered the same session (D17)
    expect(retried.sessionId).to.equal(launched.sessionId);
    expect(rounds).to.deep.equal({ rounds: [], nextCursor: null });
    expect(ggr).to.have.keys(['from', 'to', 'games', 'jackpots']);
    expect(terminated.sessionId).to.equal(launched.sessionId);
    expect(terminated.voidedRoundIds).to.deep.equal([]);
    const row = await h.svc.db.session.findUniqueOrThrow({ where: { id: launched.sessionId } });
    expect(row.mode).to.equal('DEMO');
    expect(row.playerRef).to.equal('player-1001');
    expect(row.terminatedAt).to.not.equal(null);
  });

  it('operator-guide: the Node client launches a real-mode session, retries it and reads rounds', async () => {
    const operator = await h.onboard();
    const stdout = succeeded(
      await nodeModule(guide.get('node-client')!.code, {
        RGS_URL: h.baseUrl,
        RGS_OPERATOR_ID: operator.operatorId,
        RGS_KEY_ID: operator.apiKeyId,
        RGS_API_SECRET: operator.apiSecret,
      }),
    );
    expect(stdout.trim().split('\n')).to.deep.equal([
      stdout.match(/^200 \S+\/play\/dice\?token=\S+$/m)![0],
      'same session: true',
      '200 0 rounds',
    ]);
    // real mode: the wallet was asked for the balance
    expect(h.wallet.requests.some((request) => request.endpoint === 'balance' && (request.body as { operatorId?: string }).operatorId === operator.operatorId)).to.equal(true);
  });

  it('operator-guide: the Node player connects with the launch URL’s token, bets and gets its result', async () => {
    const operator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 2500, rollingWindowMs: 300, cooldownMs: 200 });
    const launch = await operator.launch({ mode: 'demo' });
    expect(launch.status, launch.text).to.equal(200);
    // the launch URL names the configured PUBLIC_URL; the test's service listens elsewhere
    const launchUrl = new URL(launch.body.launchUrl as string);
    const stdout = succeeded(await nodeModule(guide.get('node-player')!.code, { LAUNCH_URL: `${h.baseUrl}${launchUrl.pathname}${launchUrl.search}` }));
    const lines = stdout.trim().split('\n');
    expect(lines[0]).to.equal('balance 100000000 EUR');
    const ack = JSON.parse(lines.find((line) => line.startsWith('ack '))!.slice(4));
    expect(ack).to.include({ ok: true });
    const result = JSON.parse(lines.find((line) => line.startsWith('result '))!.slice(7));
    expect(result.betId).to.equal(ack.betId);
    expect(result.side).to.be.oneOf(['LOW', 'HIGH']);
  });

  describe('wallet-api: the minimal wallet', () => {
    let child: ChildProcess | undefined;
    afterEach(() => child?.kill());

    it('verifies the service’s signed balance call, so a real-mode launch succeeds; refuses a bad signature', async () => {
      const port = await freePort();
      const operator = await h.onboard({ walletUrl: `http://127.0.0.1:${port}` });
      child = spawn(process.execPath, ['--input-type=module', '-e', wallet.get('wallet-node')!.code], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port), WALLET_KEY_ID: operator.walletKeyId, WALLET_SECRET: operator.walletSignatureSecret },
        stdio: 'ignore',
      });
      const walletUrl = `http://127.0.0.1:${port}`;
      await until('the wallet to listen', () => fetch(`${walletUrl}/`).then(() => true, () => false));

      const launch = await operator.launch();
      expect(launch.status, launch.text).to.equal(200);
      const row = await h.svc.db.walletCall.findFirstOrThrow({ where: { operatorId: operator.operatorId, endpoint: 'balance' } });
      expect(row.status).to.equal('RS_OK');

      const requestUuid = randomUUID();
      const forged = await fetch(`${walletUrl}/wallet/balance`, {
        method: 'POST',
        headers: { 'x-rgs-key-id': operator.walletKeyId, 'x-rgs-timestamp': String(Math.floor(Date.now() / 1000)), 'x-rgs-signature': 'bm90IGEgc2lnbmF0dXJl' },
        body: JSON.stringify({ requestUuid, operatorId: operator.operatorId, playerRef: 'p', currency: 'EUR', gameCode: 'dice' }),
      });
      expect(forged.status).to.equal(401);
      expect(await forged.json()).to.deep.equal({ status: 'RS_ERROR_INVALID_SIGNATURE', requestUuid });
    });
  });
});
