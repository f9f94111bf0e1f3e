import { expect } from 'chai';
import { curveCents, curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { centsText } from '../../../src/shared/domain/games/crash.js';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { FLIGHT_GRACE_MS, cashOut } from '../../../src/shared/game/rounds/flight.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, tick, until } from '../../support/game.js';
import { crashOperator, crashSeed, seatCrashPlayer, type CrashSeat } from '../../support/crash.js';
import type { Player } from '../../support/player.js';

// The history of the crash page (D33, D40): recent_rounds gives a crash round with its auto
// cash-out, and, once the round is resolved, its crash point, its cash-out and whether it won;
// while it flies the crash point is the player's secret to come and is not shown. The clock
// is moved by hand; sandbox seeds (D35) fix the crash points.
describe('the crash rounds of the page history (recent_rounds, D33, D40)', function () {
  this.timeout(60_000);
  let h: Harness;
  const players: Player[] = [];
  const STAKE = 1_000_000n; // 10.00

  before(async () => {
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
  });
  after(async () => {
    for (const player of players) player.close();
    await h?.close();
  });

  async function seat(operator: TestOperator, serverSeed: string): Promise<CrashSeat> {
    const seated = await seatCrashPlayer(h, operator, serverSeed);
    players.push(seated.player);
    return seated;
  }

  async function history(seated: CrashSeat) {
    const ack = await seated.player.request('recent_rounds', {});
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    return ack.rounds as Record<string, unknown>[];
  }

  it('shows the auto cash-out at once, the crash point and cash-out only once the round is resolved, and a loss as lost', async () => {
    const high = crashSeed(300n, 600n);
    const low = crashSeed(110n, 150n);
    const operator = await crashOperator(h);
    const byHand = await seat(operator, high.serverSeed);
    const auto = await seat(operator, low.serverSeed);
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'crash', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    const handBet = await byHand.player.request('place_bet', { amountMicro: STAKE.toString() });
    const autoBet = await auto.player.request('place_bet', { amountMicro: STAKE.toString(), autoCashOut: '2.00' });
    expect([handBet.ok, autoBet.ok]).to.deep.equal([true, true]);
    await tick(h, { cycleId: pending.id, from: 'BETTING_OPEN' });
    const start = (await h.svc.db.cycle.findUniqueOrThrow({ where: { id: pending.id } })).flightStartedAt!.getTime();

    // in flight: the bet's terms, nothing of its outcome
    const [flying] = await history(byHand);
    expect(flying).to.include({ roundId: handBet.roundId, side: null, autoCashOut: null, crashMultiplier: null, cashOutMultiplier: null, won: null, payoutMicro: null });
    expect((await history(auto))[0]).to.include({ roundId: autoBet.roundId, autoCashOut: '2.00', crashMultiplier: null, won: null });

    // cashed out by hand, a ms before its crash: its crash point is then shown beside its cash-out
    const at = curveTime(high.crashCents) - 1;
    const ack = await cashOut(h.svc, byHand.sessionId, new Date(start + at));
    expect(ack).to.deep.include({ ok: true, cashOutMultiplier: centsText(curveCents(at)) });
    await until('the win settled', async () => (await history(byHand))[0]?.state === 'SETTLED');
    expect((await history(byHand))[0]).to.include({
      autoCashOut: null,
      crashMultiplier: centsText(high.crashCents),
      cashOutMultiplier: centsText(curveCents(at)),
      cashOutMs: at,
      won: true,
      payoutMicro: ((STAKE * curveCents(at)) / 100n).toString(),
    });

    // the auto cash-out at 2.00 never came: the round crashed below it, lost
    h.shiftClock(curveTime(low.crashCents) + FLIGHT_GRACE_MS - (h.svc.now().getTime() - start) + 5);
    await tick(h, { cycleId: pending.id, from: 'ROLLING' });
    await until('the loss settled', async () => (await history(auto))[0]?.state === 'SETTLED');
    expect((await history(auto))[0]).to.include({
      autoCashOut: '2.00',
      crashMultiplier: centsText(low.crashCents),
      cashOutMultiplier: null,
      cashOutMs: null,
      won: false,
      payoutMicro: '0',
    });
  });
});
