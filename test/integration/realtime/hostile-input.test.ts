import { expect } from 'chai';
import { BetIntake } from '../../../src/shared/game/bets/place.js';
import { LocalDebits } from '../../../src/shared/game/bets/debit.js';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import type { Placement } from '../../../src/shared/game/bets/place.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, seatPlayer, tick, until, type SeatedPlayer } from '../../support/game.js';
import { Player } from '../../support/player.js';

// D24: one player's bad input fails only its own request. Money at the edge is a
// non-negative integer of at most 2^63-1 (a zero stake is then bet_out_of_range); a bet that gets past the edge with a value Postgres refuses
// fails alone in the batched placement, never the other sessions' bets of its batch; a
// client-caused refusal is never logged at error.
describe('hostile input on the player channel (D24)', function () {
  this.timeout(30_000);
  let h: Harness;
  const players: Player[] = [];

  before(async () => {
    // no clock: a betting window stays open until the test moves the cycle
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
  });
  afterEach(() => {
    for (const player of players.splice(0)) player.close();
  });
  after(() => h.close());

  const engineOf = (operator: TestOperator) => ({ operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' });

  // an operator whose cycle the test opened, with `count` funded players seated
  async function openTable(count: number): Promise<{ operator: TestOperator; seats: SeatedPlayer[] }> {
    const operator = await operatorWith(h, { bettingWindowMs: 60_000 });
    const seats: SeatedPlayer[] = [];
    for (let i = 0; i < count; i++) {
      const seat = await seatPlayer(h, operator, 10_000_000n);
      players.push(seat.player);
      seats.push(seat);
    }
    const pending = await until('the cycle', () => currentCycle(h.svc, engineOf(operator)));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    return { operator, seats };
  }

  // what the logger is asked to write at error level meanwhile
  function errorLogs() {
    const logger = h.svc.logger;
    const original = logger.error;
    const seen: unknown[][] = [];
    logger.error = function (this: unknown, ...args: unknown[]) {
      seen.push(args);
      return (original as (...a: unknown[]) => void).apply(this, args);
    } as typeof logger.error;
    return { seen, restore: () => void (logger.error = original) };
  }

  const walletCallsOf = (playerRef: string, endpoint: string) =>
    h.wallet.requests.filter((r) => r.endpoint === endpoint && (r.body as { playerRef?: unknown } | undefined)?.playerRef === playerRef);

  it('a 20-digit amount (beyond bigint) is invalid_payload on the ack and bet_rejected; no wallet call, no bet', async () => {
    const { seats } = await openTable(1);
    const { player, playerRef, sessionId } = seats[0]!;
    const errors = errorLogs();
    try {
      for (const [clientBetId, amountMicro] of [
        ['twenty-digits', '99999999999999999999'],
        ['two-to-the-63', '9223372036854775808'],
        ['leading-zero', '0100000'],
      ] as const) {
        const before = player.messages.length;
        const ack = await player.request('place_bet', { side: 'LOW', amountMicro, clientBetId });
        expect(ack, amountMicro).to.deep.equal({ ok: false, reason: 'invalid_payload' });
        expect(await player.waitFor('bet_rejected', () => true, 5_000, before)).to.include({ reason: 'invalid_payload', clientBetId });
      }
      // the largest bigint passes the edge; the bet's own limits then refuse it (8.2 rule 3)
      expect(await player.request('place_bet', { side: 'LOW', amountMicro: '9223372036854775807' })).to.deep.equal({
        ok: false,
        reason: 'bet_out_of_range',
      });
    } finally {
      errors.restore();
    }
    expect(errors.seen, 'error logs').to.deep.equal([]);
    expect(walletCallsOf(playerRef, 'bet')).to.deep.equal([]);
    expect(await h.svc.db.bet.count({ where: { sessionId } })).to.equal(0);
    // the socket still serves the player
    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
  });

  it('a bet Postgres refuses, batched with honest bets of other sessions and operators, fails alone', async () => {
    const first = await openTable(3);
    const second = await openTable(2);
    const honest = [...first.seats.slice(1), ...second.seats];
    const hostile = first.seats[0]!;
    const payer = (operator: TestOperator, seat: SeatedPlayer) => ({ operatorId: operator.operatorId, playerRef: seat.playerRef, currency: 'EUR', gameCode: 'dice' });
    // an intake of its own, debiting here as a realtime node that runs the bet role does
    const local = new LocalDebits(h.svc);
    await local.start();
    const intake = new BetIntake(h.svc, local);
    const errors = errorLogs();
    try {
      const placements: Placement[] = [
        ...first.seats.slice(1).map((seat) => ({ sessionId: seat.sessionId, side: 'LOW' as const, amountMicro: 1_000_000n, payer: payer(first.operator, seat) })),
        // past the edge's checks (as if they had a gap): a value no bigint column takes
        { sessionId: hostile.sessionId, side: 'LOW', amountMicro: 99_999_999_999_999_999_999n, payer: payer(first.operator, hostile) },
        ...second.seats.map((seat) => ({ sessionId: seat.sessionId, side: 'HIGH' as const, amountMicro: 2_000_000n, payer: payer(second.operator, seat) })),
      ];
      // one turn of the event loop: one batch
      const intakes = await Promise.allSettled(placements.map((placement) => intake.place(placement)));
      const outcome = (i: number) => {
        const settled = intakes[i]!;
        return settled.status === 'fulfilled' ? settled.value : { failed: (settled.reason as Error).message };
      };
      for (const i of [0, 1, 3, 4]) {
        const intakeOf = outcome(i);
        expect(intakeOf, `honest bet ${i}: ${JSON.stringify(intakeOf)}`).to.have.nested.property('placed.ok', true);
        const ack = await (intakeOf as { verdict: Promise<unknown> }).verdict;
        expect(ack, `honest bet ${i}`).to.include({ ok: true });
      }
      // refused as the edge would have refused it
      expect(outcome(2), 'the hostile bet').to.deep.equal({ placed: { ok: false, reason: 'invalid_payload' } });
    } finally {
      errors.restore();
      intake.close();
      await local.close();
    }
    expect(errors.seen, 'error logs').to.deep.equal([]);
    for (const seat of honest) {
      expect((await h.svc.db.bet.findFirstOrThrow({ where: { sessionId: seat.sessionId } })).status).to.equal('ACCEPTED');
      expect(walletCallsOf(seat.playerRef, 'bet')).to.have.length(1);
    }
    expect(await h.svc.db.bet.count({ where: { sessionId: hostile.sessionId } })).to.equal(0);
    expect(walletCallsOf(hostile.playerRef, 'bet')).to.deep.equal([]);
    expect(h.wallet.violations).to.deep.equal([]);
  });

  // D24: maxHttpBufferSize 8 KiB. A larger message closes its own connection before it is
  // parsed; nothing else notices.
  it('a 9 KiB message closes only its own socket; the other players and the same token are served', async () => {
    const { seats } = await openTable(2);
    const [hostile, honest] = seats as [SeatedPlayer, SeatedPlayer];
    // under the bound: read, and refused as any malformed payload is
    const small = await hostile.player.request('place_bet', { side: 'LOW', amountMicro: '1000000', clientBetId: 'x'.repeat(7 * 1024) });
    expect(small).to.deep.equal({ ok: false, reason: 'invalid_payload' });
    const before = hostile.player.messages.length;
    hostile.player.socket.emit('place_bet', { side: 'LOW', amountMicro: '1000000', clientBetId: 'x'.repeat(9 * 1024) }, () => undefined);
    await hostile.player.waitFor('disconnect', () => true, 10_000, before);
    expect(hostile.player.messages.slice(before).map((m) => m.event)).to.deep.equal(['disconnect']);
    expect(await h.svc.db.bet.count({ where: { sessionId: hostile.sessionId } })).to.equal(0);

    const ack = await honest.player.request('place_bet', { side: 'HIGH', amountMicro: '1000000' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const again = await Player.connect(h.baseUrl, hostile.token);
    players.push(again);
    await again.waitFor('connected');
    const second = await again.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
    expect(second.ok, JSON.stringify(second)).to.equal(true);
  });
});
