import { expect } from 'chai';
import { ALL_ROLES, startDeployment, type Deployment } from '../../support/deployment.js';
import { until } from '../../support/game.js';
import { Player } from '../../support/player.js';

// Graceful shutdown (D12, D30): SIGTERM stops intake, lets the job in flight finish,
// tells the players to reconnect, hands scheduler leadership over cleanly and exits within
// 10 s. The player reconnects with the same token to the other node and gets the current
// state; the round goes on (a clean handover is not a crash: nothing is voided).
describe('faults: graceful shutdown on SIGTERM', function () {
  this.timeout(90_000);
  let d: Deployment;
  before(async () => {
    d = await startDeployment();
    // node-a starts first and so leads the schedulers; it alone runs the bet workers, so
    // the debit in flight at SIGTERM is its own
    const a = await d.start('node-a', ALL_ROLES);
    await a.waitForLog((l) => l.msg === 'scheduler leadership taken');
    await d.start('node-b', 'api,realtime,scheduler,settle,rollback,webhooks');
  });
  after(() => d?.close());

  it('finishes the debit in flight, sends a reconnect hint, exits 0 within 10 s; the player carries on through the other node', async () => {
    const table = await d.table({ bettingWindowMs: 3000, lowWeight: 1n, highWeight: 0n });
    const seat = await table.seat(10_000_000n, 'node-a');
    await seat.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    // the debit is still at the wallet when SIGTERM arrives
    d.wallet.setFault('bet', { kind: 'delay', ms: 1500 }, 1);
    seat.player.socket.emit('place_bet', { side: 'LOW', amountMicro: '1000000' });
    await until('the debit at the wallet', async () => d.wallet.requests.some((r) => r.endpoint === 'bet' && r.response === 'pending'));

    const node = d.processes.get('node-a')!;
    const signalledAt = Date.now();
    await node.stop('SIGTERM');
    const tookMs = Date.now() - signalledAt;
    expect(node.child.exitCode, 'a clean exit').to.equal(0);
    expect(tookMs, 'D12: within 10 s').to.be.below(10_000);
    const restarting = seat.player.messages.findIndex((m) => m.event === 'service_restarting');
    const disconnected = seat.player.messages.findIndex((m) => m.event === 'disconnect');
    expect(restarting, 'the reconnect hint').to.be.at.least(0);
    expect(seat.player.messages[restarting]!.payload).to.include({ reconnect: true });
    expect(disconnected, 'then the socket closes').to.be.above(restarting);
    // node-a runs the realtime and the bet role: the debit was its own (debit.ts)
    const leftRunning = ['jobs still running at shutdown are handed back to the queue', 'debits still running at shutdown are left to recovery'];
    expect(node.logs.filter((l) => leftRunning.some((msg) => msg === l.msg)), 'nothing was left running').to.deep.equal([]);

    // the debit finished before the exit: the bet was accepted, not left in flight
    const bet = await d.db.bet.findFirstOrThrow({ where: { sessionId: seat.sessionId } });
    expect(bet.status).to.equal('ACCEPTED');

    const back = await Player.connect(d.url('node-b'), seat.token);
    const connected = await back.waitFor('connected');
    expect(connected.sessionId).to.equal(seat.sessionId);
    expect(connected.roundState).to.include({ cycleId: bet.cycleId });
    const result = await back.waitFor('round_result', (p) => p.betId === bet.id, 15_000);
    expect(result).to.include({ won: true, payoutMicro: '1940000' });
    back.close();

    const successor = d.processes.get('node-b')!;
    const election = await successor.waitForLog((l) => l.msg === 'scheduler recovered on election');
    expect(election.kind, 'a clean handover, not a crash').to.equal('handover');
    expect(await d.settle()).to.deep.equal([]);
    const round = await d.db.round.findUniqueOrThrow({ where: { id: bet.roundId } });
    expect(round.state).to.equal('SETTLED');
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(10_000_000n - 1_000_000n + 1_940_000n);
  });
});
