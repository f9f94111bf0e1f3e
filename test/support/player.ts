import { io, type Socket } from 'socket.io-client';

// A player's browser, as a test sees it: a Socket.IO client (WebSocket transport only)
// that records every message and can wait for one.
export type Message = { event: string; payload: any };

export class Player {
  readonly messages: Message[] = [];
  private waiters: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];

  private constructor(readonly socket: Socket) {
    socket.onAny((event: string, payload: unknown) => this.record({ event, payload }));
    socket.on('disconnect', (reason) => this.record({ event: 'disconnect', payload: { reason } }));
  }

  static connect(baseUrl: string, token: string): Promise<Player> {
    const socket = io(baseUrl, { path: '/socket.io', auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true });
    const player = new Player(socket);
    return new Promise((resolve, reject) => {
      socket.once('connect', () => resolve(player));
      socket.once('connect_error', (err) => {
        socket.close();
        reject(err);
      });
    });
  }

  private record(message: Message) {
    this.messages.push(message);
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.match(message)) return true;
      waiter.resolve(message);
      return false;
    });
  }

  // resolves with the first message (already received or future) that matches
  waitFor(event: string, where: (payload: any) => boolean = () => true, timeoutMs = 10_000, after = 0): Promise<any> {
    const match = (m: Message) => m.event === event && where(m.payload);
    const seen = this.messages.slice(after).find(match);
    if (seen) return Promise.resolve(seen.payload);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms; got ${this.messages.map((m) => m.event).join(', ')}`)), timeoutMs);
      this.waiters.push({ match, resolve: (m) => { clearTimeout(timer); resolve(m.payload); } });
    });
  }

  // the next message of this kind from now on
  next(event: string, where: (payload: any) => boolean = () => true, timeoutMs = 10_000): Promise<any> {
    return this.waitFor(event, where, timeoutMs, this.messages.length);
  }

  request(event: string, payload: unknown, timeoutMs = 10_000): Promise<any> {
    return this.socket.timeout(timeoutMs).emitWithAck(event, payload);
  }

  close() {
    this.socket.close();
  }
}
