import type { Redis } from '../../platform/redis.js';
import type { EngineKey } from '../../domain/engine-key.js';

// Which engines have a connected player (D1: the clock runs while one is connected). Each
// realtime node refreshes its sockets' entries; an entry not refreshed within the TTL
// (its node died) stops counting.
export const PRESENCE_TTL_MS = 30_000;
export const PRESENCE_REFRESH_MS = 10_000;

// D36: every engine's presence shares the feature's hash tag
const presenceKey = (engine: EngineKey) => `{presence}:${engine.operatorId}:${engine.gameCode}:${engine.currency}`;

// one round trip for all of a node's sockets at an engine
export async function markPresent(redis: Redis, engine: EngineKey, ...socketIds: string[]): Promise<void> {
  const now = Date.now();
  await redis.zadd(presenceKey(engine), ...socketIds.flatMap((id) => [now, id]));
}

export async function markAbsent(redis: Redis, engine: EngineKey, socketId: string): Promise<void> {
  await redis.zrem(presenceKey(engine), socketId);
}

export async function countPresent(redis: Redis, engine: EngineKey): Promise<number> {
  const key = presenceKey(engine);
  await redis.zremrangebyscore(key, '-inf', Date.now() - PRESENCE_TTL_MS);
  return redis.zcard(key);
}
