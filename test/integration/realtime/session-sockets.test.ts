import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { SOCKETS_PER_SESSION, SOCKET_TTL_MS, admitSocket, forgetSocket, socketsKey } from '../../../src/shared/game/players/session-sockets.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer, until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// D24: one token cannot open unlimited sockets. At most 3 live sockets per session across
// the deployment (counted in Redis); a 4th closes the oldest with session_ended "replaced".
// The connects of one session make at most one /wallet/balance call per 5 s between them.
describe('sockets per session (D24)', function () {
  this.timeout(60_000);
  let h: Harness;
  const players: Player[] = [];

  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  afterEach(() => {
    for (const player of players.splice(0)) player.close();
  });
  after(() => h.close());

  const balanceCallsOf = (playerRef: string) =>
    h.wallet.requests.filter((r) => r.endpoint === 'balance' && (r.body as { playerRef?: unknown } | undefined)?.playerRef === playerRef);

  it('40 sockets with one token: 3 stay live, the others (the first one too) get session_ended replaced; one balance call per 5 s', async () => {
    const operator = await operatorWith(h);
    const first = await seatPlayer(h, operator, 10_000_000n);
    players.push(first.player);
    expect(first.connected.balanceMicro).to.equal('10000000');
    // the launch's own call, then the first connect's
    expect(balanceCallsOf(first.playerRef)).to.have.length(2);

    const more = await Promise.all(
      Array.from({ length: 39 }, async () => {
        const player = await Player.connect(h.baseUrl, first.token);
        players.push(player);
        return player;
      }),
    );
    const all = [first.player, ...more];
    // every socket hears either `connected` and stays, or session_ended and is closed
    await until('all but 3 sockets replaced', async () => all.filter((p) => p.messages.some((m) => m.event === 'disconnect')).length >= all.length - SOCKETS_PER_SESSION);
    const live = all.filter((p) => p.socket.connected);
    expect(live).to.have.length(SOCKETS_PER_SESSION);
    for (const player of all.filter((p) => !p.socket.connected)) {
      const ended = await player.waitFor('session_ended');
      expect(ended).to.include({ reason: 'replaced', serverSeedHash: first.connected.serverSeedHash });
      // D2: the session lives on: its seed is not revealed
      expect(ended).to.not.have.property('serverSeed');
      const events = player.messages.map((m) => m.event);
      expect(events.slice(events.indexOf('session_ended'))).to.deep.equal(['session_ended', 'disconnect']);
    }
    expect(first.player.socket.connected, 'the oldest socket is replaced').to.equal(false);

    // the connects shared the window's one call: no two connect calls within 5 s of each other
    const connectCalls = balanceCallsOf(first.playerRef).slice(1).map((r) => r.receivedAt.getTime());
    for (let i = 1; i < connectCalls.length; i++) expect(connectCalls[i]! - connectCalls[i - 1]!, 'between two connect balance calls').to.be.at.least(4_000);

    // the session is still served on its live sockets, and the operator still launches
    const ack = await live[0]!.request('rotate_seed', {});
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const launch = await operator.launch();
    expect(launch.status, launch.text).to.equal(200);
    const other = await Player.connect(h.baseUrl, launch.body.sessionToken);
    players.push(other);
    expect((await other.waitFor('connected')).balanceMicro).to.not.equal(undefined);
  });

  it('a connect within 5 s of another makes no call and shows the window\'s balance, as the last balance_update changed it', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 2000, lowWeight: 0n, highWeight: 1n });
    const first = await seatPlayer(h, operator, 7_000_000n);
    players.push(first.player);
    const calls = balanceCallsOf(first.playerRef).length;
    const second = await Player.connect(h.baseUrl, first.token);
    players.push(second);
    const connected = await second.waitFor('connected');
    expect(connected).to.include({ sessionId: first.sessionId, balanceMicro: '7000000' });
    expect(balanceCallsOf(first.playerRef)).to.have.length(calls);
    // both sockets stay: two is within the bound
    expect(first.player.socket.connected && second.socket.connected).to.equal(true);

    // a lost bet: the balance the next connect shows is the one after the debit, whether it
    // comes from the window (kept by balance_update) or from a call in a new window
    await bettingWindowWithRoom(second, 800);
    const ack = await second.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await second.waitFor('balance_update', (p) => p.balanceMicro === '6000000');
    second.close();
    const third = await Player.connect(h.baseUrl, first.token);
    players.push(third);
    expect((await third.waitFor('connected')).balanceMicro).to.equal('6000000');
    expect(h.wallet.balanceOf(first.playerRef, 'EUR')).to.equal(6_000_000n);
  });

  // a node that died leaves its entries behind: they stop counting once not refreshed, and
  // never keep a new connection out
  it('entries of a dead node lapse: they do not count once older than the TTL', async () => {
    const sessionId = randomUUID();
    const now = Date.now();
    const old = now - SOCKET_TTL_MS - 1;
    for (const id of ['dead-1', 'dead-2', 'dead-3']) expect((await admitSocket(h.svc.redis, sessionId, id, old)).replaced).to.deep.equal([]);
    // within the TTL they count: a 4th replaces the oldest
    expect((await admitSocket(h.svc.redis, sessionId, 'alive-1', old + 1)).replaced).to.deep.equal(['dead-1']);
    // past it, the dead entries are dropped and replace nothing live
    const admitted = await admitSocket(h.svc.redis, sessionId, 'alive-2', now);
    expect(admitted.replaced).to.deep.equal([]);
    const third = await admitSocket(h.svc.redis, sessionId, 'alive-3', now + 1);
    expect(third.replaced).to.deep.equal([]);
    await forgetSocket(h.svc.redis, sessionId, third.entry);
    expect((await admitSocket(h.svc.redis, sessionId, 'alive-4', now + 2)).replaced).to.deep.equal([]);
    expect((await admitSocket(h.svc.redis, sessionId, 'alive-5', now + 3)).replaced).to.deep.equal([]);
    expect((await admitSocket(h.svc.redis, sessionId, 'alive-6', now + 4)).replaced).to.deep.equal(['alive-2']);
    // the key itself expires with its entries
    const ttl = await h.svc.redis.pttl(socketsKey(sessionId));
    expect(ttl).to.be.within(1, SOCKET_TTL_MS);
  });
});
