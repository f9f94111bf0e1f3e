import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

// Real service processes for tests: `node --import tsx src/main.ts` with the roles and
// port given, their JSON log lines collected so that a test can wait for one.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export type ServiceProcess = {
  name: string;
  child: ChildProcess;
  logs: Record<string, unknown>[];
  waitForLog: (match: (line: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>;
  // a plain (not JSON) output line matching the pattern
  waitForText: (pattern: RegExp, timeoutMs?: number) => Promise<string>;
  stop: (signal?: NodeJS.Signals) => Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function spawnService(name: string, env: NodeJS.ProcessEnv, entry = 'src/main.ts'): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const text: string[] = [];
  let textWaiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let waiters: { match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const raw of lines) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        text.push(raw);
        textWaiters = textWaiters.filter((waiter) => (waiter.pattern.test(raw) ? (waiter.resolve(raw), false) : true));
        continue;
      }
      logs.push(line);
      waiters = waiters.filter((waiter) => (waiter.match(line) ? (waiter.resolve(line), false) : true));
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => logs.push({ stderr: chunk.toString('utf8') }));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    child,
    logs,
    waitForLog: (match, timeoutMs = 15_000) => {
      const seen = logs.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no matching log line within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ match, resolve: (line) => { clearTimeout(timer); resolve(line); } });
      });
    },
    waitForText: (pattern, timeoutMs = 15_000) => {
      const seen = text.find((line) => pattern.test(line));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no output matching ${pattern} within ${timeoutMs} ms`)), timeoutMs);
        textWaiters.push({ pattern, resolve: (line) => { clearTimeout(timer); resolve(line); } });
      });
    },
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
