import { expect } from 'chai';
import { amountRefusal } from '../../src/shared/domain/bet-rules.js';

// contract 8.2 rule 3, shared by every game: the stake within the table's bounds, and a
// zero stake never (D24: zero is a well-formed stake, refused here rather than at the edge).
describe('bet rules: the stake (contract 8.2 rule 3)', () => {
  it('refuses zero, below the minimum and above the maximum bet_out_of_range; the bounds themselves pass', () => {
    expect(amountRefusal(0n, { minBetMicro: 10_000n, maxBetMicro: 100_000_000n, stakeStepMicro: 1n })).to.equal('bet_out_of_range');
    expect(amountRefusal(9_999n, { minBetMicro: 10_000n, maxBetMicro: 100_000_000n, stakeStepMicro: 1n })).to.equal('bet_out_of_range');
    expect(amountRefusal(100_000_001n, { minBetMicro: 10_000n, maxBetMicro: 100_000_000n, stakeStepMicro: 1n })).to.equal('bet_out_of_range');
    expect(amountRefusal(10_000n, { minBetMicro: 10_000n, maxBetMicro: 100_000_000n, stakeStepMicro: 1n })).to.equal(undefined);
    expect(amountRefusal(100_000_000n, { minBetMicro: 10_000n, maxBetMicro: 100_000_000n, stakeStepMicro: 1n })).to.equal(undefined);
  });

  it('D46: refuses a stake that is not a multiple of the stake step', () => {
    const eur = { minBetMicro: 10_000n, maxBetMicro: 100_000_000n, stakeStepMicro: 1_000n };
    expect(amountRefusal(10_500n, eur)).to.equal('bet_out_of_range');
    expect(amountRefusal(10_001n, eur)).to.equal('bet_out_of_range');
    expect(amountRefusal(11_000n, eur)).to.equal(undefined);
  });

  it('refuses a zero stake even under bounds that would let it through', () => {
    expect(amountRefusal(0n, { minBetMicro: 0n, maxBetMicro: 100n, stakeStepMicro: 1n })).to.equal('bet_out_of_range');
  });
});
