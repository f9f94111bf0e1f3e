import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './processes.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

// A private Redis Cluster for the D36 suite: three masters, each with one replica, on
// loopback ports of their own, keeping nothing on disk (redis-server.ts). A test can kill a
// master (kill -9) and wait for its replica to take over, or restart every node empty and
// create the cluster anew ("Redis lost everything"). Every node is killed when the test
// process exits (redis-server.ts).

export type RedisCluster = {
  // REDIS_CLUSTER_NODES for the service: every node, masters and replicas
  nodes: string;
  ports: number[];
  // the port of the master that serves `key`'s slot now
  masterOf: (key: string) => Promise<number>;
  // kill -9 the master serving `key`'s slot, then wait until its replica serves the slot
  // and the cluster is whole again; answers the port killed, which stays down
  failOver: (key: string) => Promise<number>;
  // every node killed (kill -9); the ports refuse connections until restartEmpty
  stop: () => Promise<void>;
  // every node killed and started again with nothing kept (no data, no cluster
  // configuration), then the cluster created anew on the same ports
  restartEmpty: () => Promise<void>;
  close: () => Promise<void>;
};

const MASTERS = 3;
const SLOTS = 16384;
const HEALTHY_TIMEOUT_MS = 30_000;
// how long a node may be unreachable before the others count it as failed: short, so that
// a failover takes a few seconds
const NODE_TIMEOUT_MS = 1000;

export async function startRedisCluster(): Promise<RedisCluster> {
  const servers: RedisServer[] = [];
  try {
    for (let i = 0; i < MASTERS * 2; i++) {
      const port = await freePort();
      const bus = await freePort();
      servers.push(
        await startRedisServer({
          port,
          args: [
            '--cluster-enabled', 'yes',
            '--cluster-config-file', 'nodes.conf',
            '--cluster-port', String(bus),
            '--cluster-node-timeout', String(NODE_TIMEOUT_MS),
            // a replica takes over however long it was out of touch: the data is transport only
            '--cluster-replica-validity-factor', '0',
          ],
        }),
      );
    }
  } catch (error) {
    await Promise.all(servers.map((server) => server.close()));
    throw error;
  }
  const ports = servers.map((server) => server.port);
  const down = new Set<number>();

  const create = async () => {
    await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes']);
    await whole(ports.filter((port) => !down.has(port)));
  };
  try {
    await create();
  } catch (error) {
    await Promise.all(servers.map((server) => server.close()));
    throw error;
  }

  const masterOf = async (key: string): Promise<number> => {
    const live = ports.find((port) => !down.has(port))!;
    const slot = Number(await ask(live, 'cluster', 'keyslot', key));
    const owner = (await slotMap(live)).find(([from, to]) => slot >= from && slot <= to);
    if (!owner) throw new Error(`no master serves slot ${slot}`);
    return owner[2];
  };

  return {
    nodes: ports.map((port) => `127.0.0.1:${port}`).join(','),
    ports,
    masterOf,
    failOver: async (key) => {
      const port = await masterOf(key);
      await servers[ports.indexOf(port)]!.stop();
      down.add(port);
      const live = ports.filter((p) => !down.has(p));
      await until(`a replica to take over from the master on ${port}`, async () => {
        const serving = await masterOf(key).catch(() => port);
        if (down.has(serving)) return false;
        for (const node of live) if (!(await ask(node, 'cluster', 'info').catch(() => '')).includes('cluster_state:ok')) return false;
        return true;
      });
      return port;
    },
    stop: async () => {
      await Promise.all(servers.map((server) => server.stop()));
    },
    restartEmpty: async () => {
      for (const server of servers) {
        await server.stop();
        rmSync(join(server.dir, 'nodes.conf'), { force: true });
      }
      down.clear();
      await Promise.all(servers.map((server) => server.restart()));
      await create();
    },
    close: async () => {
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}

// Every live node sees the cluster whole: all slots served and ok, and each replica in step
// with its master (so that a master killed next has a replica ready to take over).
async function whole(live: number[]): Promise<void> {
  await until('the cluster to be whole', async () => {
    for (const port of live) {
      const info = await ask(port, 'cluster', 'info').catch(() => '');
      if (!info.includes('cluster_state:ok') || !info.includes(`cluster_slots_ok:${SLOTS}`)) return false;
      const replication = await ask(port, 'info', 'replication').catch(() => '');
      if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return false;
    }
    return true;
  });
}

// [first slot, last slot, master port] of each range, as the node on `port` sees them
async function slotMap(port: number): Promise<[number, number, number][]> {
  const slots = (await ask(port, 'cluster', 'slots')) as unknown as [number, number, [string, number, string]][];
  return slots.map(([from, to, master]) => [from, to, master[1]]);
}

// one command on one node, on a connection of its own that does not retry
async function ask(port: number, command: string, ...args: string[]): Promise<string> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.call(command, ...args)) as string;
  } finally {
    redis.disconnect();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = HEALTHY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output.slice(-4000)}`))));
  });
}
