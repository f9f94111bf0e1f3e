import { expect } from 'chai';
import { walletRetryDelayMs } from '../../src/shared/platform/queues.js';

// The wallet retry schedule (contract 3.4, 8.1): back off from 1 s, doubling to a 60 s cap,
// jittered. What happens when the 24-hour budget runs out is in
// test/integration/game/wallet-abandonment.test.ts.

describe('walletRetryDelayMs (contract 3.4, 8.1)', () => {
  const middle = () => 0.5;

  it('starts at 1 s and doubles up to a 60 s cap', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((attempts) => walletRetryDelayMs(attempts, middle));
    expect(delays).to.deep.equal([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    expect(walletRetryDelayMs(0, middle)).to.equal(1000);
    expect(walletRetryDelayMs(1000, middle)).to.equal(60_000);
    expect(walletRetryDelayMs(100_000, middle)).to.equal(60_000);
  });

  it('jitters within ±20 % of the base, whole milliseconds', () => {
    for (const [attempts, base] of [[1, 1000], [2, 2000], [4, 8000], [7, 60_000], [50, 60_000]] as const) {
      expect(walletRetryDelayMs(attempts, () => 0)).to.equal(base * 0.8);
      const top = walletRetryDelayMs(attempts, () => 0.999_999);
      expect(top).to.be.at.most(base * 1.2).and.at.least(base * 1.2 - 1);
    }
    const samples = Array.from({ length: 2000 }, () => walletRetryDelayMs(1));
    for (const delay of samples) {
      expect(Number.isInteger(delay)).to.equal(true);
      expect(delay).to.be.within(800, 1200);
    }
    // jittered for real: retries of many jobs do not fall on the same instant
    expect(new Set(samples).size).to.be.greaterThan(100);
    expect(Math.min(...samples)).to.be.below(850);
    expect(Math.max(...samples)).to.be.above(1150);
    for (const delay of Array.from({ length: 500 }, () => walletRetryDelayMs(12))) expect(delay).to.be.within(48_000, 72_000);
  });
});
