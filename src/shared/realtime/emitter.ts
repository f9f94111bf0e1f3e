import { createAdapter } from '@socket.io/redis-adapter';
import { Server } from 'socket.io';
import { createRedis, type Redis } from '../redis.js';

// Every role reaches players through the Socket.IO Redis adapter (D4, design card): a
// server with no HTTP listener still broadcasts to rooms held by the realtime nodes.
// Every message carries `ts` (D4).

export const engineRoom = (operatorId: string, gameCode: string, currency: string) =>
  `engine:${operatorId}:${gameCode}:${currency}`;
export const sessionRoom = (sessionId: string) => `session:${sessionId}`;

export type PlayerEmitter = {
  toSession: (sessionId: string, event: string, payload: Record<string, unknown>) => void;
  toEngine: (engine: { operatorId: string; gameCode: string; currency: string }, event: string, payload: Record<string, unknown>) => void;
  // ends the session's sockets on every node (after session_ended)
  disconnectSession: (sessionId: string) => void;
  close: () => Promise<void>;
};

function createPlayerEmitter(io: Server): Omit<PlayerEmitter, 'close'> {
  const stamp = (payload: Record<string, unknown>) => ({ ...payload, ts: new Date().toISOString() });
  return {
    toSession: (sessionId, event, payload) => {
      io.to(sessionRoom(sessionId)).emit(event, stamp(payload));
    },
    toEngine: (engine, event, payload) => {
      io.to(engineRoom(engine.operatorId, engine.gameCode, engine.currency)).emit(event, stamp(payload));
    },
    disconnectSession: (sessionId) => {
      io.in(sessionRoom(sessionId)).disconnectSockets(true);
    },
  };
}

// The Socket.IO Redis adapter on its own pub/sub connections, its channels namespaced by
// the deployment's key prefix.
export function redisAdapter(redisUrl: string, prefix: string) {
  const pub: Redis = createRedis(redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: null });
  const sub: Redis = createRedis(redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: null });
  return {
    adapter: createAdapter(pub, sub, { key: `${prefix}:socket.io` }),
    close: () => {
      pub.disconnect();
      sub.disconnect();
    },
  };
}

// A listener-less server for roles without sockets (scheduler, workers, api).
export function createDetachedEmitter(redisUrl: string, prefix: string): PlayerEmitter {
  const { adapter, close } = redisAdapter(redisUrl, prefix);
  const io = new Server({ adapter });
  // no listener and no sockets: closing means dropping the adapter's connections
  return {
    ...createPlayerEmitter(io),
    close: async () => close(),
  };
}
