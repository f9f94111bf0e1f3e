// Percentile summaries of latency samples (milliseconds). Nearest-rank percentiles: every
// reported value is one that was observed, and a p99 over fewer than 100 samples is the max.
// A p99 comes with its 95% confidence interval, so that a run's p99 can be told from its
// sampling error: a 15 s window run has about 2,200 bet acks, and its p99 is their 23rd slowest.

export type Summary = {
  count: number;
  p50: number | null;
  p99: number | null;
  // [low, high]: null when the samples are too few to bound the p99 from above (under ~400)
  p99Interval: [number, number] | null;
  max: number | null;
  mean: number | null;
};

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of no samples');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

// Distribution-free: the number of samples below the true p99 is binomial (n, 0.99), so the
// order statistics at ranks n × 0.99 ∓ 1.96 of its standard deviations (its normal
// approximation), rounded outwards, bound the p99 with at least about 95% confidence,
// whatever the latencies' distribution. Answers 1-based ranks, or null when the upper one is
// past n.
export function p99IntervalRanks(count: number): [number, number] | null {
  const expected = count * 0.99;
  const spread = 1.96 * Math.sqrt(count * 0.99 * 0.01);
  const low = Math.max(1, Math.floor(expected - spread));
  const high = Math.ceil(expected + spread);
  return high > count ? null : [low, high];
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { count: 0, p50: null, p99: null, p99Interval: null, max: null, mean: null };
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  const ranks = p99IntervalRanks(sorted.length);
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    p99Interval: ranks && [round(sorted[ranks[0] - 1]!), round(sorted[ranks[1] - 1]!)],
    max: round(sorted[sorted.length - 1]!),
    mean: round(mean),
  };
}

// microsecond resolution is more than any of the clocks involved can tell apart
export const round = (value: number, digits = 3): number => Number(value.toFixed(digits));
