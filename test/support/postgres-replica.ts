import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';

// A Postgres primary and a streaming replica of its own for the read-replica suite (D36),
// made from Postgres 15's binaries in a temporary folder, on free ports, listening on
// 127.0.0.1 with trust authentication and their sockets in that folder: the machine's own
// server (5432) is never touched. The servers run as the `postgres` OS user (initdb refuses
// root); the folder is that user's. close() stops both and removes the folder, and so does
// the end of the test process when a run ends without close().
//
//   const pair = await startPrimaryAndReplica();
//   pair.primaryUrl('rgs')  pair.replicaUrl('rgs')
//   await pair.pauseReplay(); … await pair.resumeReplay();
//   await pair.stopReplica(); … await pair.startReplica();

export const POSTGRES_BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

export type PrimaryAndReplica = {
  primaryPort: number;
  replicaPort: number;
  primaryUrl: (database: string) => string;
  replicaUrl: (database: string) => string;
  // pg_wal_replay_pause() / pg_wal_replay_resume() on the replica: it keeps receiving WAL
  // and answering queries, as of the moment the replay paused
  pauseReplay: () => Promise<void>;
  resumeReplay: () => Promise<void>;
  // resolves once the replica has replayed everything the primary has written so far
  replicaCaughtUp: () => Promise<void>;
  // the connections open on one server under an application_name (pg_stat_activity)
  countConnections: (server: 'primary' | 'replica', applicationName: string) => Promise<number>;
  // the replica's server stopped (its port refuses connections) and started again
  stopReplica: () => Promise<void>;
  startReplica: () => Promise<void>;
  close: () => Promise<void>;
};

const READY_TIMEOUT_MS = 30_000;
// what a failed start reports of the server's log
const OUTPUT_KEPT_CHARS = 4_000;

// root runs the binaries as `postgres`; any other user runs them as itself
const asServerUser = (command: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];

function run(command: string, args: string[]): string {
  const [file, argv] = asServerUser(join(POSTGRES_BIN, command), args);
  try {
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

function serverUserIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('no postgres OS user: the replica suite runs Postgres as that user (initdb refuses root)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

const url = (port: number, database: string) => `postgresql://postgres@127.0.0.1:${port}/${database}`;

async function query<R extends object>(port: number, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url(port, 'postgres') });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function startPrimaryAndReplica(): Promise<PrimaryAndReplica> {
  if (!existsSync(join(POSTGRES_BIN, 'initdb'))) throw new Error(`no Postgres binaries in ${POSTGRES_BIN} (set POSTGRES_BIN)`);
  const dir = mkdtempSync(join(tmpdir(), 'rgs-replica-'));
  const owner = serverUserIds();
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const primaryDir = join(dir, 'primary');
  const replicaDir = join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started = new Set<string>();

  const startServer = (dataDir: string) => {
    const log = join(dir, `${dataDir === primaryDir ? 'primary' : 'replica'}.log`);
    try {
      run('pg_ctl', ['-D', dataDir, '-l', log, '-w', '-t', '60', 'start']);
    } catch (err) {
      // what the server said about it
      const said = existsSync(log) ? readFileSync(log, 'utf8').slice(-OUTPUT_KEPT_CHARS) : '';
      throw new Error(`${(err as Error).message}\n${said}`);
    }
    started.add(dataDir);
  };
  const stopServer = (dataDir: string, mode: 'fast' | 'immediate') => {
    if (!started.has(dataDir)) return;
    run('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop']);
    started.delete(dataDir);
  };
  // a run that ends without close() must leave no server (nor its folder) behind
  const stopOnExit = () => {
    for (const dataDir of [...started]) {
      try {
        stopServer(dataDir, 'immediate');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopOnExit);

  const settings = (port: number) =>
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      'wal_level = replica',
      'max_wal_senders = 4',
      'hot_standby = on',
      // a test server: its data is thrown away, so nothing is worth waiting for the disk
      'fsync = off',
      'full_page_writes = off',
      'shared_buffers = 32MB',
      'max_connections = 60',
      '',
    ].join('\n');

  try {
    run('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-sync']);
    appendFileSync(join(primaryDir, 'postgresql.conf'), settings(primaryPort));
    startServer(primaryDir);
    // -R: standby.signal and primary_conninfo; -X stream: the WAL of the copy comes with it
    run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
    // the copy carries the primary's settings; the later line wins
    appendFileSync(join(replicaDir, 'postgresql.conf'), settings(replicaPort));
    startServer(replicaDir);
    await until('the replica to stream from the primary', async () => {
      const [receiver] = await query<{ status: string; recovery: boolean }>(
        replicaPort,
        `SELECT pg_is_in_recovery() AS recovery, (SELECT status FROM pg_stat_wal_receiver) AS status`,
      );
      return receiver?.recovery === true && receiver.status === 'streaming';
    });
  } catch (err) {
    stopOnExit();
    process.off('exit', stopOnExit);
    throw err;
  }

  const pair: PrimaryAndReplica = {
    primaryPort,
    replicaPort,
    primaryUrl: (database) => url(primaryPort, database),
    replicaUrl: (database) => url(replicaPort, database),
    pauseReplay: async () => {
      await query(replicaPort, 'SELECT pg_wal_replay_pause()');
      await until('the replay to pause', async () => {
        const [state] = await query<{ state: string }>(replicaPort, 'SELECT pg_get_wal_replay_pause_state() AS state');
        return state?.state === 'paused';
      });
    },
    resumeReplay: async () => {
      await query(replicaPort, 'SELECT pg_wal_replay_resume()');
    },
    replicaCaughtUp: async () => {
      const [primary] = await query<{ lsn: string }>(primaryPort, 'SELECT pg_current_wal_flush_lsn()::text AS lsn');
      await until('the replica to replay the primary', async () => {
        const [replica] = await query<{ done: boolean }>(replicaPort, `SELECT pg_last_wal_replay_lsn() >= '${primary!.lsn}'::pg_lsn AS done`);
        return replica?.done === true;
      });
    },
    countConnections: async (server, applicationName) => {
      const client = new pg.Client({ connectionString: url(server === 'primary' ? primaryPort : replicaPort, 'postgres') });
      await client.connect();
      try {
        const { rows } = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
        return rows[0]!.count;
      } finally {
        await client.end();
      }
    },
    stopReplica: async () => stopServer(replicaDir, 'fast'),
    startReplica: async () => {
      startServer(replicaDir);
      await until('the replica to answer again', async () => (await query(replicaPort, 'SELECT 1')).length === 1);
    },
    close: async () => {
      process.off('exit', stopOnExit);
      stopServer(replicaDir, 'fast');
      stopServer(primaryDir, 'fast');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pair;
}
