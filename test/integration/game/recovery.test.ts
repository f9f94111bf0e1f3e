import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { placeBets } from '../../../src/shared/game/bets/place.js';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { recoverPendingWork, resolveOrphanBets } from '../../../src/shared/game/rounds/recovery.js';
import { rollbackJobData } from '../../../src/shared/game/wallet-jobs/wallet-jobs.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, seatPlayer, tick, until } from '../../support/game.js';
import { ownStore } from '../../support/own-store.js';

// Work a stopped process or a lost queue left behind is re-derived from Postgres: a debit
// left PENDING is rolled back with its own transactionUuid, and a pending wallet job with
// no queue job is queued again. Nothing is booked twice.
describe('recovery of pending work from Postgres', function () {
  this.timeout(30_000);
  let h: Harness;
  // no scheduler: its sweeps would race the test's own recovery runs; the test opens the
  // betting window itself
  let store: Awaited<ReturnType<typeof ownStore>> | undefined;
  before(async () => {
    // the sweeps' counts below are their whole database's: in the worker's shared one, a
    // debit an earlier file left PENDING (its harness closed mid-debit) is counted too
    store = await ownStore('recovery_work');
    h = await startHarness(store.env, ROLES_WITHOUT_CLOCK);
  });
  after(async () => {
    await h?.close();
    await store?.drop();
  });

  // a session seated at an open betting window, and a bet row placed as the realtime node
  // places it, whose bet job never ran (its process died); with debitNode, placed as a node
  // that debits its own bets places it (debit.ts), whose debit never ran
  async function orphanedBet(balance: bigint, debitNode: string | null = null) {
    const operator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 5000, rollingWindowMs: 300, cooldownMs: 200 });
    const { player, playerRef, sessionId } = await seatPlayer(h, operator, balance);
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    const [placed] = await placeBets(h.svc, [{ sessionId, side: 'LOW', amountMicro: 1_000_000n }], debitNode);
    if (!placed!.ok) throw new Error(placed!.reason);
    player.close();
    return { playerRef, betId: placed!.ticket.betId, sessionId };
  }

  const age = (betId: string, ms = 60_000) => h.svc.db.bet.update({ where: { id: betId }, data: { createdAt: new Date(Date.now() - ms) } });

  it('rolls back a debit the wallet booked but nobody recorded, once', async () => {
    const { playerRef, betId } = await orphanedBet(5_000_000n);
    const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } });
    // the dead bet worker's call reached the wallet: the player was debited
    const debit = await h.svc.wallet.call({
      operatorId: bet.operatorId,
      endpoint: 'bet',
      transactionUuid: bet.betTransactionUuid,
      fields: { operatorId: bet.operatorId, playerRef, currency: 'EUR', gameCode: 'dice', transactionUuid: bet.betTransactionUuid, amountMicro: '1000000', roundId: bet.roundId },
    });
    expect(debit.status).to.equal('RS_OK');
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(4_000_000n);

    // a fresh PENDING bet may still be in flight: recovery leaves it alone
    expect((await recoverPendingWork(h.svc)).orphanBets).to.equal(0);
    await age(betId);
    expect((await recoverPendingWork(h.svc)).orphanBets).to.equal(1);
    expect((await recoverPendingWork(h.svc)).orphanBets, 'a second run finds nothing').to.equal(0);

    const rejected = await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } });
    expect(rejected).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
    await until('the refund', async () => (h.wallet.balanceOf(playerRef, 'EUR') === 5_000_000n ? true : null));
    const moves = h.wallet.transactions.filter((t) => t.playerRef === playerRef);
    expect(moves.map((t) => [t.type, t.amountMicro, t.referenceTransactionUuid ?? null])).to.deep.equal([
      ['bet', 1_000_000n, null],
      ['rollback', 1_000_000n, bet.betTransactionUuid],
    ]);
    // the bet worker, were it to run now, books nothing more
    expect(await h.svc.db.round.count({ where: { betId } })).to.equal(0);
    expect(h.wallet.violations).to.deep.equal([]);
  });

  it("leaves a bet its own node debits alone while the node's heartbeat lives, and rolls it back once the node is gone", async () => {
    // this harness runs the realtime and the bet role together: its node debits its own
    // bets and keeps its heartbeat (roles.ts)
    const live = await orphanedBet(5_000_000n, h.svc.emitter.nodeId);
    const gone = await orphanedBet(5_000_000n, 'a-node-that-stopped');
    const queued = await orphanedBet(5_000_000n);
    // older than a queued bet is given, younger than any wallet call can last
    for (const bet of [live, gone, queued]) await age(bet.betId, 10_000);
    const status = async (betId: string) => (await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } })).status;

    // the leader's every-second sweep looks only at the bets their own node debits
    expect(await resolveOrphanBets(h.svc, 'self-debited')).to.equal(1);
    expect([await status(live.betId), await status(gone.betId), await status(queued.betId)]).to.deep.equal(['PENDING', 'REJECTED', 'PENDING']);
    expect(await h.svc.db.bet.findUniqueOrThrow({ where: { id: gone.betId } })).to.include({ rejectReason: 'wallet_timeout' });
    // the rollback of a debit the wallet never booked completes with nothing moved
    await until('the rollback', async () => (await h.svc.db.walletJob.findFirst({ where: { betId: gone.betId, completedAt: { not: null } } })) ?? null);
    expect(h.wallet.balanceOf(gone.playerRef, 'EUR')).to.equal(5_000_000n);

    // the full sweep also finds the bet no queue job carries
    expect((await recoverPendingWork(h.svc)).orphanBets).to.equal(1);
    expect([await status(live.betId), await status(queued.betId)]).to.deep.equal(['PENDING', 'REJECTED']);

    // past the wallet timeout and a margin, no call can still be in flight, whatever the heartbeat says
    await age(live.betId);
    expect(await resolveOrphanBets(h.svc, 'self-debited')).to.equal(1);
    expect(await h.svc.db.bet.findUniqueOrThrow({ where: { id: live.betId } })).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
    expect(h.wallet.violations).to.deep.equal([]);
  });

  it('queues again a pending wallet job whose queue job was lost', async () => {
    const { playerRef, betId } = await orphanedBet(3_000_000n);
    const bet = await h.svc.db.bet.update({ where: { id: betId }, data: { status: 'REJECTED', rejectReason: 'wallet_timeout', rollbackTransactionUuid: randomUUID() } });
    // the row was written, the process died before queueing it
    const job = await h.svc.db.walletJob.create({ data: rollbackJobData(bet, bet.rollbackTransactionUuid!, 'uncertain_bet', new Date()) });
    // a row this fresh is about to be queued by whoever wrote it: left to them
    await recoverPendingWork(h.svc);
    expect(await h.svc.queues.rollback.getJob(job.id), 'not queued while fresh').to.equal(undefined);
    await h.svc.db.walletJob.update({ where: { id: job.id }, data: { createdAt: new Date(Date.now() - 60_000) } });
    expect((await recoverPendingWork(h.svc)).walletJobs).to.be.at.least(1);
    const done = await until('the rollback job to complete', async () => {
      const row = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
      return row.completedAt ? row : null;
    });
    expect(done.attempts).to.equal(1);
    const calls = h.wallet.requests.filter((r) => (r.body as { transactionUuid?: string } | null)?.transactionUuid === job.transactionUuid);
    expect(calls).to.have.length(1);
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(3_000_000n);
    // running it again while nothing is pending queues nothing for this job
    await recoverPendingWork(h.svc);
    expect(h.wallet.requests.filter((r) => (r.body as { transactionUuid?: string } | null)?.transactionUuid === job.transactionUuid)).to.have.length(1);
  });
});
