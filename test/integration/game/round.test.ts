import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { Player } from '../../support/player.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// A full round through every role in one process: place_bet over Socket.IO, the debit in
// the bet worker, the engine clock, the outcome, and the credit in the settle worker, all
// against the wallet simulator's ledger.
describe('a round of dice, end to end', function () {
  this.timeout(30_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h.close());

  // weights force the side: lowWeight 1, highWeight 0 always rolls LOW (D2)
  async function operatorRolling(side: 'LOW' | 'HIGH'): Promise<TestOperator> {
    const operator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {
      bettingWindowMs: 800,
      rollingWindowMs: 300,
      cooldownMs: 200,
      lowWeight: side === 'LOW' ? 1n : 0n,
      highWeight: side === 'HIGH' ? 1n : 0n,
    });
    return operator;
  }

  async function seated(operator: TestOperator, balance: bigint) {
    const body = operator.sessionBody();
    h.wallet.setBalance(body.playerRef as string, 'EUR', balance);
    const launch = await operator.request('POST', '/v1/session', body);
    expect(launch.status, launch.text).to.equal(200);
    const player = await Player.connect(h.baseUrl, launch.body.sessionToken);
    return { player, playerRef: body.playerRef as string, session: launch.body };
  }

  it('a winning bet is debited, then credited the net payout once', async () => {
    const operator = await operatorRolling('LOW');
    const { player, playerRef } = await seated(operator, 5_000_000n);
    const connected = await player.waitFor('connected');
    expect(connected.balanceMicro).to.equal('5000000');
    expect(connected.config).to.deep.equal({ minBetMicro: '10000', maxBetMicro: '100000000', stakeStepMicro: '1000', payoutMultiplier: '2', commissionMicro: '3000' });
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');

    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: '1000000', clientBetId: 'b1' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const placed = await player.waitFor('bet_placed');
    expect(placed).to.include({ betId: ack.betId, roundId: ack.roundId, side: 'LOW', amountMicro: '1000000', isFree: false });
    expect((await player.waitFor('balance_update')).balanceMicro).to.equal('4000000');

    const result = await player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    expect(result).to.include({ side: 'LOW', won: true, payoutMicro: '1940000', nonce: 0, betId: ack.betId, lowWeight: '1', highWeight: '0' });
    expect(result.sum).to.be.within(1, 3);
    const credited = await player.waitFor('balance_update', (p) => p.balanceMicro === '5940000');
    expect(credited.currency).to.equal('EUR');

    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(5_940_000n);
    const moves = h.wallet.transactions.filter((t) => t.playerRef === playerRef);
    expect(moves.map((t) => [t.type, t.amountMicro])).to.deep.equal([
      ['bet', 1_000_000n],
      ['win', 1_940_000n],
    ]);
    expect(h.wallet.violations).to.deep.equal([]);
    const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } });
    expect(bet.status).to.equal('SETTLED');
    expect(bet.payoutMicro).to.equal(1_940_000n);
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: ack.roundId } });
    expect(round).to.include({ state: 'SETTLED', settled: true, outcomeSide: 'LOW', nonce: 0 });
    player.close();
  });

  it('a losing bet is debited and never credited', async () => {
    const operator = await operatorRolling('HIGH');
    const { player, playerRef } = await seated(operator, 2_000_000n);
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: 250000 });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const result = await player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    expect(result).to.include({ side: 'HIGH', won: false, payoutMicro: '0' });
    await player.waitFor('round_state', (p) => p.phase === 'COOLDOWN');
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(1_750_000n);
    expect(h.wallet.transactions.filter((t) => t.playerRef === playerRef).map((t) => t.type)).to.deep.equal(['bet']);
    const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } });
    expect(bet).to.include({ status: 'SETTLED' });
    expect(bet.payoutMicro).to.equal(0n);
    player.close();
  });

  // contract 3.1 (D1): round_state tells the players when each phase ends, and the clock keeps
  // to it. Closing betting waits for any acceptance holding the cycle (debit.ts reads it FOR
  // SHARE); the time spent waiting must not lengthen the phase that follows.
  it('ends a phase when it announced, even when moving into it waited for an acceptance holding the cycle', async () => {
    const operator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 700, rollingWindowMs: 1000, cooldownMs: 200 });
    const { player } = await seated(operator, 1_000_000n);
    const holdMs = 600;
    // The hold must hold the cycle before its close: taken 100 ms before it, and checked under
    // the lock (the cycle still BETTING_OPEN). A loaded box can wake the test after the close;
    // then the next window is tried. The hold ends holdMs after it was due to begin, whenever
    // it began.
    const tried = new Set<string>();
    let open: any;
    let closesAt: number;
    let held: Promise<void>;
    for (;;) {
      const window = await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && !tried.has(p.cycleId) && Date.parse(p.phaseEndsAt) - h.svc.now().getTime() > 300);
      tried.add(window.cycleId);
      closesAt = Date.parse(window.phaseEndsAt);
      await delay(Math.max(0, closesAt - 100 - h.svc.now().getTime()));
      const releaseAt = closesAt - 100 + holdMs;
      let lockedBeforeClose!: (before: boolean) => void;
      const locked = new Promise<boolean>((resolve) => (lockedBeforeClose = resolve));
      held = h.svc.sql.transaction(async (tx) => {
        const [cycle] = await tx.query<{ phase: string }>('SELECT phase FROM cycles WHERE id = $1 FOR SHARE', [window.cycleId]);
        lockedBeforeClose(cycle?.phase === 'BETTING_OPEN');
        if (cycle?.phase === 'BETTING_OPEN') await delay(Math.max(0, releaseAt - h.svc.now().getTime()));
      });
      if (await locked) {
        open = window;
        break;
      }
      await held;
      expect(tried.size, 'windows the test woke too late for').to.be.below(5);
    }
    const rolling = await player.waitFor('round_state', (p) => p.cycleId === open.cycleId && p.phase === 'ROLLING');
    await held;
    // the close waited for the hold, and ROLLING's end counts from when betting was due to close
    expect(Date.parse(rolling.ts) - closesAt).to.be.at.least(holdMs - 150);
    expect(Date.parse(rolling.phaseEndsAt) - (closesAt + 1000)).to.be.within(0, 150);
    const result = await player.waitFor('round_state', (p) => p.cycleId === open.cycleId && p.phase === 'RESULT');
    expect(Date.parse(result.ts) - Date.parse(rolling.phaseEndsAt)).to.be.below(250);
    player.close();
  });
});
