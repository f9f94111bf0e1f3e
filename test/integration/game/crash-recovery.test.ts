import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { SupersededError, advanceCycle, currentTerm } from '../../../src/shared/game/rounds/clock.js';
import { rollRounds } from '../../../src/shared/game/rounds/settle.js';
import { recoverOnElection, recoverStaleCycles, takeTerm } from '../../../src/shared/game/rounds/recovery.js';
import { dropDatabase, migrate } from '../../../src/shared/platform/db/migrate.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tableWithBets, tick } from '../../support/game.js';
import { checkMoneyInvariants, waitForQuiescence } from '../../support/invariants.js';

// Contract 3.1 crash recovery, run by hand on rows a crash left behind (no scheduler runs
// here, so the clock moves only when the test moves it): a cycle caught in BETTING_OPEN has
// no outcome, so its rounds are voided and refunded; a cycle caught in RESULT has outcomes,
// so its wins are enqueued and its rounds settled. Run twice at once and once more, it books
// nothing twice. After a clean handover the clocks only resume (D30). The test's ticks run
// under the term Postgres records (tick); an election takes the next one (D29).
describe('crash recovery on election (contract 3.1)', function () {
  this.timeout(60_000);
  let h: Harness;
  // recovery sweeps every interrupted cycle of its database (contract 3.1): the counts below
  // are this suite's own only in a database that no earlier file left cycles in
  const databaseUrl = new URL(TEST_DATABASE_URL);
  databaseUrl.pathname += '_recovery';
  before(async () => {
    await dropDatabase(databaseUrl.toString());
    await migrate(databaseUrl.toString());
    h = await startHarness({ DATABASE_URL: databaseUrl.toString() }, ROLES_WITHOUT_CLOCK);
  });
  after(async () => {
    await h?.close();
    await dropDatabase(databaseUrl.toString());
  });

  const FUNDS = 10_000_000n;
  // the term of the next scheduler elected
  const nextTerm = async () => (await currentTerm(h.svc)) + 1n;
  const phaseOf = async (cycleId: string) => (await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } })).phase;

  it('voids rounds without an outcome, settles rounds with one, and books nothing twice when run concurrently and again', async () => {
    const open = await tableWithBets(h, await operatorWith(h, { bettingWindowMs: 60_000 }), 2, FUNDS);
    // LOW always wins at this table
    const rolled = await tableWithBets(h, await operatorWith(h, { bettingWindowMs: 60_000, lowWeight: 1n, highWeight: 0n }), 2, FUNDS);
    // the crash came after the outcome was persisted, before settlement (contract 3.1 RESULT)
    const cycle = await h.svc.db.cycle.update({ where: { id: rolled.cycleId }, data: { phase: 'RESULT', phaseEndsAt: null } });
    await h.svc.db.round.updateMany({ where: { cycleId: rolled.cycleId }, data: { state: 'ROLLING' } });
    await rollRounds(h.svc, cycle);

    // the same election's recovery, run twice at once (a retry overlapping) and once more
    const crash = { epoch: await nextTerm(), id: randomUUID(), handedOverBy: null };
    const runs = await Promise.all([recoverOnElection(h.svc, crash), recoverOnElection(h.svc, crash)]);
    const again = await recoverOnElection(h.svc, crash);
    expect(runs.map((r) => r.voidedRounds).reduce((a, b) => a + b)).to.equal(2);
    expect(runs.map((r) => r.interruptedCycles).reduce((a, b) => a + b)).to.be.at.least(2);
    expect(again).to.include({ interruptedCycles: 0, voidedRounds: 0, settledRounds: 0 });

    const operatorIds = await h.svc.db.round
      .findMany({ where: { id: { in: [...open.roundIds, ...rolled.roundIds] } }, select: { operatorId: true } })
      .then((rows) => [...new Set(rows.map((r) => r.operatorId))]);
    await waitForQuiescence(h.svc.db, { operatorIds, timeoutMs: 20_000 });
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds })).to.deep.equal([]);

    const voided = await h.svc.db.round.findMany({ where: { id: { in: open.roundIds } }, include: { bet: { include: { pendingRoundBet: true } } } });
    expect(voided.map((r) => [r.state, r.voidReason, r.bet.status, r.bet.pendingRoundBet?.state, r.bet.pendingRoundBet?.resolutionReason])).to.deep.equal(
      voided.map(() => ['VOIDED', 'crash_recovery', 'VOIDED', 'REFUNDED', 'ROUND_VOIDED']),
    );
    await open.seats[0]!.player.waitFor('round_voided', (p) => p.reason === 'crash_recovery');
    expect(open.seats.map((s) => h.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS, FUNDS]);

    const settled = await h.svc.db.round.findMany({ where: { id: { in: rolled.roundIds } }, include: { bet: true } });
    expect(settled.map((r) => [r.state, r.settled, r.bet.status, r.bet.payoutMicro])).to.deep.equal(settled.map(() => ['SETTLED', true, 'SETTLED', 1_940_000n]));
    expect(rolled.seats.map((s) => h.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS + 940_000n, FUNDS + 940_000n]);
    expect(h.wallet.transactions.filter((t) => t.type === 'win' && rolled.seats.some((s) => s.playerRef === t.playerRef))).to.have.length(2);
    // both interrupted cycles are closed; the clock starts a new cycle for the players still here
    const cycles = await h.svc.db.cycle.findMany({ where: { id: { in: [open.cycleId, rolled.cycleId] } } });
    expect(cycles.map((c) => c.phase)).to.deep.equal(['FINISHED', 'FINISHED']);
    for (const seat of [...open.seats, ...rolled.seats]) seat.player.close();
  });

  // D29: the dead leader's tick that closes betting reaches the new leader's worker before its
  // recovery has run; the cycle is the dead leader's, so the tick moves nothing, recovery
  // voids the cycle's rounds, and the tick run again afterwards is still a no-op
  it('a dead leader\'s tick moves nothing, before recovery or after it', async () => {
    const table = await tableWithBets(h, await operatorWith(h, { bettingWindowMs: 60_000 }), 1, FUNDS);
    const stale = { cycleId: table.cycleId, from: 'BETTING_OPEN' } as const;
    // the successor is elected: its term is recorded, its recovery has not run yet
    const successor = { epoch: await nextTerm(), id: randomUUID(), handedOverBy: null };
    await takeTerm(h.svc, successor);

    await advanceCycle(h.svc, stale, successor.epoch);
    expect(await phaseOf(table.cycleId), 'the tick before recovery').to.equal('BETTING_OPEN');
    await recoverOnElection(h.svc, successor);
    await advanceCycle(h.svc, stale, successor.epoch);
    await advanceCycle(h.svc, { cycleId: table.cycleId, from: 'ROLLING' }, successor.epoch);
    expect(await phaseOf(table.cycleId)).to.equal('FINISHED');
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: table.roundIds[0] } });
    expect([round.state, round.voidReason, round.outcomeSide]).to.deep.equal(['VOIDED', 'crash_recovery', null]);
    await waitForQuiescence(h.svc.db, { operatorIds: [round.operatorId], timeoutMs: 20_000 });
    expect(h.wallet.balanceOf(table.seats[0]!.playerRef, 'EUR')).to.equal(FUNDS);
    table.seats[0]!.player.close();
  });

  // D29: a leader that lost its term (a later one was elected while it recovered or ran)
  // changes nothing: its recovery interrupts nothing and its ticks fail, to be run again
  // by the current leader
  it('a leader whose term is over neither recovers nor moves a cycle', async () => {
    const table = await tableWithBets(h, await operatorWith(h, { bettingWindowMs: 60_000 }), 1, FUNDS);
    const over = await currentTerm(h.svc);
    const later = { epoch: over + 1n, id: randomUUID(), handedOverBy: null };
    await takeTerm(h.svc, later);
    const late = recoverOnElection(h.svc, { epoch: over, id: randomUUID(), handedOverBy: null });
    await late.then(
      () => expect.fail('a recovery under a term that is over'),
      (err: unknown) => expect(err).to.be.instanceOf(SupersededError),
    );
    // the same epoch, issued again by a Redis that lost its counter, is no one else's term
    await takeTerm(h.svc, { epoch: later.epoch, id: randomUUID() }).then(
      () => expect.fail('an epoch taken twice'),
      (err: unknown) => expect(err).to.be.instanceOf(SupersededError),
    );
    const tickUnder = advanceCycle(h.svc, { cycleId: table.cycleId, from: 'BETTING_OPEN' }, over);
    await tickUnder.then(
      () => expect.fail('a tick under a term that is over'),
      (err: unknown) => expect(err).to.be.instanceOf(SupersededError),
    );
    expect(await phaseOf(table.cycleId)).to.equal('BETTING_OPEN');
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: table.roundIds[0] } });
    expect(round.state).to.equal('BETTING_OPEN');
    // the current term adopts nothing it was not handed: a crash recovery voids the round
    await recoverOnElection(h.svc, later);
    expect((await h.svc.db.round.findUniqueOrThrow({ where: { id: round.id } })).state).to.equal('VOIDED');
    table.seats[0]!.player.close();
  });

  // D29: a tick is a queue job, Redis only the transport; one lost (Redis emptied after the
  // election's recovery) would leave the clock stopped, its players waiting for ever
  it('a tick whose job was lost is run by the leader\'s sweep once overdue, not before', async () => {
    const table = await tableWithBets(h, await operatorWith(h, { bettingWindowMs: 60_000 }), 1, FUNDS);
    const cycle = await h.svc.db.cycle.findUniqueOrThrow({ where: { id: table.cycleId } });
    await h.svc.queues.engine.remove(`${table.cycleId}-BETTING_OPEN`);
    const epoch = await currentTerm(h.svc);
    await recoverStaleCycles(h.svc, epoch);
    expect(await phaseOf(table.cycleId), 'before its window ended').to.equal('BETTING_OPEN');
    const shift = cycle.phaseEndsAt!.getTime() - h.svc.now().getTime() + 6_000;
    h.shiftClock(shift);
    try {
      const swept = await recoverStaleCycles(h.svc, epoch);
      expect(swept.overdueTicks).to.be.at.least(1);
      expect(await phaseOf(table.cycleId), 'once overdue').to.equal('ROLLING');
      // the late job, had it come after all, moves nothing twice
      await tick(h, { cycleId: table.cycleId, from: 'BETTING_OPEN' });
      expect(await phaseOf(table.cycleId)).to.equal('ROLLING');
    } finally {
      h.shiftClock(-shift);
    }
    table.seats[0]!.player.close();
  });

  it('after a clean handover the cycle goes on: nothing is voided', async () => {
    const table = await tableWithBets(h, await operatorWith(h, { bettingWindowMs: 60_000 }), 1, FUNDS);
    const predecessor = await currentTerm(h.svc);
    const recovered = await recoverOnElection(h.svc, { epoch: predecessor + 1n, id: randomUUID(), handedOverBy: predecessor });
    expect(recovered).to.include({ interruptedCycles: 0, voidedRounds: 0 });
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: table.roundIds[0] } });
    expect(round.state).to.equal('BETTING_OPEN');
    expect(await phaseOf(table.cycleId)).to.equal('BETTING_OPEN');
    // the successor runs the cycle on
    await tick(h, { cycleId: table.cycleId, from: 'BETTING_OPEN' });
    expect(await phaseOf(table.cycleId)).to.equal('ROLLING');
    table.seats[0]!.player.close();
  });
});
