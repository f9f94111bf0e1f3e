import { Redis, type RedisOptions } from 'ioredis';

// ioredis 5 (RESP2). Request-path connections fail fast instead of queueing while Redis is
// away, so a caller answers 503 rather than hanging; BullMQ worker connections need
// maxRetriesPerRequest: null and are made where the workers are.
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2000,
    ...options,
  });
}

// Removes every key of a deployment, all of which live under `${prefix}:` (REDIS_KEY_PREFIX):
// throwaway deployments (test suites, load runs) each get a prefix of their own.
export async function clearRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = createRedis(redisUrl, { enableOfflineQueue: true });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export type { Redis };
