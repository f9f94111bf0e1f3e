import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:net';
import { ROLE_NAMES } from '../src/shared/platform/config.js';
import type { Deployment } from './options.js';

// The service under load, as real processes (`node --import tsx src/main.ts`), in one of
// the two deployments of D12: every role in one process, or one process per Procfile
// entry. A process counts as started when it logs `rgs started` (main.ts).

export type ServiceProcess = { name: string; roles: string; child: ChildProcess; pid: number };

export type RunningService = {
  url: string;
  processes: ServiceProcess[];
  // processes that ended before stop() was called, with how they ended
  crashed: () => string[];
  stop: () => Promise<void>;
};

// Procfile: web = api+realtime, then one process per worker role
const SPLIT: { name: string; roles: string }[] = [
  { name: 'web', roles: 'api,realtime' },
  { name: 'scheduler', roles: 'scheduler' },
  { name: 'bet', roles: 'bet' },
  { name: 'settle', roles: 'settle' },
  { name: 'rollback', roles: 'rollback' },
];

const TRACE_SUBSCRIBER = new URL('./trace-subscriber.ts', import.meta.url).href;
const START_TIMEOUT_MS = 60_000;
// main.ts gives itself 10 s to stop gracefully
const STOP_TIMEOUT_MS = 12_000;
const KEPT_OUTPUT_LINES = 40;

// cpuProfDir: node --cpu-prof for every process; traceGc: node --trace-gc for every process,
// its lines in the process's output; logDir: every process's output to <name>.log there;
// traceBetsDir: every process records its bets' steps there (trace-subscriber.ts)
export async function startService(
  root: string,
  deployment: Deployment,
  env: NodeJS.ProcessEnv,
  { cpuProfDir, traceGc, logDir, traceBetsDir }: { cpuProfDir?: string; traceGc?: boolean; logDir?: string; traceBetsDir?: string } = {},
): Promise<RunningService> {
  const port = await freePort();
  const layout = deployment === 'split' ? SPLIT : [{ name: 'rgs', roles: ROLE_NAMES.join(',') }];
  const stopping = { now: false };
  const ends: string[] = [];
  // node refuses --cpu-prof and --trace-gc in NODE_OPTIONS: they go on the command line
  const nodeArgs = [...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []), ...(traceGc ? ['--trace-gc'] : [])];
  // the subscriber is loaded after tsx, which compiles it
  const preloads = ['tsx', ...(traceBetsDir ? [TRACE_SUBSCRIBER] : [])];
  const serviceEnv = { ...env, PORT: String(port), ...(traceBetsDir ? { BENCH_TRACE_DIR: traceBetsDir } : {}) };
  const started = layout.map(({ name, roles }) =>
    launch(root, name, roles, nodeArgs, preloads, serviceEnv, stopping, ends, logDir && path.join(logDir, `${name}.log`)),
  );
  const processes = started.map((entry) => entry.process);
  const stop = async () => {
    stopping.now = true;
    await Promise.all(started.map((entry) => entry.stop()));
  };
  try {
    await Promise.all(started.map((entry) => entry.ready));
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `http://127.0.0.1:${port}`, processes, crashed: () => [...ends], stop };
}

function launch(
  root: string,
  name: string,
  roles: string,
  nodeArgs: string[],
  preloads: string[],
  env: NodeJS.ProcessEnv,
  stopping: { now: boolean },
  ends: string[],
  logFile: string | undefined,
) {
  const child = spawn(process.execPath, [...nodeArgs, ...preloads.flatMap((preload) => ['--import', preload]), 'src/main.ts'], {
    cwd: root,
    env: { ...env, ROLES: roles },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  if (logFile) {
    // two streams into one file: the file is closed when the process is gone, not when either ends
    const log = createWriteStream(logFile);
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    child.once('close', () => log.end());
  }
  const keep = (line: string) => {
    output.push(line);
    if (output.length > KEPT_OUTPUT_LINES) output.shift();
  };
  const failure = (what: string) => new Error(`service process ${name} ${what}; its last output:\n${output.join('\n')}`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(failure(`did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        keep(line);
        if (line.includes('"msg":"rgs started"')) {
          clearTimeout(timer);
          resolve();
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => chunk.toString('utf8').split('\n').filter(Boolean).forEach(keep));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!stopping.now) ends.push(`${name} exited (${signal ?? `code ${code}`})`);
      reject(failure(`exited (${signal ?? `code ${code}`}) before it started`));
    });
  });
  // a rejection after start is reported through `ends`, not as an unhandled promise
  ready.catch(() => undefined);
  return {
    process: { name, roles, child, pid: child.pid! },
    ready,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
