import { expect } from 'chai';
import { bookedPayout, payout } from '../../src/shared/domain/payout.js';
import { crashModule, crashPayout, settleCrash } from '../../src/shared/domain/games/crash.js';
import { roundedPayout } from '../../src/shared/domain/currency.js';

// D42, contract 8.4: a free bet's win books its payout less the stake that was never
// debited, never below 0; a paid bet's payout is booked as it is. Every game's settlement
// feeds it the same way (settle.ts, priced), after the cycle's payoutRounding (D46).
describe('the net payout of a free bet (D42, contract 8.4)', () => {
  it('a paid bet books its payout; a free bet its payout less its stake, never below 0', () => {
    expect(bookedPayout(1_940_000n, 1_000_000n, false)).to.equal(1_940_000n);
    expect(bookedPayout(1_940_000n, 1_000_000n, true)).to.equal(940_000n);
    // a won free bet paying exactly its stake: a net of 0 (still a win call, contract 2.7)
    expect(bookedPayout(1_000_000n, 1_000_000n, true)).to.equal(0n);
    // a payout under the stake (x1.00 with commission, or a crash cash-out at 1.00x) is not negative
    expect(bookedPayout(970_000n, 1_000_000n, true)).to.equal(0n);
    expect(bookedPayout(0n, 1_000_000n, true)).to.equal(0n);
    expect(bookedPayout(0n, 1_000_000n, false)).to.equal(0n);
  });

  it('dice: the net of a won free bet is the module payout less the stake, at every commission', () => {
    const rows: [stake: bigint, multiplierScaled: bigint, commission: bigint, net: bigint][] = [
      [1_000_000n, 200_000n, 3_000n, 940_000n],
      [1_000_000n, 198_000n, 0n, 980_000n],
      // x1.00 without commission: the payout is the stake, the net 0
      [1_000_000n, 100_000n, 0n, 0n],
      // x1.00 with commission: under the stake, the net 0
      [1_000_000n, 100_000n, 3_000n, 0n],
      [33_333n, 195_000n, 3_000n, 29_717n],
    ];
    for (const [stake, multiplierScaled, commission, net] of rows) {
      const paid = payout({ stakeMicro: stake, multiplierScaled, commissionMicro: commission }).netMicro;
      expect(bookedPayout(paid, stake, true), `${stake} x${multiplierScaled} ${commission}`).to.equal(net);
      expect(bookedPayout(paid, stake, false)).to.equal(paid);
    }
  });

  it('crash: the net of a free cash-out is the capped payout less the stake; a cash-out at 1.00x nets 0', () => {
    const stake = 1_000_000n;
    expect(bookedPayout(crashPayout(stake, 237n, 10_000_000_000n), stake, true)).to.equal(1_370_000n);
    expect(bookedPayout(crashPayout(stake, 100n, 10_000_000_000n), stake, true)).to.equal(0n);
    // the payout cap applies before the stake is taken off
    expect(bookedPayout(crashPayout(stake, 100_000n, 5_000_000n), stake, true)).to.equal(4_000_000n);
    const settled = settleCrash(stake, { autoCashOutCents: 150n }, { crashCents: 300n }, crashModule.config.defaults);
    expect(settled.won).to.equal(true);
    expect(bookedPayout(settled.payoutMicro, stake, true)).to.equal(500_000n);
  });

  it('the payout is rounded to the minor unit (D46) before the stake is taken off', () => {
    const stake = 1_000_000n;
    const rounded = roundedPayout(1_234_567n, 'minor_unit', 'EUR');
    expect(bookedPayout(rounded, stake, true)).to.equal(rounded - stake);
  });
});
