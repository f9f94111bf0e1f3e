import { expect } from 'chai';
import { seeded } from '../../../bench/path-floor.js';
import { p99IntervalRanks, summarize } from '../../../bench/stats.js';

// The bench's latency summaries: nearest-rank percentiles, and the p99's 95% confidence
// interval that tells a run's p99 from its sampling error.
describe('bench latency summaries', () => {
  it('nearest-rank p50 and p99, with the p99 bounded by the samples at its interval ranks', () => {
    const samples = Array.from({ length: 1000 }, (_, i) => 1000 - i);
    expect(summarize(samples)).to.deep.equal({ count: 1000, p50: 500, p99: 990, p99Interval: [983, 997], max: 1000, mean: 500.5 });
  });

  it('a 15 s window run of 2,200 acks bounds its p99 between the 33rd and the 13th slowest', () => {
    expect(p99IntervalRanks(2200)).to.deep.equal([2168, 2188]);
  });

  it('too few samples to bound a p99 from above give no interval', () => {
    expect(p99IntervalRanks(300)).to.equal(null);
    expect(summarize(Array.from({ length: 300 }, (_, i) => i)).p99Interval).to.equal(null);
    // from about 400 samples the upper bound is the max
    expect(p99IntervalRanks(500)).to.deep.equal([490, 500]);
    expect(summarize([]).p99Interval).to.equal(null);
  });

  // the ranks are rounded outwards, so the interval is a little wider than 95% needs
  it('covers the true p99 of a long-tailed latency in at least 95% of runs', () => {
    // exponential latencies with a 5 ms mean: the true p99 is 5 × ln(100)
    const truth = 5 * Math.log(100);
    const random = seeded(7);
    const runs = 1000;
    let covered = 0;
    for (let run = 0; run < runs; run++) {
      const samples = Array.from({ length: 2200 }, () => -5 * Math.log(1 - random()));
      const [low, high] = summarize(samples).p99Interval!;
      if (low <= truth && truth <= high) covered += 1;
    }
    expect(covered / runs).to.be.within(0.95, 0.99);
  });
});
