import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { startDeployment, type Deployment } from '../../support/deployment.js';
import { until } from '../../support/game.js';

// A shutdown whose one step fails (D12, platform/shutdown.ts): the public listener's close
// throws (test/support/failing-listener-close.mjs). The steps after it still run: the bet
// worker lets the debit at the wallet finish, and the process exits, with code 1, having
// logged the failed step by its name.
const FAILING_LISTENER_CLOSE = fileURLToPath(new URL('../../support/failing-listener-close.mjs', import.meta.url));

describe('faults: a failing step at shutdown', function () {
  this.timeout(90_000);
  let d: Deployment;
  before(async () => {
    d = await startDeployment();
    // node-a alone runs the bet workers, and takes its bets through the queue: the debit in
    // flight at SIGTERM is a job of its bet workers
    await d.start('node-a', 'api,realtime,bet', {
      BET_HANDOFF: 'queue',
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${FAILING_LISTENER_CLOSE}`].filter(Boolean).join(' '),
    });
    await d.start('node-b', 'api,realtime,scheduler,settle,rollback,webhooks');
  });
  after(() => d?.close());

  it('still drains the bet workers after the listener failed to close, logs the step and exits 1', async () => {
    const table = await d.table({ bettingWindowMs: 3000, lowWeight: 1n, highWeight: 0n });
    const seat = await table.seat(10_000_000n, 'node-b');
    await seat.player.next('round_state', (p) => p.phase === 'BETTING_OPEN', 15_000);
    // the debit is still at the wallet when SIGTERM arrives
    d.wallet.setFault('bet', { kind: 'delay', ms: 1500 }, 1);
    seat.player.socket.emit('place_bet', { side: 'LOW', amountMicro: '1000000' });
    await until('the debit at the wallet', async () => d.wallet.requests.some((r) => r.endpoint === 'bet' && r.response === 'pending'));

    const node = d.processes.get('node-a')!;
    await node.stop('SIGTERM');
    // the bet worker finished the debit before the exit: the bet was accepted, not left in flight
    const bet = await d.db.bet.findFirstOrThrow({ where: { sessionId: seat.sessionId } });
    expect(bet.status).to.equal('ACCEPTED');
    expect(node.logs.filter((l) => l.msg === 'jobs still running at shutdown are handed back to the queue'), 'nothing was left running').to.deep.equal([]);
    const failed = node.logs.filter((l) => l.msg === 'shutdown step failed');
    expect(failed.map((l) => [l.step, l.level]), 'the failed step, by its name, at error').to.deep.equal([['public listener', 50]]);
    expect(node.child.exitCode, 'a step failed').to.equal(1);
    const result = await seat.player.waitFor('round_result', (p) => p.betId === bet.id, 15_000);
    expect(result).to.include({ won: true, payoutMicro: '1940000' });
    expect(await d.settle()).to.deep.equal([]);
    expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(10_000_000n - 1_000_000n + 1_940_000n);
  });
});
