import { expect } from 'chai';
import { startScheduler } from '../../../src/workers/scheduler.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tableWithBets, until } from '../../support/game.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { LEASE_KEY } from '../../../src/workers/leader.js';

// D30: a leader that stops cleanly hands its clocks over and its successor voids nothing;
// only a leader lost without handing over (killed, lease lapsed, Redis emptied) is a crash
// (contract 3.1 recovery). Schedulers are started and stopped here by hand, in this process.
describe('scheduler handover (D30)', function () {
  this.timeout(60_000);
  let h: Harness;
  const running: ReturnType<typeof startScheduler>[] = [];
  const scheduler = (lease: Parameters<typeof startScheduler>[1] = {}) => {
    const started = startScheduler(h.svc, lease);
    running.push(started);
    return started;
  };
  before(async () => {
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.close()));
  });
  after(() => h.close());

  const FUNDS = 10_000_000n;
  const leads = (s: ReturnType<typeof startScheduler>, name: string) => until(`${name} to lead`, async () => s.lease.isLeader);

  it('a marker left by a leader whose lease had already lapsed does not make the next crash a handover', async () => {
    // A renews rarely, so that it still believes it leads after its lease is gone
    const a = scheduler({ ttlMs: 60_000, renewEveryMs: 60_000 });
    await leads(a, 'A');
    // A stalls, its lease lapses and B takes over
    await h.svc.redis.del(LEASE_KEY);
    const b = scheduler();
    await leads(b, 'B');
    // A is stopped (SIGTERM) while it still believes it leads: it is no one's predecessor
    await a.close();

    // bets in a cycle that B runs
    const table = await tableWithBets(h, await operatorWith(h, { bettingWindowMs: 60_000 }), 2, FUNDS);
    // B is lost without handing over: its lease goes, no marker is written
    await b.lease.stop();
    const c = scheduler();
    await leads(c, 'C');

    await until('the rounds to be voided', async () => (await h.svc.db.round.count({ where: { id: { in: table.roundIds }, state: 'VOIDED' } })) === 2, 10_000);
    const rounds = await h.svc.db.round.findMany({ where: { id: { in: table.roundIds } } });
    expect(rounds.map((r) => r.voidReason)).to.deep.equal(['crash_recovery', 'crash_recovery']);
    await waitForQuiescence(h.svc.db, { operatorIds: [rounds[0]!.operatorId], timeoutMs: 20_000 });
    expect(table.seats.map((s) => h.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([FUNDS, FUNDS]);
    for (const seat of table.seats) seat.player.close();
  });

  it('a leader stopped cleanly hands over: its successor plays the cycle on and voids nothing', async () => {
    const a = scheduler();
    await leads(a, 'A');
    // LOW always wins at this table
    const table = await tableWithBets(h, await operatorWith(h, { bettingWindowMs: 1500, lowWeight: 1n, highWeight: 0n }), 1, FUNDS);
    await a.close();
    const b = scheduler();
    await leads(b, 'B');

    const result = await table.seats[0]!.player.waitFor('round_result', (p) => p.roundId === table.roundIds[0], 15_000);
    expect(result).to.include({ won: true, payoutMicro: '1940000' });
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: table.roundIds[0] } });
    await waitForQuiescence(h.svc.db, { operatorIds: [round.operatorId], timeoutMs: 20_000 });
    expect((await h.svc.db.round.findUniqueOrThrow({ where: { id: round.id } })).state).to.equal('SETTLED');
    expect(h.wallet.balanceOf(table.seats[0]!.playerRef, 'EUR')).to.equal(FUNDS + 940_000n);
    table.seats[0]!.player.close();
  });
});
