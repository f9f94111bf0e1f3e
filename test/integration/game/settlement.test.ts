import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { rollRounds } from '../../../src/shared/game/rounds/settle.js';
import { cycleConfigOf } from '../../../src/shared/game/rounds/cycle-config.js';
import { cycleConfig } from '../../../src/shared/game/operators/game-config.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, TABLE_STAKE_MICRO, operatorWith, seatPlayer, tableWithBets, tick, until } from '../../support/game.js';
import { checkMoneyInvariants, waitForQuiescence } from '../../support/invariants.js';

// contract 3.1 ROLLING -> RESULT -> SETTLED, driven tick by tick (no scheduler runs here).
// The tick that rolls a cycle settles the rounds it rolled without reading them again; a
// tick resumed in RESULT, after an earlier attempt rolled the rounds, reads them.
describe('a cycle settled by its tick (contract 3.1)', function () {
  this.timeout(60_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
  });
  after(() => h.close());

  const FUNDS = 10_000_000n;

  // a cycle in ROLLING with one accepted LOW bet per player, at a table where LOW always wins
  async function rollingTable(players: number) {
    const operator = await operatorWith(h, { bettingWindowMs: 60_000, lowWeight: 1n, highWeight: 0n });
    const table = await tableWithBets(h, operator, players, FUNDS);
    await tick(h, { cycleId: table.cycleId, from: 'BETTING_OPEN' });
    return { operator, ...table };
  }

  // the names of the prepared statements the service runs while `work` does
  async function statementsDuring(work: () => Promise<void>): Promise<string[]> {
    const names: string[] = [];
    const query = h.svc.sql.query.bind(h.svc.sql);
    h.svc.sql.query = (sql, values) => {
      if (typeof sql !== 'string') names.push(sql.name);
      return query(sql, values);
    };
    try {
      await work();
    } finally {
      h.svc.sql.query = query;
    }
    return names;
  }

  async function expectPaid(table: Awaited<ReturnType<typeof rollingTable>>) {
    const operatorIds = [table.operator.operatorId];
    await waitForQuiescence(h.svc.db, { operatorIds, timeoutMs: 20_000 });
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds })).to.deep.equal([]);
    const rounds = await h.svc.db.round.findMany({ where: { id: { in: table.roundIds } }, include: { bet: true } });
    expect(rounds.map((r) => [r.state, r.settled, r.outcomeSide, r.bet.status])).to.deep.equal(rounds.map(() => ['SETTLED', true, 'LOW', 'SETTLED']));
    const net = rounds[0]!.bet.payoutMicro!;
    expect(net > 0n).to.equal(true);
    for (const seat of table.seats) {
      expect(h.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS - TABLE_STAKE_MICRO + net);
    }
  }

  it('the rolling tick settles and pays every round it rolled, reading none of them again', async () => {
    const table = await rollingTable(3);
    const names = await statementsDuring(() => tick(h, { cycleId: table.cycleId, from: 'ROLLING' }));
    expect(names).to.include.members(['roll_rounds', 'roll_persist', 'settle_apply']);
    expect(names).to.not.include('settle_rounds');
    expect((await h.svc.db.cycle.findUniqueOrThrow({ where: { id: table.cycleId } })).phase).to.equal('COOLDOWN');
    await expectPaid(table);
  });

  // D39: a round is derived and priced under its cycle's configuration; the process that
  // started the cycle kept it, and reads no snapshot back to roll and settle it
  it("the process that started a cycle has its configuration without reading it, as the cycle's snapshot reads it back", async () => {
    const table = await rollingTable(1);
    const noReads = { db: { cycle: { findUniqueOrThrow: () => Promise.reject(new Error('the snapshot was read')) } } } as unknown as typeof h.svc;
    const kept = await cycleConfigOf(noReads, table.cycleId);
    expect(kept).to.deep.equal(cycleConfig(await h.svc.db.cycle.findUniqueOrThrow({ where: { id: table.cycleId } })));
    expect(kept).to.include({ lowWeight: 1n, highWeight: 0n, bettingWindowMs: 60_000 });
  });

  // D1: closing betting waits for any acceptance holding the cycle (FOR SHARE); the rounds
  // such an acceptance inserted and committed meanwhile roll with the cycle, although the
  // closing statement began before they existed
  it('closing betting rolls the rounds an acceptance committed while the close waited for it', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 60_000 });
    const table = await tableWithBets(h, operator, 1, FUNDS);
    const late = await seatPlayer(h, operator, FUNDS);
    const lateRound = { id: randomUUID(), betId: randomUUID() };
    let closing: Promise<void> | undefined;
    await h.svc.sql.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM cycles WHERE id = $1 FOR SHARE', [table.cycleId]);
      closing = tick(h, { cycleId: table.cycleId, from: 'BETTING_OPEN' });
      await until('the close waiting for the cycle', async () => {
        const [row] = await h.svc.sql.query<{ waiting: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE cycles SET%' AND pid <> pg_backend_pid()) AS waiting`,
        );
        return row!.waiting || null;
      });
      // an acceptance of the late player's bet, as debit.ts writes one, under the same hold
      await tx.query(
        `INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, amount_micro, status,
                           bet_transaction_uuid, demo, cycle_created_at, accepted_at)
         SELECT $1, b.operator_id, s.id, b.cycle_id, $2, s.player_ref, b.game_code, b.currency, b.side, b.amount_micro, 'ACCEPTED',
                $3, false, b.cycle_created_at, now()
         FROM rounds r JOIN bets b ON b.id = r.bet_id AND b.cycle_created_at = r.cycle_created_at, sessions s
         WHERE r.id = $4 AND s.id = $5`,
        [lateRound.betId, lateRound.id, randomUUID(), table.roundIds[0], late.sessionId],
      );
      await tx.query(
        `INSERT INTO rounds (id, operator_id, session_id, cycle_id, seed_id, bet_id, game_code, currency, nonce, state, low_weight, high_weight,
                             demo, cycle_created_at)
         SELECT $1, r.operator_id, $2, r.cycle_id, (SELECT id FROM seeds WHERE session_id = $2 AND current), $3, r.game_code, r.currency, 0,
                'BETTING_OPEN', r.low_weight, r.high_weight, false, r.cycle_created_at
         FROM rounds r WHERE r.id = $4`,
        [lateRound.id, late.sessionId, lateRound.betId, table.roundIds[0]],
      );
    });
    await closing;
    expect((await h.svc.db.cycle.findUniqueOrThrow({ where: { id: table.cycleId } })).phase).to.equal('ROLLING');
    const rounds = await h.svc.db.round.findMany({ where: { id: { in: [table.roundIds[0]!, lateRound.id] } } });
    expect(rounds.map((r) => r.state)).to.deep.equal(['ROLLING', 'ROLLING']);
  });

  it('a tick resumed in RESULT settles the rounds an earlier attempt rolled', async () => {
    const table = await rollingTable(2);
    // the earlier attempt moved the cycle to RESULT and rolled its rounds, then stopped
    const cycle = await h.svc.db.cycle.update({ where: { id: table.cycleId }, data: { phase: 'RESULT', phaseEndsAt: null } });
    expect(await rollRounds(h.svc, cycle)).to.have.length(2);
    const names = await statementsDuring(() => tick(h, { cycleId: table.cycleId, from: 'RESULT' }));
    expect(names).to.include.members(['settle_rounds', 'settle_apply']);
    await expectPaid(table);
  });
});
