import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The rgs tool as a user runs it: bin/rgs.js in its own process, from the repository root.

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RGS_BIN = fileURLToPath(new URL('../../bin/rgs.js', import.meta.url));

export type CliResult = { code: number | null; stdout: string; stderr: string };

export type RgsOptions = {
  // added to (or replacing) this process's environment
  env?: NodeJS.ProcessEnv;
  // removed from this process's environment before `env` is added
  unset?: string[];
  stdin?: string;
  timeoutMs?: number;
};

export function runRgs(args: string[], { env = {}, unset = [], stdin = '', timeoutMs = 15_000 }: RgsOptions = {}): Promise<CliResult> {
  const base = { ...process.env };
  for (const name of unset) delete base[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RGS_BIN, ...args], { cwd: REPO_ROOT, env: { ...base, ...env }, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

// exit 0 with one JSON document on stdout
export function succeeded(result: CliResult): any {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(0);
  return JSON.parse(result.stdout);
}

// exit 1 with nothing on stdout and a JSON error, without a stack trace, on stderr
export function refused(result: CliResult): { error: string; message: string } {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(1);
  expect(result.stdout).to.equal('');
  expect(result.stderr).not.to.match(/\n\s+at /);
  return JSON.parse(result.stderr);
}
