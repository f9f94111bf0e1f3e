import type { Cluster } from 'ioredis';

// D36: the subscriber of a process's sharded pub/sub on a Redis Cluster, which can be
// replaced by a new connection while the Socket.IO adapter keeps using it.
//
// Why not the ioredis Cluster itself: its sharded subscribers (ClusterSubscriberGroup) can
// wedge for good. When the cluster connection is reset while a shard's subscriber is still
// connecting (a restarted cluster failing its ready check does this), the subscriber is
// stopped by disconnecting it and removing its listeners at once, which removes the
// listeners its pending connect settles on: that connect never settles, the group's reset
// waits on it forever, and every later reset of the group is skipped. The connection stays
// ready, commands work, and nothing is heard on any channel again; reconnecting it does not
// help, since the reconnect's reset is one of the skipped ones. A new Cluster has a new
// group, so the repair (subscription-watch.ts) replaces the connection instead.
//
// The adapter is given this object in node-redis's shape (`sSubscribe(channel, listener)`,
// `sUnsubscribe(channel)`), which @socket.io/redis-adapter's sharded adapter accepts as it
// accepts an ioredis client; each channel's listener is kept here, so a new connection
// subscribes every channel again and delivers to the same listeners.

type Listener = (message: Buffer, channel: Buffer) => void;

export class ShardedSubscriber {
  private readonly listeners = new Map<string, Listener>();
  private connection: Cluster;

  // `open` makes a new cluster connection with sharded subscribers
  constructor(private readonly open: () => Cluster) {
    this.connection = this.connect();
  }

  // the current connection's status ('ready' once it serves commands)
  get status(): string {
    return this.connection.status;
  }

  // A refusal is not raised: the adapter does not wait for its subscriptions, and a channel
  // that goes unheard is what the watch repairs.
  async sSubscribe(channel: string, listener: Listener): Promise<void> {
    this.listeners.set(channel, listener);
    await this.connection.ssubscribe(channel).catch(() => undefined);
  }

  async sUnsubscribe(channels: string | string[]): Promise<void> {
    const list = Array.isArray(channels) ? channels : [channels];
    for (const channel of list) this.listeners.delete(channel);
    if (list.length > 0) await this.connection.sunsubscribe(...list).catch(() => undefined);
  }

  // a new connection, subscribed to every channel; the old one is closed
  renew(): void {
    const old = this.connection;
    this.connection = this.connect();
    // one command per channel: channels of different slots cannot share one
    for (const channel of this.listeners.keys()) this.connection.ssubscribe(channel).catch(() => undefined);
    old.removeAllListeners('smessageBuffer');
    old.disconnect();
  }

  disconnect(): void {
    this.connection.disconnect();
  }

  private connect(): Cluster {
    const connection = this.open();
    // a cluster raises its errors as events, which must have a listener; it reconnects by itself
    connection.on('error', () => undefined);
    connection.on('smessageBuffer', (channel: Buffer, message: Buffer) => this.listeners.get(channel.toString())?.(message, channel));
    return connection;
  }
}
