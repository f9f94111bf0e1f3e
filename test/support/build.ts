import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The compiled service in dist/ (`npm run compile`), for tests that run the Procfile's lines
// in this checkout: they run the build, so it is made from the source under test, once per
// test process. The Prisma client is not regenerated here (`npm test` generates it first).
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let compiled: Promise<void> | undefined;

export function compileOnce(): Promise<void> {
  compiled ??= new Promise((resolve, reject) =>
    execFile('npm', ['run', '--silent', 'compile'], { cwd: ROOT }, (error, stdout, stderr) =>
      error ? reject(new Error(`npm run compile failed:\n${stdout}${stderr}`)) : resolve(),
    ),
  );
  return compiled;
}
