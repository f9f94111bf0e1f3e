import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type BenchRun = { code: number; stdout: string; stderr: string };

// `npm run bench -- ...args` as a child process of the repository, its exit code and output
// (a run is bounded to two minutes by its own options)
export function runBench(...args: string[]): Promise<BenchRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', ...args],
      { cwd: ROOT, env: process.env, timeout: 110_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}
