import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileOnce } from '../../support/build.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/env.js';

// D25: every process started from the Procfile refuses the development MASTER_KEY and
// JWT_SECRET, or none, whatever the platform's environment says. Each line is run as the
// Procfile says it, through a shell, the way a Procfile runner starts it, from this checkout's
// build (test/system/deploy/production-sequence.test.ts runs them on a production install).

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PROCFILE = Object.fromEntries(
  readFileSync(new URL('../../../Procfile', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => [match[1]!, match[2]!]),
) as Record<string, string>;

const SHIPPED_MASTER_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const SHIPPED_JWT_SECRET = 'development-only-jwt-secret-do-not-use-in-production-0123456789abcdef';
const REAL_MASTER_KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0';
const REAL_JWT_SECRET = 'p'.repeat(48);

type Outcome = { code: number | null; output: string; started: boolean };

// Runs one Procfile line until it exits, or until it says `rgs started` (then it is stopped:
// a process that starts did not refuse).
function runLine(line: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const base = { ...process.env };
  for (const name of ['MASTER_KEY', 'JWT_SECRET', 'NODE_ENV', 'METRICS_TOKEN', 'HEALTH_PORT']) delete base[name];
  const child = spawn('sh', ['-c', line], {
    cwd: ROOT,
    env: { ...base, DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // its own process group: the shell and the node it starts are stopped together
    detached: true,
  });
  let output = '';
  let started = false;
  return new Promise((resolve) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (!started && /"msg":"rgs started"/.test(output)) {
        started = true;
        process.kill(-child.pid!, 'SIGTERM');
      }
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.once('close', (code) => resolve({ code, output, started }));
  });
}

function expectRefused(name: string, outcome: Outcome, names: string[]): void {
  expect(outcome.started, `${name} started:\n${outcome.output}`).to.equal(false);
  expect(outcome.code, `${name}:\n${outcome.output}`).to.be.a('number').and.not.equal(0);
  for (const variable of names) expect(outcome.output, name).to.include(variable);
  expect(outcome.output, `${name}: no stack trace`).not.to.match(/\n\s+at /);
}

describe('Procfile processes refuse development secrets (D25)', function () {
  this.timeout(120_000);

  before(async function () {
    this.timeout(120_000);
    await compileOnce();
  });

  it('has the D12 process types', () => {
    expect(Object.keys(PROCFILE)).to.include.members(['release', 'web', 'scheduler', 'bet', 'settle', 'rollback']);
  });

  it('every line started with no MASTER_KEY and JWT_SECRET exits non-zero naming both', async () => {
    for (const [name, line] of Object.entries(PROCFILE)) {
      expectRefused(name, await runLine(line, {}), ['MASTER_KEY', 'JWT_SECRET']);
    }
  });

  it('the web line refuses the development values set explicitly, with NODE_ENV=production', async () => {
    const outcome = await runLine(PROCFILE.web!, { NODE_ENV: 'production', MASTER_KEY: SHIPPED_MASTER_KEY, JWT_SECRET: SHIPPED_JWT_SECRET });
    expectRefused('web', outcome, ['MASTER_KEY', 'JWT_SECRET']);
  });

  it('the web line refuses them under a platform that says NODE_ENV=development', async () => {
    expectRefused('web', await runLine(PROCFILE.web!, { NODE_ENV: 'development' }), ['MASTER_KEY', 'JWT_SECRET']);
    const explicit = await runLine(PROCFILE.web!, { NODE_ENV: 'development', MASTER_KEY: SHIPPED_MASTER_KEY, JWT_SECRET: REAL_JWT_SECRET });
    expectRefused('web', explicit, ['MASTER_KEY']);
  });

  it('the web line starts with real secrets', async () => {
    const outcome = await runLine(PROCFILE.web!, { MASTER_KEY: REAL_MASTER_KEY, JWT_SECRET: REAL_JWT_SECRET });
    expect(outcome.started, outcome.output).to.equal(true);
  });
});
