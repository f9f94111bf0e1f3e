import { expect } from 'chai';
import pg from 'pg';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, seatPlayer, tick, until, type SeatedPlayer } from '../../support/game.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { roundFixtures } from '../../support/round-fixtures.js';
import { signedRequest } from '../../support/signed-client.js';

// D37: a node past its load bound refuses new work at once, service_busy, instead of
// queueing it behind the work it already has; what it accepted before goes on, and
// intake resumes by itself once it has caught up.

const STAKE = '1000000';
const bet = (seat: SeatedPlayer) => seat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE });
const debitsOf = (h: Harness, seat: SeatedPlayer) =>
  h.wallet.requests.filter((r) => r.endpoint === 'bet' && (r.body as { playerRef?: string }).playerRef === seat.playerRef).length;

const BET_BOUND_MS = 1000;

describe('overload: bets past the intake bound (D37)', function () {
  this.timeout(30_000);
  let h: Harness;
  let locker: pg.Client;
  before(async () => {
    // no clock: the betting window stays open until the test moves it. The bound is well
    // above the loop's stalls on a loaded box (env.ts), which would refuse the bets that must
    // be taken: the test builds a queue wait past it itself
    h = await startHarness({ OVERLOAD_DELAY_MS: String(BET_BOUND_MS) }, ROLES_WITHOUT_CLOCK);
    locker = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await locker.connect();
  });
  after(async () => {
    await locker?.end();
    await h?.close();
  });

  it('refuses a bet service_busy at once while earlier bets wait past the bound for Postgres, and takes it once they are through', async () => {
    // a window no bet here can outlast
    const operator = await operatorWith(h, { bettingWindowMs: 60_000 });
    const seats = [];
    // the process's start-up (and its warm-up after) is not overload: the gate acts after it
    await until('the start-up over', async () => h.svc.overload.warm());
    await until('the node idle', async () => !h.svc.overload.busy());
    for (let i = 0; i < 4; i++) seats.push(await seatPlayer(h, operator, 10_000_000n));
    const [first, second, third, late] = seats as [SeatedPlayer, SeatedPlayer, SeatedPlayer, SeatedPlayer];
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });

    // Postgres takes no bet rows until the lock goes: the placements' two flushes wait for
    // it, and the third bet waits in the node's queue behind them
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE bets IN SHARE MODE');
    let accepted: Promise<any>[];
    try {
      accepted = [bet(first)];
      await until('the first flush', async () => h.svc.overload.state().queueWaitMs === 0 && (await blockedInserts()) >= 1);
      accepted.push(bet(second));
      await until('the second flush', async () => (await blockedInserts()) >= 2);
      accepted.push(bet(third));
      await until('the third bet waiting past the bound', async () => h.svc.overload.state().queueWaitMs > BET_BOUND_MS);

      const refused = await bet(late);
      expect(refused).to.deep.equal({ ok: false, reason: 'service_busy' });
      expect(await late.player.waitFor('bet_rejected')).to.include({ reason: 'service_busy' });
      // answered while the lock still holds the others: refused before any statement
      expect(await blockedInserts()).to.equal(2);
    } finally {
      await locker.query('COMMIT');
    }
    const acks = await Promise.all(accepted);
    expect(acks.map((a) => a.ok)).to.deep.equal([true, true, true]);
    // no bet row and no wallet call for the refused bet
    expect(await h.svc.db.bet.count({ where: { sessionId: late.sessionId } })).to.equal(0);
    expect(debitsOf(h, late)).to.equal(0);

    // caught up: the same player's next bet is taken in the same round
    await until('the node caught up', async () => !h.svc.overload.busy());
    const retried = await bet(late);
    expect(retried.ok, JSON.stringify(retried)).to.equal(true);
    expect(debitsOf(h, late)).to.equal(1);
    const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text();
    expect(metrics).to.match(/^rgs_overload_refusals_total\{kind="bet"\} 1$/m);
  });

  // the statements waiting for the lock on bets (the placements'), seen from Postgres
  async function blockedInserts(): Promise<number> {
    const { rows } = await locker.query<{ n: number }>(`SELECT count(DISTINCT pid)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'bets'::regclass`);
    return rows[0]!.n;
  }
});

// the process's loop runs late turn after turn, as it does when work comes faster than it
// finishes; the returned function stops it
function hogTheLoop(): () => void {
  const hog = setInterval(() => {
    const heldUntil = performance.now() + 150;
    while (performance.now() < heldUntil);
  }, 5);
  return () => clearInterval(hog);
}

describe('overload: operator calls past the bound (D37)', function () {
  this.timeout(30_000);
  let h: Harness;
  const logLines: string[] = [];
  before(async () => {
    h = await startHarness({ OVERLOAD_DELAY_MS: '50' }, ['api'], { logLines });
  });
  after(() => h?.close());

  it('answers the calls that start work 503 service_busy with Retry-After while the event loop is behind, serves the reads of one round, logs the refusals, and serves again once it has caught up', async () => {
    const operator = await h.onboard();
    const fixtures = roundFixtures(h.svc);
    const round = await fixtures.round(await fixtures.session(operator.operatorId));
    await until('the start-up over', async () => h.svc.overload.warm());
    const stop = hogTheLoop();
    let launch, listing, read;
    try {
      await until('the loop counted late', async () => h.svc.overload.busy());
      launch = await operator.launch({ mode: 'demo' });
      listing = await operator.request('GET', '/v1/rounds?from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z');
      read = await operator.request('GET', `/v1/rounds/${round.roundId}`);
    } finally {
      stop();
    }
    expect(launch.status, launch.text).to.equal(503);
    expect(launch.body).to.deep.include({ error: 'service_busy', retryAfterSeconds: 1 });
    expect(launch.headers.get('retry-after')).to.equal('1');
    expect(await h.svc.db.session.count({ where: { operatorId: operator.operatorId, mode: 'DEMO' } })).to.equal(0);
    expect(listing.status, listing.text).to.equal(503);
    expect(listing.body).to.deep.include({ error: 'service_busy' });
    // a read of one record costs about what its refusal would: served, busy or not
    expect(read.status, read.text).to.equal(200);
    expect(read.body).to.include({ roundId: round.roundId });

    // the operator engineer sees the overload in the log: one line for both refusals, the
    // first, with what was past the bound
    const refusals = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'overload: work refused service_busy');
    expect(refusals).to.have.length(1);
    expect(refusals[0]).to.include({ level: 40, kind: 'operator_call', refused: 1, reason: 'loop_delay', boundMs: 50 });
    expect(refusals[0].loopDelayMs).to.be.above(50);
    const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text();
    expect(metrics).to.match(/^rgs_overload_refusals_total\{kind="operator_call"\} 2$/m);

    // health stays open: an orchestrator must not restart a busy process
    expect((await fetch(`${h.baseUrl}/healthz`)).status).to.equal(200);
    await until('the loop caught up', async () => !h.svc.overload.busy());
    const again = await operator.launch({ mode: 'demo' });
    expect(again.status, again.text).to.equal(200);
  });

  it('refuses nothing because of its own start-up: a process whose loop runs late all through it and its first requests serves them', async () => {
    const operator = await h.onboard();
    // a second process of the service, whose start-up and first requests run on a loop late
    // turn after turn (code loading and compiling, connections opening, a recovery)
    const stop = hogTheLoop();
    let started: Harness | undefined;
    try {
      started = await startHarness({ OVERLOAD_DELAY_MS: '50' }, ['api']);
      const launch = await signedRequest(started.baseUrl, operator.key, 'POST', '/v1/session', operator.sessionBody({ mode: 'demo' }));
      expect(launch.status, launch.text).to.equal(200);
      const listing = await signedRequest(started.baseUrl, operator.key, 'GET', '/v1/reports/ggr?from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z');
      expect(listing.status, listing.text).to.not.equal(503);
    } finally {
      stop();
      await started?.close();
    }
  });
});
