import type { Socket as TcpSocket } from 'node:net';
import type { Server as SocketIoServer } from 'socket.io';

// A socket write is the most expensive thing this service does per message (a loopback write
// runs the receiver's network stack and wakes it). The messages a player gets at one moment
// (bet_placed, balance_update and the place_bet ack; round_state RESULT and round_result;
// round_state RESULT and COOLDOWN of a cycle nobody bet in; round_state PENDING and
// BETTING_OPEN) are therefore written together: each connection
// hands its queued packets to the transport once per turn of the event loop, and the
// transport's WebSocket frames of that hand-over leave in one write. Order is untouched
// (engine.io's own buffer, in order); a message waits at most until the I/O callbacks of the
// current turn are done.

// what this needs of an engine.io socket (engine.io 6: flush() hands the queued packets to the
// transport; the WebSocket transport's socket is ws's, whose _socket is the TCP connection)
type EngineSocket = {
  flush(): void;
  close(discard?: boolean): void;
  transport: { send(packets: unknown[]): void; socket?: { _socket?: TcpSocket } };
};

export function coalesceWrites(io: SocketIoServer): void {
  io.engine.on('connection', (socket: EngineSocket) => coalesce(socket));
}

function coalesce(socket: EngineSocket): void {
  const flushNow = socket.flush.bind(socket);
  let scheduled = false;
  socket.flush = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flushNow();
    });
  };
  // closing (a disconnect, a shutdown) sends what is queued first, as engine.io would have
  const close = socket.close.bind(socket);
  socket.close = (discard?: boolean) => {
    flushNow();
    close(discard);
  };
  // the frames of one hand-over in one write (ws writes each frame on its own)
  const { transport } = socket;
  const send = transport.send.bind(transport);
  transport.send = (packets) => {
    const tcp = transport.socket?._socket;
    if (!tcp || packets.length < 2) return send(packets);
    tcp.cork();
    try {
      send(packets);
    } finally {
      tcp.uncork();
    }
  };
}
