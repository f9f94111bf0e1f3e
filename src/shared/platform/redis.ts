import { Cluster, Redis as Server, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisNode } from './config.js';

// One Redis server (REDIS_URL), or a Redis Cluster (REDIS_CLUSTER_NODES, D36) reached through
// any of the nodes listed, with REDIS_URL's user, password and TLS. A Config is a target.
export type RedisTarget = { redisUrl: string; redisClusterNodes?: readonly RedisNode[] | undefined };

// A connection to either: both answer the same commands. On a cluster every command's keys
// must share a slot, which the keys' hash tags see to (D36).
export type Redis = Server | Cluster;

// ioredis 5 (RESP2). Request-path connections fail fast instead of queueing while Redis is
// away, so a caller answers 503 rather than hanging; BullMQ worker connections need
// maxRetriesPerRequest: null and are made where the workers are. `cluster` adds options of
// a cluster connection (the Socket.IO adapter's subscriber sets shardedSubscribers).
export function createRedis(target: string | RedisTarget, options: RedisOptions = {}, cluster: Partial<ClusterOptions> = {}): Redis {
  const { redisUrl, redisClusterNodes } = typeof target === 'string' ? { redisUrl: target, redisClusterNodes: undefined } : target;
  const settings: RedisOptions = { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, ...options };
  if (!redisClusterNodes || redisClusterNodes.length === 0) return new Server(redisUrl, settings);
  // the key prefix and the offline queue are the cluster connection's; everything else is
  // how it talks to each node
  const { keyPrefix, enableOfflineQueue, ...node } = settings;
  const url = new URL(redisUrl);
  return new Cluster(
    redisClusterNodes.map(({ host, port }) => ({ host, port })),
    {
      keyPrefix,
      enableOfflineQueue,
      // commands go to the masters only: a replica may not yet hold what was just written
      scaleReads: 'master',
      ...cluster,
      redisOptions: {
        ...node,
        ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
        ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
        ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
      },
    },
  );
}

// Where the target is, for an error message: the cluster's nodes, or REDIS_URL without its
// password.
export function redisAddress(target: RedisTarget): string {
  if (target.redisClusterNodes?.length) return target.redisClusterNodes.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(',');
  try {
    const url = new URL(target.redisUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'REDIS_URL';
  }
}

// The servers a SCAN must walk to see every key: each master of a cluster (SCAN reads one
// server), or the one server.
export function scanTargets(redis: Redis): Server[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

// Every key matching `pattern` (the full key: SCAN's MATCH is not prefixed by ioredis), in
// batches, on every master.
export async function* scanKeys(redis: Redis, pattern: string, count = 1000): AsyncGenerator<string[]> {
  for (const server of scanTargets(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      if (keys.length > 0) yield keys;
      cursor = next;
    } while (cursor !== '0');
  }
}

// Resolves once the connection is ready: for a cluster, once it knows which master serves
// each slot.
export function redisReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const ready = () => {
      redis.off('error', failed);
      resolve();
    };
    const failed = (err: Error) => {
      redis.off('ready', ready);
      reject(err);
    };
    redis.once('ready', ready);
    redis.once('error', failed);
  });
}

// Removes every key of a deployment, all of which live under `${prefix}:` (REDIS_KEY_PREFIX):
// throwaway deployments (test suites, load runs) each get a prefix of their own. One key per
// UNLINK: on a cluster, keys of different slots cannot share a command even on one master.
export async function clearRedisPrefix(target: string | RedisTarget, prefix: string): Promise<void> {
  const redis = createRedis(target, { enableOfflineQueue: true });
  try {
    // a cluster's masters are known once it is ready
    if (redis instanceof Cluster) await redisReady(redis);
    for await (const keys of scanKeys(redis, `${prefix}:*`)) {
      if (redis instanceof Cluster) await Promise.all(keys.map((key) => redis.unlink(key)));
      else await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
}
