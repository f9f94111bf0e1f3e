import type { Redis } from '../../platform/redis.js';
import { PRESENCE_TTL_MS } from './presence.js';

// D24: the live sockets of a session, across every realtime node, counted in Redis. At most
// SOCKETS_PER_SESSION: a connect beyond that replaces the oldest. Each entry is a member of
// the session's sorted set, `<connect time, 15 digits>:<socket id>` (so the members sort
// oldest first), scored by when its node last vouched for it. A node refreshes its sockets'
// entries with its presence (every PRESENCE_REFRESH_MS); the entries of a node that died
// stop counting after SOCKET_TTL_MS, and the key itself expires with them. A new connect is
// never refused, so nothing a dead node left behind can lock a session out.

export const SOCKETS_PER_SESSION = 3;
export const SOCKET_TTL_MS = PRESENCE_TTL_MS;

// D36: the sessions' keys share the feature's hash tag: a node refreshes all of its
// sockets' entries in one pipeline, which a Redis Cluster takes only within one slot
export const socketsKey = (sessionId: string) => `{session-sockets}:${sessionId}`;
const socketIdOf = (entry: string) => entry.slice(entry.indexOf(':') + 1);

export type Admitted = { entry: string; replaced: string[] };

// The socket joins its session's live sockets; answers the ids of the sockets it replaces
// (the oldest beyond the bound), whose entries are gone already. Two connects racing each
// replace the oldest of what they saw, so at most the bound stay either way.
export async function admitSocket(redis: Redis, sessionId: string, socketId: string, now = Date.now()): Promise<Admitted> {
  const key = socketsKey(sessionId);
  const entry = `${String(now).padStart(15, '0')}:${socketId}`;
  const results = await redis
    .multi()
    .zremrangebyscore(key, '-inf', `(${now - SOCKET_TTL_MS}`)
    .zadd(key, now, entry)
    .zrange(key, 0, -1)
    .pexpire(key, SOCKET_TTL_MS)
    .exec();
  const [err, members] = results?.[2] ?? [new Error('session sockets not read'), null];
  if (err) throw err;
  const live = (members as string[]).sort();
  const excess = live.slice(0, Math.max(0, live.length - SOCKETS_PER_SESSION));
  if (excess.length > 0) await redis.zrem(key, ...excess);
  return { entry, replaced: excess.map(socketIdOf) };
}

// a node vouches for its sockets' entries again (one round trip for all of them)
export async function refreshSockets(redis: Redis, entries: { sessionId: string; entry: string }[], now = Date.now()): Promise<void> {
  if (entries.length === 0) return;
  const pipeline = redis.pipeline();
  for (const { sessionId, entry } of entries) {
    pipeline.zadd(socketsKey(sessionId), 'XX', now, entry);
    pipeline.pexpire(socketsKey(sessionId), SOCKET_TTL_MS);
  }
  await pipeline.exec();
}

export async function forgetSocket(redis: Redis, sessionId: string, entry: string): Promise<void> {
  await redis.zrem(socketsKey(sessionId), entry);
}

// D24: the connects of one session make at most one /wallet/balance call per this window,
// between them (the launch's own call is separate). The window's balance is kept with it:
// what that call answered, then what each balance_update of the session carried (the
// emitter writes those, emitter.ts), so a connect that does not call still shows a current
// balance; none (null, unknown) while the call is in flight or when it could not be read.
export const CONNECT_BALANCE_WINDOW_MS = 5000;

// D36: one hash tag for every session's window (the emitter writes a turn's in one pipeline)
export const connectBalanceKey = (sessionId: string) => `{connect-balance}:${sessionId}`;
const UNKNOWN = '-';
const MICRO = /^[0-9]{1,20}$/;

export async function connectBalance(redis: Redis, sessionId: string, read: () => Promise<string | null>): Promise<string | null> {
  const key = connectBalanceKey(sessionId);
  if ((await redis.set(key, UNKNOWN, 'PX', CONNECT_BALANCE_WINDOW_MS, 'NX')) === 'OK') {
    const balance = await read();
    if (balance !== null) await redis.set(key, balance, 'KEEPTTL', 'XX');
    return balance;
  }
  const known = await redis.get(key);
  return known !== null && MICRO.test(known) ? known : null;
}
