import type { Cluster } from 'ioredis';
import type { Logger } from './logger.js';
import type { ShardedSubscriber } from './sharded-subscriber.js';

// D36: a Redis Cluster connection with sharded subscribers resubscribes its channels when it
// replaces a subscriber connection (a node restarted, a failover), once. If that SSUBSCRIBE
// is refused (CLUSTERDOWN while a cluster restarted empty is still forming, NOPERM while an
// ACL denies the channels), ioredis only records it in its debug log: the connection stays
// ready and silently hears nothing on those channels until the slot map next changes, which
// may be never. For the Socket.IO adapter that is a node whose players stop getting the
// messages other nodes send them (round states, results, balances).
//
// The watch proves the subscription end to end: every PROBE_EVERY_MS it publishes a probe on
// a channel of its own and expects to hear it back. The probe channel carries the watched
// channels' hash tag, so it is in their slot: ioredis resubscribes a slot's channels in one
// SSUBSCRIBE, so the probe is heard exactly when they are. When probes go unheard
// MISSES_TO_REPAIR times in a row, the subscriber is replaced by a new connection that
// subscribes every channel anew (sharded-subscriber.ts says why reconnecting the same one is
// not enough); if that is refused too, the next misses repeat it.

const PROBE_EVERY_MS = 2000;
// a turn of a busy event loop can hold a probe's echo past one tick; three in a row is a
// lost subscription, not a late read
const MISSES_TO_REPAIR = 3;

export class SubscriptionWatch {
  private timer: NodeJS.Timeout | undefined;
  private unheard = 0;
  private heard = true;
  private readonly onMessage = () => {
    this.heard = true;
  };

  // `channel` is this process's own: it must share the watched channels' hash tag
  constructor(
    private readonly pub: Cluster,
    private readonly sub: ShardedSubscriber,
    private readonly channel: string,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.timer) return;
    // a refusal here is repaired like a lost subscription: its probes go unheard
    void this.sub.sSubscribe(this.channel, this.onMessage);
    this.timer = setInterval(() => this.tick(), PROBE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    void this.sub.sUnsubscribe(this.channel);
  }

  private tick(): void {
    // Redis away: the connections reconnect and resubscribe by themselves; the watch starts
    // counting again once both are back
    if (this.pub.status !== 'ready' || this.sub.status !== 'ready') return this.startOver();
    this.unheard = this.heard ? 0 : this.unheard + 1;
    if (this.unheard >= MISSES_TO_REPAIR) {
      this.logger.warn({ channel: this.channel, probesUnheard: this.unheard }, 'pub/sub subscription lost: renewing the subscriber');
      this.sub.renew();
      return this.startOver();
    }
    this.heard = false;
    // any probe heard on the channel proves it, so the probe carries nothing
    this.pub.spublish(this.channel, '').catch(() => {
      // not published (Redis refused it): nothing can be heard, nothing is missed
      this.heard = true;
    });
  }

  private startOver(): void {
    this.unheard = 0;
    this.heard = true;
  }
}
