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

export type { Redis };
