import { randomUUID } from 'node:crypto';
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import { Server, type BroadcastOperator } from 'socket.io';
import type { Cluster } from 'ioredis';
import type { Logger } from '../../platform/logger.js';
import { createRedis, type Redis, type RedisTarget } from '../../platform/redis.js';
import { SubscriptionWatch } from '../../platform/subscription-watch.js';
import { ShardedSubscriber } from '../../platform/sharded-subscriber.js';
import { connectBalanceKey } from './session-sockets.js';
import type {
  BalanceUpdate,
  BetVerdict,
  ClientToServerEvents,
  ServerEvent,
  ServerMessages,
  ServerToClientEvents,
  SessionEnded,
  Stamped,
} from '../../domain/player-channel.js';

// How every role reaches players (D4). Each process has one Socket.IO server
// on the Redis adapter: the realtime role attaches it to its HTTP listener and holds the
// sockets; the other roles use it only to send. A message is delivered at once to the
// sockets of this process, and the messages of one turn of the event loop go to the other
// nodes together, as one adapter `serverSideEmit` (one Redis message per batch of
// bets or per settled cycle, not one per player message). Everything a process sends
// travels that one way, so a player sees a process's messages in the order it sent them.
// Every message carries `ts` (D4). What a message is called and carries is the player
// channel's map (src/shared/domain/player-channel.ts): a name or a payload outside it fails the
// type check here, where every role sends.

export const engineRoom = (operatorId: string, gameCode: string, currency: string) =>
  `engine:${operatorId}:${gameCode}:${currency}`;
export const sessionRoom = (sessionId: string) => `session:${sessionId}`;

// a message for the sockets in a room, the verdict on a bet for the node that holds the
// player's place_bet acknowledgement, or the end of the sockets in a room (session_ended
// with this payload, then the disconnect)
type RoomMessage = { [E in ServerEvent]: { room: string; event: E; payload: Stamped<ServerMessages[E]> } }[ServerEvent];
type Outgoing = RoomMessage | { node: string; betId: string; verdict: BetVerdict } | { end: string; payload: Stamped<SessionEnded> };

// how a realtime node ends its sockets in a room (after their pending acks, D28)
export type SocketEnder = (room: string, payload: Stamped<SessionEnded>) => void;

type Engine = { operatorId: string; gameCode: string; currency: string };

const DELIVER = 'rgs:deliver';

// between the nodes: the batches of one turn (serverSideEmit)
export type InterNodeEvents = { [DELIVER]: (batch: Outgoing[]) => void };

// the process's Socket.IO server, typed by the player channel's map
export type PlayerServer = Server<ClientToServerEvents, ServerToClientEvents, InterNodeEvents>;

export class PlayerEmitter {
  // this process's identity among the realtime nodes (verdicts are addressed to it)
  readonly nodeId = randomUUID();
  readonly io: PlayerServer;
  private readonly pub: Redis;
  private readonly sub: Redis | ShardedSubscriber;
  private readonly watch: SubscriptionWatch | undefined;
  private outbox: Outgoing[] = [];
  private flushScheduled = false;
  private verdictListener: ((betId: string, verdict: BetVerdict) => void) | undefined;
  private ender: SocketEnder | undefined;
  // the balances this turn's balance_update messages carried, per session
  private balances = new Map<string, string>();

  constructor(
    target: RedisTarget,
    private readonly prefix: string,
    logger: Logger,
  ) {
    const cluster = Boolean(target.redisClusterNodes?.length);
    this.pub = createRedis(target, { enableOfflineQueue: true, maxRetriesPerRequest: null });
    // D36: on a cluster, a subscriber the watch can replace (sharded-subscriber.ts)
    this.sub = cluster
      ? new ShardedSubscriber(() => createRedis(target, { enableOfflineQueue: true, maxRetriesPerRequest: null }, { shardedSubscribers: true }) as Cluster)
      : createRedis(target, { enableOfflineQueue: true, maxRetriesPerRequest: null });
    // the adapter's connections reconnect by themselves; a cluster's raises its errors as
    // events, which must have a listener
    this.pub.on('error', () => undefined);
    if (!(this.sub instanceof ShardedSubscriber)) this.sub.on('error', () => undefined);
    this.io = new Server<ClientToServerEvents, ServerToClientEvents, InterNodeEvents>({
      path: '/socket.io',
      // the launch page loads the client from here: no request leaves the service
      serveClient: true,
      // WebSocket only: a connection is one TCP stream to one node, so the nodes need no
      // sticky sessions behind a load balancer (HTTP long-polling would need them)
      transports: ['websocket'],
      // D24: a player's message is a few hundred bytes; a larger one closes its connection
      // before it is read (the default, 1 MB, let one socket make the node parse megabytes)
      maxHttpBufferSize: 8 * 1024,
      // channels namespaced by the deployment's key prefix. D36: on a Redis Cluster, sharded
      // pub/sub (Redis 7): a message goes to the one master that serves its channel, not to
      // every node of the cluster. 'static': the two channels of the namespace only, since
      // every message travels as one serverSideEmit (a channel per room would mean a
      // subscription per session). The channels share a hash tag: the adapter unsubscribes
      // them in one command, which a cluster takes only within one slot.
      adapter:
        this.sub instanceof ShardedSubscriber
          ? createShardedAdapter(this.pub, this.sub, { channelPrefix: `${prefix}:{socket.io}`, subscriptionMode: 'static' })
          : createAdapter(this.pub, this.sub, { key: `${prefix}:socket.io` }),
    });
    this.io.on(DELIVER, (batch: Outgoing[]) => this.deliverHere(batch));
    // a cluster's sharded subscription can be lost without a sign (subscription-watch.ts); a
    // single server's connection resubscribes on every reconnect
    if (this.sub instanceof ShardedSubscriber) {
      this.watch = new SubscriptionWatch(this.pub as Cluster, this.sub, `${prefix}:{socket.io}#watch#${this.nodeId}`, logger);
      this.watch.start();
    }
  }

  toSession<E extends ServerEvent>(sessionId: string, event: E, payload: ServerMessages[E]): void {
    const balance = (payload as Partial<BalanceUpdate>).balanceMicro;
    if (event === 'balance_update' && typeof balance === 'string') this.balances.set(sessionId, balance);
    this.send(roomMessage(sessionRoom(sessionId), event, payload));
  }

  toEngine<E extends ServerEvent>(engine: Engine, event: E, payload: ServerMessages[E]): void {
    this.send(roomMessage(engineRoom(engine.operatorId, engine.gameCode, engine.currency), event, payload));
  }

  // the bet's verdict, for the place_bet acknowledgement waiting on node `node`
  verdict(node: string, betId: string, verdict: BetVerdict): void {
    this.send({ node, betId, verdict });
  }

  // the realtime role listens for the verdicts addressed to this node
  onVerdict(listener: ((betId: string, verdict: BetVerdict) => void) | undefined): void {
    this.verdictListener = listener;
  }

  // session_ended to the session's sockets on every node, each then disconnected (D4, D28).
  // It travels with the other messages, after whatever this process sent before (the bet's
  // verdict, bet_rejected), never on a channel of its own that could overtake them.
  endSession(sessionId: string, payload: SessionEnded): void {
    this.send({ end: sessionRoom(sessionId), payload: stamp(payload) });
  }

  // session_ended to one socket, wherever it is (each socket is in a room of its own id)
  endSocket(socketId: string, payload: SessionEnded): void {
    this.send({ end: socketId, payload: stamp(payload) });
  }

  // the realtime role ends its own sockets (it waits for their pending acks first)
  onEnd(ender: SocketEnder | undefined): void {
    this.ender = ender;
  }

  async close(): Promise<void> {
    this.watch?.stop();
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
    this.keepBalances();
    if (this.outbox.length === 0) return;
    const batch = this.outbox;
    this.outbox = [];
    // the adapter skips this node itself
    this.io.serverSideEmit(DELIVER, batch);
  }

  // D24: a connect-balance window open for a session (session-sockets.ts) takes the latest
  // balance its players were sent, so the connects that do not call the wallet show it. One
  // round trip per turn; a key with no window (XX) is not written.
  private keepBalances(): void {
    if (this.balances.size === 0) return;
    const pipeline = this.pub.pipeline();
    for (const [sessionId, balance] of this.balances) pipeline.set(`${this.prefix}:${connectBalanceKey(sessionId)}`, balance, 'KEEPTTL', 'XX');
    this.balances = new Map();
    void pipeline.exec().catch(() => undefined);
  }

  private deliverHere(batch: Outgoing[]): void {
    for (const message of batch) {
      if ('room' in message) emitTo(this.io.local.to(message.room), message);
      else if ('end' in message) this.endHere(message.end, message.payload);
      else if (message.node === this.nodeId) this.verdictListener?.(message.betId, message.verdict);
    }
  }

  private endHere(room: string, payload: Stamped<SessionEnded>): void {
    if (this.ender) return this.ender(room, payload);
    this.io.local.to(room).emit('session_ended', payload);
    this.io.local.in(room).disconnectSockets(true);
  }
}

const stamp = <T extends object>(payload: T): Stamped<T> => ({ ...payload, ts: new Date().toISOString() });

// a message of the map for a room: its name and payload were checked against each other
// where it was made (toSession, toEngine); the union of all pairs is what travels
const roomMessage = <E extends ServerEvent>(room: string, event: E, payload: ServerMessages[E]) =>
  ({ room, event, payload: stamp(payload) }) as unknown as RoomMessage;

function emitTo<E extends ServerEvent>(target: BroadcastOperator<ServerToClientEvents, unknown>, message: { event: E; payload: Stamped<ServerMessages[E]> }): void {
  target.emit(message.event, ...([message.payload] as Parameters<ServerToClientEvents[E]>));
}
