import { createAdapter } from '@socket.io/redis-adapter';
import { Server } from 'socket.io';
import type { Redis } from '../redis.js';

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

export function createPlayerEmitter(io: Server): PlayerEmitter {
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
    close: async () => {
      await io.close();
    },
  };
}

// A listener-less server for roles without sockets (scheduler, workers, api).
export function createDetachedEmitter(redis: Redis): PlayerEmitter {
  const pub = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
  const sub = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
  const io = new Server();
  io.adapter(createAdapter(pub, sub));
  // no listener and no sockets: closing means dropping the adapter's connections
  return {
    ...createPlayerEmitter(io),
    close: async () => {
      pub.disconnect();
      sub.disconnect();
    },
  };
}
