// Percentile summaries of latency samples (milliseconds). Nearest-rank percentiles: every
// reported value is one that was observed, and a p99 over fewer than 100 samples is the max.

export type Summary = { count: number; p50: number | null; p99: number | null; max: number | null; mean: number | null };

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('percentile of no samples');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { count: 0, p50: null, p99: null, max: null, mean: null };
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1]!),
    mean: round(mean),
  };
}

// microsecond resolution is more than any of the clocks involved can tell apart
export const round = (value: number, digits = 3): number => Number(value.toFixed(digits));
