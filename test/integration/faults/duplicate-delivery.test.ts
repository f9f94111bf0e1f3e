import { expect } from 'chai';
import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { BetDesk } from '../../../src/shared/game/bets/debit.js';
import { WalletJobDesk } from '../../../src/shared/game/wallet-jobs/wallet-jobs.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { QUEUES, queuePrefix } from '../../../src/shared/platform/queues.js';
import { startBetWorkers, workerConnection } from '../../../src/workers/pools.js';
import { POOLS, processorFor } from '../../../src/workers/registry.js';
import { bettingWindowWithRoom, seatPlayer, until } from '../../support/game.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { checkMoneyInvariants, waitForQuiescence } from '../../support/invariants.js';
import { Player } from '../../support/player.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';

// BullMQ delivers at least once: the same bet or wallet job may run twice at
// once, or again after its worker stalled or died with the wallet call in flight. Every
// handler is fenced on its row's state and every movement keeps its transactionUuid, so
// nothing is booked twice (contract 3.2, 4.3, 7.1). The service runs in this process without
// the bet and settle pools: the test delivers the jobs the service queued to the processor
// production's workers run (the job registry, src/workers/registry.ts), or to workers built
// around it, and then to the real bet pool.

const FUNDS = 10_000_000n;
const STAKE = 1_000_000n;
// contract 8.4 with the defaults: 2 x stake minus 3 % commission
const WIN = 1_940_000n;
// D2 weights: the side that always comes up
const LOW_LOSES = { lowWeight: 0n, highWeight: 1n };
const LOW_WINS = { lowWeight: 1n, highWeight: 0n };

type Seat = { player: Player; playerRef: string; sessionId: string };

describe('faults: the same job delivered twice', function () {
  this.timeout(60_000);
  let h: Harness;
  let proxy: TcpProxy;
  const players: Player[] = [];
  before(async () => {
    // No bet and no settle pool: this test runs their handlers. The wallet call timeout is
    // long so that a call "in flight" stays so until the test ends it; a key prefix of its
    // own keeps every other suite's bet jobs away from the worker made below.
    h = await startHarness({ WALLET_CALL_TIMEOUT_MS: '20000', REDIS_KEY_PREFIX: uniqueId('rgs-dup') }, ['api', 'realtime', 'scheduler', 'rollback']);
    const wallet = new URL(h.wallet.url);
    proxy = await startTcpProxy({ target: { host: wallet.hostname, port: Number(wallet.port) } });
  });
  after(async () => {
    for (const player of players) player.close();
    await h?.close();
    await proxy?.close();
  });
  afterEach(() => {
    for (const endpoint of ['bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
  });

  // An operator whose wallet is the simulator behind the proxy, so that a test can cut a call
  // that the simulator holds.
  async function table(weights: { lowWeight: bigint; highWeight: bigint }): Promise<TestOperator> {
    const operator = await h.onboard({ walletUrl: proxy.via(h.wallet.url) });
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 2000, rollingWindowMs: 200, cooldownMs: 200, ...weights });
    return operator;
  }

  // A funded player, connected, in a betting window with at least a second to run.
  async function seat(operator: TestOperator): Promise<Seat> {
    const { player, playerRef, sessionId } = await seatPlayer(h, operator, FUNDS);
    players.push(player);
    await bettingWindowWithRoom(player, 1000, 10_000);
    return { player, playerRef, sessionId };
  }

  // The player bets: realtime places the bet (8.2 rules, the PENDING row) and queues its job,
  // which no worker here takes until the test delivers it. acked: the player's place_bet
  // acknowledgement, which the first verdict a delivery sends back answers.
  async function queuedBet(s: Seat) {
    const acked = s.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() }, 40_000);
    const bet = await until('the bet row', () => h.svc.db.bet.findFirst({ where: { sessionId: s.sessionId } }));
    const job = await until('the bet job', () => h.svc.queues.bet.getJob(bet.id));
    return { betId: bet.id, job, acked };
  }

  // one delivery of a queued job, as one worker of its pool runs it (a desk of its own)
  const betDelivery = (job: Job) => processorFor('bet', { svc: h.svc, desk: new BetDesk(h.svc) })(job);
  const settleDelivery = (job: Job) => processorFor('settle', { svc: h.svc, desk: new WalletJobDesk(h.svc) })(job);

  // A bet worker whose processor and concurrency are production's (a desk of its own) and
  // whose locking the test chooses; deliveries: what each delivery it ran returned, in order.
  function betWorker(locking: Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'skipLockRenewal'>) {
    const connection = workerConnection(h.svc);
    const process = processorFor('bet', { svc: h.svc, desk: new BetDesk(h.svc) });
    const deliveries: Promise<unknown>[] = [];
    const worker = new Worker(
      QUEUES.bet.name,
      (job) => {
        const delivery = process(job);
        deliveries.push(delivery);
        return delivery;
      },
      { connection, prefix: queuePrefix(h.svc.config.redisKeyPrefix, 'bet'), concurrency: POOLS.bet.concurrency, ...locking },
    );
    // once its lock or its connection is gone it cannot record the job's end
    worker.on('error', () => undefined);
    return { worker, connection, deliveries };
  }

  const requestsFor = (endpoint: 'bet' | 'win' | 'rollback', transactionUuid: string) =>
    h.wallet.requests.filter((r) => r.endpoint === endpoint && (r.body as { transactionUuid?: string } | undefined)?.transactionUuid === transactionUuid);
  const answers = (endpoint: 'bet' | 'win', transactionUuid: string) =>
    requestsFor(endpoint, transactionUuid)
      .map((r) => (typeof r.response === 'object' ? r.response.status : r.response))
      .sort();
  const movements = (s: Seat) => h.wallet.transactions.filter((t) => t.playerRef === s.playerRef).map((t) => [t.type, t.amountMicro]);

  // Messages reach players through one Redis pub/sub connection, in order: once a marker sent
  // now has arrived, so has everything the handlers emitted before it.
  async function delivered(s: Seat) {
    const marker = uniqueId('marker');
    // a message outside the player channel's map, sent by the test only
    h.svc.emitter.toSession(s.sessionId, 'test_marker' as never, { marker } as never);
    await s.player.waitFor('test_marker', (p) => p.marker === marker);
    return (event: string, where: (payload: any) => boolean = () => true) => s.player.messages.filter((m) => m.event === event && where(m.payload)).length;
  }

  async function expectMoneyRight(operator: TestOperator) {
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 15_000 });
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
  }

  const completedRollbackOf = (betId: string) =>
    until('the rollback completed', async () => {
      const jobs = await h.svc.db.walletJob.findMany({ where: { betId, endpoint: 'rollback' } });
      return jobs.length > 0 && jobs.every((job) => job.completedAt) ? jobs : null;
    });

  it('a bet job delivered twice at once: one debit, one round, both deliveries answered with it', async () => {
    const operator = await table(LOW_LOSES);
    const s = await seat(operator);
    const { betId, job, acked } = await queuedBet(s);
    // both debits are at the wallet together: each answer is held back a little
    h.wallet.setFault('bet', { kind: 'delay', ms: 300 }, 2);
    const acks = await Promise.all([betDelivery(job), betDelivery(job)]);
    await job.remove();

    const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } });
    expect(bet.status).to.equal('ACCEPTED');
    expect(acks).to.deep.equal([[{ ok: true, betId, roundId: bet.roundId }], [{ ok: true, betId, roundId: bet.roundId }]]);
    expect(await acked).to.deep.equal({ ok: true, betId, roundId: bet.roundId });
    // 4.3: the same movement twice; the wallet booked it once (the second is a duplicate)
    expect(answers('bet', bet.betTransactionUuid)).to.deep.equal(['RS_ERROR_DUPLICATE_TRANSACTION', 'RS_OK']);
    expect(movements(s)).to.deep.equal([['bet', STAKE]]);
    // D1: one round, and the session's nonce advanced once (no gap)
    const rounds = await h.svc.db.round.findMany({ where: { betId } });
    expect(rounds.map((r) => [r.id, r.nonce])).to.deep.equal([[bet.roundId, 0]]);
    const seed = await h.svc.db.seed.findFirstOrThrow({ where: { sessionId: s.sessionId, current: true } });
    expect(seed.nextNonce).to.equal(1);
    const count = await delivered(s);
    expect(count('bet_placed'), 'the player is told once').to.equal(1);

    await expectMoneyRight(operator);
    expect(await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } })).to.include({ status: 'SETTLED', payoutMicro: 0n });
    expect(h.wallet.balanceOf(s.playerRef, 'EUR')).to.equal(FUNDS - STAKE);
  });

  it('a settle job delivered twice at once on a win: credited once, settled once, the player told once', async () => {
    const operator = await table(LOW_WINS);
    const s = await seat(operator);
    const { betId, job: betJob } = await queuedBet(s);
    expect(await betDelivery(betJob)).to.have.deep.nested.property('[0].ok', true);
    await betJob.remove();
    // the round settles: its win is a wallet job row, and the queue job that carries it (with
    // the cycle's other wins, here none) waits, as no settle worker runs here
    const job = await until('the win job', () => h.svc.db.walletJob.findFirst({ where: { betId, endpoint: 'win' } }), 10_000);
    const queued = await until('the settle job that carries it', async () =>
      (await h.svc.queues.settle.getJobs(['waiting', 'delayed'])).find((j) => j.data.walletJobIds.includes(job.id)),
    );
    h.wallet.setFault('win', { kind: 'delay', ms: 300 }, 2);
    const returned = await Promise.all([settleDelivery(queued), settleDelivery(queued)]);
    await queued.remove();

    expect(returned, 'both deliveries ran the batch to its end').to.deep.equal(['batch', 'batch']);
    // both completed the wallet job: neither asked for a retry, which is queued on its own
    expect(await h.svc.queues.settle.getJob(job.id), 'no retry queued').to.equal(undefined);
    expect(answers('win', job.transactionUuid)).to.deep.equal(['RS_ERROR_DUPLICATE_TRANSACTION', 'RS_OK']);
    expect(movements(s)).to.deep.equal([['bet', STAKE], ['win', WIN]]);
    const done = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
    expect(done).to.include({ attempts: 1, lastError: null, nextAttemptAt: null });
    expect(await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } })).to.include({ status: 'SETTLED', payoutMicro: WIN });
    const count = await delivered(s);
    expect(count('balance_update', (p) => p.balanceMicro === (FUNDS - STAKE + WIN).toString()), 'the player is told once').to.equal(1);

    await expectMoneyRight(operator);
    expect(h.wallet.balanceOf(s.playerRef, 'EUR')).to.equal(FUNDS - STAKE + WIN);
  });

  it('a stalled bet job run again while its first debit is in flight: REJECTED wallet_timeout, debited once, refunded once', async () => {
    const operator = await table(LOW_LOSES);
    const s = await seat(operator);
    // the first delivery's debit is booked and its answer held back
    h.wallet.setFault('bet', { kind: 'delay', ms: 60_000 }, 1);
    // a bet worker that stops renewing its job's lock, as one whose event loop is blocked:
    // the lock lapses a second after it took the job, and BullMQ hands the job out again
    // (to this same worker) while its first delivery still waits for the wallet
    const stalling = betWorker({ skipLockRenewal: true, lockDuration: 1000, stalledInterval: 1000 });
    try {
      const { betId, acked } = await queuedBet(s);
      const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } });
      await until('the first debit at the wallet', async () => requestsFor('bet', bet.betTransactionUuid).some((r) => r.response === 'pending'));
      const inFlight = await h.svc.db.walletCall.findMany({ where: { transactionUuid: bet.betTransactionUuid } });
      expect(inFlight.map((c) => [c.endpoint, c.respondedAt])).to.deep.equal([['bet', null]]);

      // contract 7.1: the redelivery finds the attempt and resolves the debit as uncertain
      // instead of sending it again
      await until('the job handed out again', async () => stalling.deliveries.length >= 2, 15_000);
      expect(await stalling.deliveries[1]).to.deep.equal([{ ok: false, reason: 'wallet_timeout' }]);
      expect(await acked).to.deep.equal({ ok: false, reason: 'wallet_timeout' });
      const rejected = await h.svc.db.bet.findUniqueOrThrow({ where: { id: betId } });
      expect(rejected).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
      expect(requestsFor('bet', bet.betTransactionUuid), 'no second debit').to.have.length(1);
      expect(await s.player.waitFor('bet_rejected')).to.include({ reason: 'wallet_timeout' });
      const [rollback] = await completedRollbackOf(betId);
      expect(rollback!.payload).to.include({ transactionUuid: rejected.rollbackTransactionUuid, referenceTransactionUuid: bet.betTransactionUuid });

      // the first delivery's call ends at last (its connection reset): the verdict stands
      proxy.resetAll();
      expect(await stalling.deliveries[0]).to.deep.equal([{ ok: false, reason: 'wallet_timeout' }]);
      await expectMoneyRight(operator);
      expect(await h.svc.db.walletJob.count({ where: { betId } }), 'one rollback').to.equal(1);
      expect(movements(s)).to.deep.equal([['bet', STAKE], ['rollback', STAKE]]);
      expect(h.wallet.balanceOf(s.playerRef, 'EUR')).to.equal(FUNDS);
    } finally {
      await stalling.worker.close(true);
      stalling.connection.disconnect();
    }
  });

  it('BullMQ redelivers the job of a bet worker that died mid-debit: resolved as uncertain and rolled back', async () => {
    const operator = await table(LOW_LOSES);
    const s = await seat(operator);
    h.wallet.setFault('bet', { kind: 'delay', ms: 60_000 }, 1);
    // a bet worker whose lock lapses a second after it stops renewing it
    const doomed = betWorker({ lockDuration: 1000, stalledInterval: 1000 });

    // the player bets: the realtime node queues the job and the doomed worker takes it
    const acked = s.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() }, 40_000);
    const bet = await until('the bet row', () => h.svc.db.bet.findFirst({ where: { sessionId: s.sessionId } }));
    await until('the debit at the wallet', async () => requestsFor('bet', bet.betTransactionUuid).some((r) => r.response === 'pending'));
    await doomed.worker.close(true);
    doomed.connection.disconnect();

    const workers = startBetWorkers(h.svc);
    try {
      expect(await acked).to.deep.equal({ ok: false, reason: 'wallet_timeout' });
      // the verdict reaches the player as soon as it is known; the job completes just after
      const job = await until('the bet job completed', async () => {
        const found = await h.svc.queues.bet.getJob(bet.id);
        // read again once completed: the copy read before may predate its return value
        return (await found?.getState()) === 'completed' ? h.svc.queues.bet.getJob(bet.id) : null;
      });
      expect(job!.stalledCounter, 'run again as a stalled job').to.equal(1);
      expect(job!.returnvalue).to.deep.equal([{ ok: false, reason: 'wallet_timeout' }]);
      expect(await h.svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } })).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
      expect(requestsFor('bet', bet.betTransactionUuid), 'no second debit').to.have.length(1);
      await completedRollbackOf(bet.id);

      // the dead worker's call ends: nothing changes
      proxy.resetAll();
      expect(await doomed.deliveries[0]).to.deep.equal([{ ok: false, reason: 'wallet_timeout' }]);
      await expectMoneyRight(operator);
      expect(movements(s)).to.deep.equal([['bet', STAKE], ['rollback', STAKE]]);
      expect(h.wallet.balanceOf(s.playerRef, 'EUR')).to.equal(FUNDS);
    } finally {
      await workers.close();
    }
  });
});
