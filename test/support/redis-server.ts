import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';

// A private Redis for the fault suite: "Redis restarts, losing everything" is
// done to this one, never to the shared Redis on 6379 that every other suite uses. It keeps
// nothing on disk (no RDB, no AOF) and runs in an empty directory of its own, so a restart
// cannot reload a dump.rdb left anywhere: after restart() the data set is empty.

export type RedisServer = {
  port: number;
  url: string;
  // the server's working directory (a cluster node keeps its nodes.conf there)
  dir: string;
  // kill -9 and wait for the exit; the port is refused until start again
  stop: () => Promise<void>;
  // kill -9, then start again on the same port, with nothing kept
  restart: () => Promise<void>;
  close: () => Promise<void>;
};

const READY_TIMEOUT_MS = 10_000;
// what a failed start reports of the server's own output
const OUTPUT_KEPT_CHARS = 4_000;

// args: more of redis-server's options (a cluster node's, redis-cluster.ts)
export async function startRedisServer(options: { port?: number; args?: string[] } = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'rgs-redis-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  // a run that ends without close() must not leave a redis-server (or its directory) behind
  const killOnExit = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);

  const start = async (): Promise<void> => {
    let output = '';
    const spawned = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...(options.args ?? [])],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT_CHARS);
    };
    spawned.stdout!.on('data', keep);
    spawned.stderr!.on('data', keep);
    let exitCode: string | undefined;
    exited = new Promise<void>((resolve) => {
      spawned.once('exit', (code, signal) => {
        exitCode = signal ?? String(code);
        resolve();
      });
      spawned.once('error', (error) => {
        exitCode = error.message;
        resolve();
      });
    });
    child = spawned;

    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await servedBy(port, spawned.pid))) {
      const problem =
        exitCode !== undefined ? `exited (${exitCode}) before answering PING`
        : Date.now() > deadline ? `did not answer PING within ${READY_TIMEOUT_MS} ms`
        : undefined;
      if (problem !== undefined) {
        await stop();
        throw new Error(`redis-server on port ${port} ${problem}:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const stop = async (): Promise<void> => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    child = undefined;
  };

  const cleanUp = () => {
    process.off('exit', killOnExit);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await start();
  } catch (error) {
    cleanUp();
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    close: async () => {
      await stop();
      cleanUp();
    },
  };
}

// The server answering on the port is this child: a PING alone would also be answered by
// another server already on the port, which the child failed to bind. A server still
// loading answers -LOADING, which is not ready either.
function servedBy(port: number, pid: number | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\nINFO server\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (!reply.includes('\r\n')) return;
      if (!reply.startsWith('+PONG\r\n')) return done(false);
      const served = /\r\nprocess_id:(\d+)\r\n/.exec(reply);
      if (served) done(Number(served[1]) === pid);
    });
  });
}
