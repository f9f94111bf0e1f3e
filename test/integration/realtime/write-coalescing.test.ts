import type { Socket as TcpSocket } from 'node:net';
import { expect } from 'chai';
import { operatorWith, seatPlayer, type SeatedPlayer } from '../../support/game.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// src/realtime/write-coalescing.ts: the messages a player gets at one moment leave
// the service in one socket write, in the order they were sent. Writes are counted on the
// service's end of the player's TCP connection (the service runs in this process).
describe('player messages of one moment, one socket write', function () {
  this.timeout(30_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
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

  // what reaches the player while `action` runs, and in how many writes the service sent it
  // (Node's stream calls _write for one chunk, _writev for several written at once)
  async function duringOneMoment<T>(seated: SeatedPlayer, action: () => Promise<T>) {
    const tcp = serviceEndOf(seated) as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
    const { _write, _writev } = tcp;
    let writes = 0;
    tcp._write = (...args) => {
      writes += 1;
      _write.apply(tcp, args);
    };
    tcp._writev = (...args) => {
      writes += 1;
      _writev.apply(tcp, args);
    };
    const before = seated.player.messages.length;
    try {
      const result = await action();
      return { result, arrived: seated.player.messages.slice(before), writes };
    } finally {
      tcp._write = _write;
      tcp._writev = _writev;
    }
  }

  it('an accepted bet: bet_placed, balance_update and the ack in one write, in that order', async () => {
    // a long window: no phase change reaches the player while the bet is handled
    const operator = await operatorWith(h, { bettingWindowMs: 5000 });
    const seated = await seatPlayer(h, operator, 5_000_000n);
    await seated.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const { result: ack, arrived, writes } = await duringOneMoment(seated, () =>
      seated.player.request('place_bet', { side: 'LOW', amountMicro: '1000000' }),
    );

    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    expect(arrived.map((m) => m.event)).to.deep.equal(['bet_placed', 'balance_update']);
    expect(writes).to.equal(1);
    seated.player.close();
  });

  it('round_state RESULT and round_result in one write, RESULT first', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 3000, rollingWindowMs: 400 });
    const seated = await seatPlayer(h, operator, 5_000_000n);
    await seated.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const ack = await seated.player.request('place_bet', { side: 'HIGH', amountMicro: '1000000' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await seated.player.next('round_state', (p) => p.phase === 'ROLLING');
    const { arrived, writes } = await duringOneMoment(seated, () => seated.player.next('round_result', (p) => p.roundId === ack.roundId));

    expect(arrived.map((m) => (m.event === 'round_state' ? `round_state ${m.payload.phase}` : m.event))).to.deep.equal([
      'round_state RESULT',
      'round_result',
    ]);
    expect(writes).to.equal(1);
    seated.player.close();
  });

  it('a cycle nobody bet in: round_state RESULT and COOLDOWN in one write, RESULT first', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 600, rollingWindowMs: 400 });
    const seated = await seatPlayer(h, operator, 5_000_000n);
    const rolling = await seated.player.waitFor('round_state', (p) => p.phase === 'ROLLING');
    const { arrived, writes } = await duringOneMoment(seated, () =>
      seated.player.next('round_state', (p) => p.cycleId === rolling.cycleId && p.phase === 'COOLDOWN'),
    );

    expect(arrived.map((m) => `${m.event} ${m.payload.phase}`)).to.deep.equal(['round_state RESULT', 'round_state COOLDOWN']);
    expect(writes).to.equal(1);
    seated.player.close();
  });

  it('a new cycle: round_state PENDING and BETTING_OPEN in one write, PENDING first', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 600 });
    const seated = await seatPlayer(h, operator, 5_000_000n);
    await seated.player.waitFor('round_state', (p) => p.phase === 'COOLDOWN');
    const { arrived, writes } = await duringOneMoment(seated, () => seated.player.next('round_state', (p) => p.phase === 'BETTING_OPEN'));

    expect(arrived.map((m) => `${m.event} ${m.payload.phase}`)).to.deep.equal(['round_state PENDING', 'round_state BETTING_OPEN']);
    expect(writes).to.equal(1);
    seated.player.close();
  });
});
