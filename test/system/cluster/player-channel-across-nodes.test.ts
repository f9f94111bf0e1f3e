import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { ALL_ROLES, startDeployment, type Deployment } from '../../support/deployment.js';
import { until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { signedRequest } from '../../support/signed-client.js';

// The player channel's session-wide rules hold across realtime nodes (D24, D28): the bound
// on live sockets is counted for the whole deployment, a replaced socket on another node is
// told so, and a session ended by one node's API reaches its sockets on the other, each
// told the retired seed.
describe('player channel across realtime nodes (D24, D28)', function () {
  this.timeout(90_000);
  let d: Deployment;
  const players: Player[] = [];

  before(async () => {
    d = await startDeployment();
    await d.start('web-1', ALL_ROLES);
    await d.start('web-2', 'api,realtime,bet');
  });
  after(async () => {
    for (const player of players.splice(0)) player.close();
    await d?.close();
  });

  const balanceCallsOf = (playerRef: string) =>
    d.wallet.requests.filter((r) => r.endpoint === 'balance' && (r.body as { playerRef?: unknown } | undefined)?.playerRef === playerRef);

  it('a 4th socket on another node replaces the oldest; termination on one node ends the sockets on the other', async () => {
    const table = await d.table();
    const seat = await table.seat(10_000_000n, 'web-1');
    players.push(seat.player);
    const hash = (await seat.player.waitFor('connected')).serverSeedHash as string;

    const others: Player[] = [];
    for (let i = 0; i < 3; i++) {
      const player = await Player.connect(d.url('web-2'), seat.token);
      players.push(player);
      others.push(player);
      await player.waitFor('connected');
    }
    const replaced = await seat.player.waitFor('session_ended');
    expect(replaced).to.include({ reason: 'replaced', serverSeedHash: hash });
    expect(replaced).to.not.have.property('serverSeed');
    await seat.player.waitFor('disconnect');
    expect(others.every((p) => p.socket.connected)).to.equal(true);
    // one balance call per 5 s between the connects, whichever node they reached
    const connectCalls = balanceCallsOf(seat.playerRef).slice(1).map((r) => r.receivedAt.getTime());
    for (let i = 1; i < connectCalls.length; i++) expect(connectCalls[i]! - connectCalls[i - 1]!).to.be.at.least(4_000);

    const terminated = await signedRequest(
      d.url('web-1'),
      { kid: table.operator.apiKeyId, secret: table.operator.apiSecret },
      'POST',
      `/v1/session/${seat.sessionId}/terminate`,
      {},
    );
    expect(terminated.status, terminated.text).to.equal(200);
    for (const player of others) {
      const ended = await player.waitFor('session_ended');
      expect(ended).to.include({ reason: 'terminated', serverSeedHash: hash });
      expect(createHash('sha256').update(ended.serverSeed, 'utf8').digest('hex')).to.equal(hash);
      await player.waitFor('disconnect');
      const events = player.messages.map((m) => m.event);
      expect(events.slice(events.indexOf('session_ended'))).to.deep.equal(['session_ended', 'disconnect']);
    }
    await until('the sockets closed', async () => others.every((p) => !p.socket.connected));
  });
});
