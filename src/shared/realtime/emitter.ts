import { randomUUID } from 'node:crypto';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server } from 'socket.io';
import { createRedis, type Redis } from '../redis.js';

// How every role reaches players (D4, design card). Each process has one Socket.IO server
// on the Redis adapter: the realtime role attaches it to its HTTP listener and holds the
// sockets; the other roles use it only to send. A message is delivered at once to the
// sockets of this process, and the messages of one turn of the event loop go to the other
// nodes together, as one adapter `serverSideEmit` (issue 6: one Redis message per batch of
// bets or per settled cycle, not one per player message). Everything a process sends
// travels that one way, so a player sees a process's messages in the order it sent them.
// Every message carries `ts` (D4).

export const engineRoom = (operatorId: string, gameCode: string, currency: string) =>
  `engine:${operatorId}:${gameCode}:${currency}`;
export const sessionRoom = (sessionId: string) => `session:${sessionId}`;

// a message for the sockets in a room, or the verdict on a bet for the node that holds the
// player's place_bet acknowledgement
type Outgoing =
  | { room: string; event: string; payload: Record<string, unknown> }
  | { node: string; betId: string; verdict: unknown };

type Engine = { operatorId: string; gameCode: string; currency: string };

const DELIVER = 'rgs:deliver';

export class PlayerEmitter {
  // this process's identity among the realtime nodes (verdicts are addressed to it)
  readonly nodeId = randomUUID();
  readonly io: Server;
  private readonly pub: Redis;
  private readonly sub: Redis;
  private outbox: Outgoing[] = [];
  private flushScheduled = false;
  private verdictListener: ((betId: string, verdict: unknown) => void) | undefined;

  constructor(redisUrl: string, prefix: string) {
    this.pub = createRedis(redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: null });
    this.sub = createRedis(redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: null });
    this.io = new Server({
      path: '/socket.io',
      // the launch page loads the client from here: no request leaves the service
      serveClient: true,
      // WebSocket only: a connection is one TCP stream to one node, so the nodes need no
      // sticky sessions behind a load balancer (HTTP long-polling would need them)
      transports: ['websocket'],
      // D24: a player's message is a few hundred bytes; a larger one closes its connection
      // before it is read (the default, 1 MB, let one socket make the node parse megabytes)
      maxHttpBufferSize: 8 * 1024,
      // channels namespaced by the deployment's key prefix
      adapter: createAdapter(this.pub, this.sub, { key: `${prefix}:socket.io` }),
    });
    this.io.on(DELIVER, (batch: Outgoing[]) => this.deliverHere(batch));
  }

  toSession(sessionId: string, event: string, payload: Record<string, unknown>): void {
    this.send({ room: sessionRoom(sessionId), event, payload: stamp(payload) });
  }

  toEngine(engine: Engine, event: string, payload: Record<string, unknown>): void {
    this.send({ room: engineRoom(engine.operatorId, engine.gameCode, engine.currency), event, payload: stamp(payload) });
  }

  // the bet's verdict, for the place_bet acknowledgement waiting on node `node`
  verdict(node: string, betId: string, verdict: unknown): void {
    this.send({ node, betId, verdict });
  }

  // the realtime role listens for the verdicts addressed to this node
  onVerdict(listener: ((betId: string, verdict: unknown) => void) | undefined): void {
    this.verdictListener = listener;
  }

  // ends the session's sockets on every node (after session_ended, which is sent first)
  disconnectSession(sessionId: string): void {
    this.flush();
    this.io.in(sessionRoom(sessionId)).disconnectSockets(true);
  }

  async close(): Promise<void> {
    this.flush();
    await this.io.close().catch(() => undefined);
    this.pub.disconnect();
    this.sub.disconnect();
  }

  private send(message: Outgoing): void {
    this.deliverHere([message]);
    // a verdict for this node has been delivered; nothing else is known to be only here
    if ('node' in message && message.node === this.nodeId) return;
    this.outbox.push(message);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.outbox.length === 0) return;
    const batch = this.outbox;
    this.outbox = [];
    // the adapter skips this node itself
    this.io.serverSideEmit(DELIVER, batch);
  }

  private deliverHere(batch: Outgoing[]): void {
    for (const message of batch) {
      if ('room' in message) this.io.local.to(message.room).emit(message.event, message.payload);
      else if (message.node === this.nodeId) this.verdictListener?.(message.betId, message.verdict);
    }
  }
}

const stamp = (payload: Record<string, unknown>) => ({ ...payload, ts: new Date().toISOString() });
