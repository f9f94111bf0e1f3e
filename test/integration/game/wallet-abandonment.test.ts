import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { WALLET_RETRY_BUDGET_MS } from '../../../src/shared/platform/queues.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { seatPlayer, until } from '../../support/game.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// The end of the wallet retry schedule (contract 3.4, 8.1; the schedule itself is in
// test/unit/wallet-retry-delay.test.ts): give up after 24 hours, leaving the job as a ticket
// for a human (`rgs jobs abandoned`, D11). A win that exhausts its budget refunds the stake
// and voids the round (contract 4.2).

const BIN = fileURLToPath(new URL('../../../bin/rgs.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

// `rgs jobs abandoned`, run as the administrator runs it
function abandonedJobs(): Promise<{ jobs: Record<string, unknown>[] }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, 'jobs', 'abandoned'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: TEST_DATABASE_URL }, timeout: 15_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`rgs jobs abandoned failed: ${stderr}`));
      resolve(JSON.parse(stdout));
    });
  });
}

describe('wallet job abandonment after 24 hours (contract 3.4, 4.2)', function () {
  this.timeout(30_000);
  const START = 5_000_000n;
  const STAKE = 1_000_000n;
  let h: Harness;
  let shifted = 0;
  const shift = (ms: number) => {
    h.shiftClock(ms);
    shifted += ms;
  };

  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h?.close());
  afterEach(() => {
    // the clock is the whole service's: put it back for the next test
    h.shiftClock(-shifted);
    shifted = 0;
    for (const endpoint of ['bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
  });


  // rgs_wallet_jobs{endpoint, state} as /metrics shows it
  const walletJobsGauge = async (endpoint: string, state: string) => {
    const text = await (await fetch(`${h.baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`rgs_wallet_jobs{endpoint="${endpoint}",state="${state}"}`));
    return Number(line?.split(' ').pop());
  };

  const jobWith = (id: string, ready: (job: { attempts: number; abandonedAt: Date | null; completedAt: Date | null }) => boolean, what: string) =>
    until(what, async () => {
      const job = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id } });
      return ready(job) ? job : null;
    });

  async function operatorRolling(side: 'LOW' | 'HIGH'): Promise<TestOperator> {
    const operator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {
      bettingWindowMs: 600,
      rollingWindowMs: 200,
      cooldownMs: 200,
      lowWeight: side === 'LOW' ? 1n : 0n,
      highWeight: side === 'HIGH' ? 1n : 0n,
    });
    return operator;
  }

  async function betOnce(side: 'LOW' | 'HIGH') {
    const operator = await operatorRolling(side);
    const { player, playerRef, sessionId } = await seatPlayer(h, operator, START);
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId } });
    return { player, playerRef, ack, bet };
  }

  it('a rollback failing for 24 hours is abandoned (not before) and listed for a human', async () => {
    h.wallet.setFault('bet', { kind: 'http', httpStatus: 500 }, 1);
    h.wallet.setFault('rollback', { kind: 'http', httpStatus: 500 });
    const { player, bet, ack } = await betOnce('HIGH');
    expect(ack).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
    player.close();
    const job = await until('the rollback job', () => h.svc.db.walletJob.findFirst({ where: { betId: bet.id, endpoint: 'rollback' } }));

    await jobWith(job.id, (j) => j.attempts === 1, 'the first failed attempt');
    // just inside the budget: still retried
    shift(WALLET_RETRY_BUDGET_MS - 60 * 60_000);
    const second = await jobWith(job.id, (j) => j.attempts === 2, 'the second failed attempt');
    expect(second).to.include({ abandonedAt: null, completedAt: null, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)' });
    expect(second.nextAttemptAt).to.be.instanceOf(Date);
    // pending for hours: the stuck-rollback alert metric counts it
    expect(await walletJobsGauge('rollback', 'stuck')).to.be.at.least(1);

    // past 24 hours since the job was created: the next failure gives up
    shift(60 * 60_000 + 60_000);
    const abandoned = await jobWith(job.id, (j) => j.abandonedAt !== null, 'abandonment');
    expect(abandoned).to.include({ attempts: 3, completedAt: null, nextAttemptAt: null, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)', purpose: 'uncertain_bet' });
    expect(abandoned.abandonedAt!.getTime() - abandoned.createdAt.getTime()).to.be.at.least(WALLET_RETRY_BUDGET_MS);
    // the queue job ends: nothing is retried any more
    const state = await until('the queue job to finish', async () => {
      const queued = await h.svc.queues.rollback.getJob(job.id);
      const current = queued ? await queued.getState() : undefined;
      return current === 'completed' || current === 'failed' ? current : null;
    });
    expect(state).to.equal('completed');
    expect(h.wallet.requests.filter((r) => r.endpoint === 'rollback' && (r.body as { transactionUuid?: string }).transactionUuid === job.transactionUuid)).to.have.length(3);
    // a rollback's abandonment touches nothing else
    expect((await h.svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } })).status).to.equal('REJECTED');
    expect(await h.svc.db.walletJob.count({ where: { betId: bet.id } })).to.equal(1);

    // the metric is the database's count (other suites of the run leave abandoned jobs too,
    // which the moved clock may abandon meanwhile: the gauge lies between two counts)
    const countAbandoned = () => h.svc.db.walletJob.count({ where: { endpoint: 'rollback', abandonedAt: { not: null } } });
    const before = await countAbandoned();
    const gauge = await walletJobsGauge('rollback', 'abandoned');
    expect(gauge, 'the abandoned-jobs metric counts it').to.be.within(Math.max(before, 1), await countAbandoned());
    const listed = (await abandonedJobs()).jobs.find((j) => j.id === job.id);
    expect(listed).to.include({ endpoint: 'rollback', purpose: 'uncertain_bet', betId: bet.id, transactionUuid: job.transactionUuid, attempts: 3, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)', abandonedAt: abandoned.abandonedAt!.toISOString() });
    expect(h.wallet.violations).to.deep.equal([]);
  });

  it('a win failing for 24 hours is abandoned: bet and round VOIDED, the stake refunded by a win_exhausted rollback', async () => {
    h.wallet.setFault('win', { kind: 'http', httpStatus: 500 });
    const { player, playerRef, bet, ack } = await betOnce('LOW');
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const win = await until('the win job', () => h.svc.db.walletJob.findFirst({ where: { betId: bet.id, endpoint: 'win' } }));
    await jobWith(win.id, (j) => j.attempts === 1, 'the first failed win');
    player.close();
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START - STAKE);

    shift(WALLET_RETRY_BUDGET_MS + 60_000);
    const abandoned = await jobWith(win.id, (j) => j.abandonedAt !== null, 'abandonment of the win');
    expect(abandoned).to.include({ attempts: 2, completedAt: null, nextAttemptAt: null, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)' });

    // contract 4.2: the stake is refunded and the round voided; nothing is reversed for the win
    const voided = await h.svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } });
    expect(voided.status).to.equal('VOIDED');
    expect(voided.voidedAt).to.be.instanceOf(Date);
    expect(voided.rollbackTransactionUuid).to.be.a('string');
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: bet.roundId } });
    expect(round).to.include({ state: 'VOIDED', voidReason: 'win_exhausted' });
    expect(round.voidedAt).to.be.instanceOf(Date);
    const pending = await h.svc.db.pendingRoundBet.findUniqueOrThrow({ where: { betId: bet.id } });
    expect(pending).to.include({ state: 'REFUNDED', resolutionReason: 'ROUND_VOIDED' });

    const refund = await until('the win_exhausted rollback', () => h.svc.db.walletJob.findFirst({ where: { betId: bet.id, endpoint: 'rollback' } }));
    expect(refund).to.include({ purpose: 'win_exhausted', transactionUuid: voided.rollbackTransactionUuid });
    expect(refund.payload).to.include({ referenceTransactionUuid: bet.betTransactionUuid, transactionUuid: voided.rollbackTransactionUuid });
    const refunded = await jobWith(refund.id, (j) => j.completedAt !== null, 'the refund');
    expect(refunded).to.include({ attempts: 1, abandonedAt: null, lastError: null });
    expect(h.wallet.transactions.filter((t) => t.playerRef === playerRef).map((t) => [t.type, t.amountMicro, t.referenceTransactionUuid ?? null])).to.deep.equal([
      ['bet', STAKE, null],
      ['rollback', STAKE, bet.betTransactionUuid],
    ]);
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START);

    const listed = (await abandonedJobs()).jobs.find((j) => j.id === win.id);
    expect(listed).to.include({ endpoint: 'win', purpose: 'win', betId: bet.id, transactionUuid: voided.winTransactionUuid, attempts: 2 });
    expect(h.wallet.violations).to.deep.equal([]);
  });
});
