import type { Socket as TcpSocket } from 'node:net';
import { expect } from 'chai';
import { operatorWith, seatPlayer, type SeatedPlayer } from '../support/game.js';
import { startHarness, type Harness } from '../support/harness.js';

// issue 6 (src/realtime/write-coalescing.ts): the messages a player gets at one moment leave
// the service in one socket write, in the order they were sent. Writes are counted on the
// service's end of the player's TCP connection (the service runs in this process).
describe('player messages of one moment, one socket write', function () {
  this.timeout(30_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({}, ['api', 'realtime', 'scheduler', 'bet', 'settle', 'rollback']);
  });
  after(() => h.close());

  // the service's end of a player's connection: engine.io socket -> ws -> TCP
  function serviceEndOf(seated: SeatedPlayer): TcpSocket {
    for (const socket of h.svc.emitter.io.of('/').sockets.values()) {
      if ((socket.data as { claims?: { sessionId?: string } }).claims?.sessionId !== seated.sessionId) continue;
      const tcp = (socket.conn as unknown as { transport: { socket: { _socket: TcpSocket } } }).transport.socket._socket;
      if (tcp) return tcp;
    }
    throw new Error('the player has no connection here');
  }

  // counts the writes that reach the TCP socket (Node's stream calls _write for one chunk,
  // _writev for several written at once)
  function countWrites(tcp: TcpSocket): { writes: () => number; stop: () => void } {
    const internal = tcp as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
    const { _write, _writev } = internal;
    let writes = 0;
    internal._write = (...args) => {
      writes += 1;
      _write.apply(tcp, args);
    };
    internal._writev = (...args) => {
      writes += 1;
      _writev.apply(tcp, args);
    };
    return {
      writes: () => writes,
      stop: () => {
        internal._write = _write;
        internal._writev = _writev;
      },
    };
  }

  it('an accepted bet: bet_placed, balance_update and the ack in one write, in that order', async () => {
    // a long window: no phase change reaches the player while the bet is handled
    const operator = await operatorWith(h, { bettingWindowMs: 5000 });
    const seated = await seatPlayer(h, operator, 5_000_000n);
    await seated.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const counter = countWrites(serviceEndOf(seated));
    const before = seated.player.messages.length;

    const ack = await seated.player.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
    counter.stop();

    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    expect(seated.player.messages.slice(before).map((m) => m.event)).to.deep.equal(['bet_placed', 'balance_update']);
    expect(counter.writes()).to.equal(1);
    seated.player.close();
  });

  it('round_state RESULT and round_result in one write, RESULT first', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 3000, rollingWindowMs: 400 });
    const seated = await seatPlayer(h, operator, 5_000_000n);
    await seated.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const ack = await seated.player.request('place_bet', { side: 'HIGH', amountMicro: '1000000' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await seated.player.next('round_state', (p) => p.phase === 'ROLLING');
    const counter = countWrites(serviceEndOf(seated));
    const before = seated.player.messages.length;

    await seated.player.next('round_result', (p) => p.roundId === ack.roundId);
    counter.stop();

    const arrived = seated.player.messages.slice(before).map((m) => (m.event === 'round_state' ? `round_state ${m.payload.phase}` : m.event));
    expect(arrived).to.deep.equal(['round_state RESULT', 'round_result']);
    expect(counter.writes()).to.equal(1);
    seated.player.close();
  });

  it('a new cycle: round_state PENDING and BETTING_OPEN in one write, PENDING first', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 600 });
    const seated = await seatPlayer(h, operator, 5_000_000n);
    await seated.player.waitFor('round_state', (p) => p.phase === 'COOLDOWN');
    const counter = countWrites(serviceEndOf(seated));
    const before = seated.player.messages.length;

    await seated.player.next('round_state', (p) => p.phase === 'BETTING_OPEN');
    counter.stop();

    const arrived = seated.player.messages.slice(before).map((m) => `${m.event} ${m.payload.phase}`);
    expect(arrived).to.deep.equal(['round_state PENDING', 'round_state BETTING_OPEN']);
    expect(counter.writes()).to.equal(1);
    seated.player.close();
  });
});
