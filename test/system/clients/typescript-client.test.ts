import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dropDatabase } from '../../../src/shared/platform/db/migrate.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { freePort, spawnService, type ServiceProcess } from '../../support/processes.js';
import { clearRedisPrefix } from '../../../src/shared/platform/redis.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/env.js';

// clients/typescript/examples/launch-and-list.ts, run as docs/clients.md says: a process of
// its own (`node --import tsx`), given the credential in RGS_* variables, against a running
// service; and against `npm run demo` with the variables the demo prints.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE = 'clients/typescript/examples/launch-and-list.ts';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

type Run = { code: number; stdout: string; stderr: string };

function runExample(env: NodeJS.ProcessEnv, args: string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', EXAMPLE, ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

describe('the TypeScript client example (clients/typescript/examples/launch-and-list.ts)', function () {
  this.timeout(90_000);

  describe('against a running service', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(() => h?.close());

    it('launches a session and lists the rounds', async () => {
      const operator = await h.onboard();
      const run = await runExample({ RGS_URL: h.baseUrl, RGS_OPERATOR_ID: operator.operatorId, RGS_KEY_ID: operator.apiKeyId, RGS_API_SECRET: operator.apiSecret });
      expect(run.code, `${run.stderr}\n${run.stdout}`).to.equal(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines[0]).to.match(new RegExp(`^session ${UUID.source}$`));
      expect(lines[1]).to.match(/^launch URL \S+\/play\/dice\?token=\S+$/);
      expect(lines.slice(2)).to.deep.equal(['rounds 0']);
      const row = await h.svc.db.session.findUniqueOrThrow({ where: { id: lines[0]!.slice('session '.length) } });
      expect([row.operatorId, row.mode, row.playerRef]).to.deep.equal([operator.operatorId, 'DEMO', 'player-1001']);
    });

    it('a wrong secret: the refusal on stderr, exit 1', async () => {
      const operator = await h.onboard();
      const run = await runExample({ RGS_URL: h.baseUrl, RGS_OPERATOR_ID: operator.operatorId, RGS_KEY_ID: operator.apiKeyId, RGS_API_SECRET: '0'.repeat(128) });
      expect(run.code).to.equal(1);
      expect(run.stderr.trim()).to.equal('launch refused: 401 invalid_signature: signature does not match');
    });
  });

  describe('against `npm run demo`, with the credential it prints', () => {
    // a database and a Redis prefix of its own, dropped when it stops
    const database = `${TEST_DATABASE_URL}_client_demo`;
    const redisKeyPrefix = `${process.env.REDIS_KEY_PREFIX}-client-demo`;
    let demo: ServiceProcess | undefined;
    let credential: Record<string, string>;

    before(async () => {
      demo = spawnService('client_demo', { DATABASE_URL: database, PORT: String(await freePort()), DEMO_WALLET_PORT: String(await freePort()), LOG_LEVEL: 'warn', REDIS_KEY_PREFIX: redisKeyPrefix }, 'src/demo.ts');
      const line = await demo.waitForText(/RGS_API_SECRET=/, 60_000);
      credential = Object.fromEntries(line.trim().split(/\s+/).map((pair) => pair.split('=') as [string, string]));
    });
    after(async () => {
      await demo?.stop();
      await dropDatabase(database);
      await clearRedisPrefix(TEST_REDIS_URL, redisKeyPrefix);
    });

    it('prints RGS_URL, RGS_OPERATOR_ID, RGS_KEY_ID and RGS_API_SECRET on one line', () => {
      expect(Object.keys(credential)).to.deep.equal(['RGS_URL', 'RGS_OPERATOR_ID', 'RGS_KEY_ID', 'RGS_API_SECRET']);
      expect(credential.RGS_OPERATOR_ID).to.equal('demo-casino');
      expect(credential.RGS_API_SECRET).to.match(/^[0-9a-f]{128}$/);
    });

    it('a real-mode launch for the demo player (the wallet simulator answers its balance), then the rounds', async () => {
      const run = await runExample(credential, ['demo-player', 'real']);
      expect(run.code, `${run.stderr}\n${run.stdout}`).to.equal(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines[0]).to.match(new RegExp(`^session ${UUID.source}$`));
      expect(lines[2]).to.match(/^rounds \d+/);
    });
  });
});
