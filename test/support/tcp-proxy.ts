import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

// A TCP proxy for the fault suite: `tc netem` does not work on the test kernel and
// toxiproxy is not installable, so network faults between the service and Postgres, Redis
// or a wallet are made here, byte-stream agnostic (pg wire protocol, RESP, HTTP alike).
// Put it in front of a target and point the client at `proxy.via(targetUrl)`.

export type BlackholeMode =
  // what a partition that never heals does to the bytes in flight: they are lost, so the
  // connection is useless afterwards (its protocol is out of step) and only a new one works
  | 'drop'
  // what TCP does across a partition that heals: the bytes wait (retransmission) and arrive,
  // in order, once it is turned off; the connection carries on
  | 'hold';

export type TcpProxy = {
  host: string;
  port: number;
  // targetUrl with its host and port replaced by the proxy's: postgresql://u@127.0.0.1:<port>/db
  via: (targetUrl: string) => string;
  // client connections currently open through the proxy
  readonly connections: number;
  // delays every chunk, in both directions, by ms (order kept per direction); 0 turns it off
  setLatency: (ms: number) => void;
  // while on, connections (old and new) are kept open but carry nothing
  blackhole: (on: boolean, mode?: BlackholeMode) => void;
  // while on, a new connection is reset at once (the target is "down")
  refuse: (on: boolean) => void;
  // the connections open now carry nothing more, in either direction, and stay open, while
  // new ones work: a client left holding connections that look alive and are useless
  freezeOpen: () => void;
  // RST on every open client and upstream socket: both peers see ECONNRESET
  resetAll: () => void;
  // What a router or a retransmission does to a request it delays: from the first chunk a
  // client sends that contains `marker` (e.g. 'POST /wallet/bet'), that connection's bytes to
  // the target wait, and still arrive (with the client's FIN) once released, even though the
  // client has given up and closed meanwhile. Other connections carry on.
  holdMatching: (marker: string) => HeldTraffic;
  close: () => Promise<void>;
};

export type TcpProxyOptions = {
  target: { host: string; port: number };
  listenPort?: number; // default 0: any free port
};

export type HeldTraffic = {
  // connections held so far
  readonly connections: number;
  // delivers what was held, in order, and holds nothing more
  release: () => void;
};

type Item = { kind: 'data'; chunk: Buffer; due: number } | { kind: 'end'; due: number };

type HoldRule = { marker: Buffer; pipes: Set<Pipe>; released: boolean };

type Faults = { latencyMs: number; blackhole: BlackholeMode | null; holds: Set<HoldRule> };

// One direction of one connection: what `from` sends is written to `to`, each item no
// earlier than its due time and never before the items received earlier.
class Pipe {
  private readonly queue: Item[] = [];
  private readonly held: Item[] = [];
  // holdMatching: what waits for its rule's release (apart from a black hole's)
  private readonly kept: Item[] = [];
  keeping = false;
  // freezeOpen: this pipe drops every byte from now on
  frozen = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly faults: Faults,
  ) {
    from.on('data', (chunk: Buffer) => this.receive({ kind: 'data', chunk, due: 0 }));
    from.on('end', () => this.receive({ kind: 'end', due: 0 }));
    // backpressure: a slow reader slows the writer down instead of growing the queue
    to.on('drain', () => from.resume());
  }

  // blackhole turned off: what was held goes on, in the order it came, behind whatever
  // was already queued
  release(): void {
    for (const item of this.held.splice(0)) this.schedule(item);
  }

  // holdMatching released: what was kept goes on, in order
  releaseKept(): void {
    this.keeping = false;
    for (const item of this.kept.splice(0)) this.schedule(item);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
    this.held.length = 0;
    this.kept.length = 0;
  }

  private receive(item: Item): void {
    if (this.frozen && item.kind === 'data') return;
    if (!this.keeping && item.kind === 'data') {
      for (const rule of this.faults.holds) {
        if (rule.released || !item.chunk.includes(rule.marker)) continue;
        this.keeping = true;
        rule.pipes.add(this);
        break;
      }
    }
    if (this.keeping) {
      this.kept.push(item);
      return;
    }
    if (this.faults.blackhole === 'hold') {
      this.held.push(item);
      return;
    }
    // a dropped FIN would leave the peer waiting forever for an end that did happen
    if (this.faults.blackhole === 'drop' && item.kind === 'data') return;
    this.schedule(item);
  }

  private schedule(item: Item): void {
    const last = this.queue.at(-1);
    item.due = Math.max(performance.now() + this.faults.latencyMs, last?.due ?? 0);
    this.queue.push(item);
    if (this.queue.length === 1) this.flush();
  }

  private flush(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0 && this.queue[0]!.due <= now) {
      const item = this.queue.shift()!;
      if (this.to.destroyed) continue;
      if (item.kind === 'end') this.to.end();
      else if (!this.to.write(item.chunk)) this.from.pause();
    }
    const next = this.queue[0];
    if (next) this.timer = setTimeout(() => this.flush(), Math.max(0, next.due - now));
  }
}

type Connection = { client: Socket; upstream: Socket; pipes: [Pipe, Pipe] };

export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const faults: Faults = { latencyMs: 0, blackhole: null, holds: new Set() };
  let refusing = false;
  const open = new Set<Connection>();

  // allowHalfOpen: a FIN from one side is passed on as a FIN, not as a close of both
  const server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: options.target.host, port: options.target.port, allowHalfOpen: true, noDelay: true });
    const connection: Connection = {
      client,
      upstream,
      pipes: [new Pipe(client, upstream, faults), new Pipe(upstream, client, faults)],
    };
    open.add(connection);
    // A reset (or any error) on one side is passed on as a reset, so that the peer sees
    // what it would see without the proxy; a plain close is passed on as a close.
    const onError = (other: Socket) => () => {
      if (!other.destroyed) other.resetAndDestroy();
    };
    client.on('error', onError(upstream));
    upstream.on('error', onError(client));
    const onClose = (other: Socket) => () => {
      for (const pipe of connection.pipes) pipe.stop();
      open.delete(connection);
      if (!other.destroyed) other.destroy();
    };
    // holdMatching: a client gone with its bytes held leaves the upstream open for them;
    // the upstream's own close ends the connection
    client.on('close', () => {
      if (!connection.pipes[0].keeping) onClose(upstream)();
    });
    upstream.on('close', onClose(client));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listenPort ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const host = '127.0.0.1';
  const { port } = server.address() as AddressInfo;

  return {
    host,
    port,
    via: (targetUrl) => {
      const url = new URL(targetUrl);
      url.hostname = host;
      url.port = String(port);
      return url.toString();
    },
    get connections() {
      return open.size;
    },
    setLatency: (ms) => {
      if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`latency must be a non-negative number of ms, got ${ms}`);
      faults.latencyMs = ms;
    },
    blackhole: (on, mode = 'drop') => {
      faults.blackhole = on ? mode : null;
      if (!on) for (const connection of open) for (const pipe of connection.pipes) pipe.release();
    },
    refuse: (on) => {
      refusing = on;
    },
    freezeOpen: () => {
      for (const connection of open) for (const pipe of connection.pipes) pipe.frozen = true;
    },
    holdMatching: (marker) => {
      const rule: HoldRule = { marker: Buffer.from(marker), pipes: new Set(), released: false };
      faults.holds.add(rule);
      return {
        get connections() {
          return rule.pipes.size;
        },
        release: () => {
          rule.released = true;
          faults.holds.delete(rule);
          for (const pipe of rule.pipes) pipe.releaseKept();
        },
      };
    },
    resetAll: () => {
      for (const { client, upstream } of open) {
        client.resetAndDestroy();
        upstream.resetAndDestroy();
      }
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { client, upstream } of open) {
        client.destroy();
        upstream.destroy();
      }
      await closed;
    },
  };
}
