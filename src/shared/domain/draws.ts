// A 32-bit draw selecting one of several weights (D2's compare, generalised by D41): the draw
// `a` (the first 4 bytes of an HMAC, big-endian, 0 <= a < 2^32) selects the first index k with
//
//   a * W < (w_0 + ... + w_k) * 2^32,      W = w_0 + ... + w_(n-1),
//
// an exact integer comparison. Dice's side is this with the weights [lowWeight, highWeight]
// (LOW is index 0: a * (low + high) < low * 2^32, D2); the multi-event game's reel stops,
// feature multiplier and jackpot are this with their own weights (D41).
//
// Since a is an integer, a * W < C * 2^32 iff a < ceil(C * 2^32 / W): index k is selected by
// exactly the a in [t_(k-1), t_k), t_k = ceil((w_0 + ... + w_k) * 2^32 / W) (t_(-1) = 0). A
// table keeps those thresholds, so that a selection is a few comparisons of small integers
// (the same answer as the product compare, by the equivalence above), and the counts t_k -
// t_(k-1) are each index's exact number of the 2^32 draws: the par sheet's probabilities
// (D39: counted over the derivation's integer space, never simulated).

export const DRAW_SPACE = 1n << 32n;

export type DrawTable = {
  readonly weights: readonly bigint[];
  // thresholds[k] = t_k above, as numbers (at most 2^32, exact in a double)
  readonly thresholds: readonly number[];
  // counts[k] = t_k - t_(k-1): how many of the 2^32 values of a select k; they sum to 2^32
  readonly counts: readonly bigint[];
};

export function drawTable(weights: readonly bigint[]): DrawTable {
  if (weights.length === 0 || weights.some((w) => w < 0n)) throw new RangeError(`weights must be non-negative: ${weights.join(':')}`);
  const total = weights.reduce((sum, w) => sum + w, 0n);
  if (total === 0n) throw new RangeError(`weights must not all be zero: ${weights.join(':')}`);
  const thresholds: number[] = [];
  const counts: bigint[] = [];
  let cumulative = 0n;
  let previous = 0n;
  for (const weight of weights) {
    cumulative += weight;
    const threshold = (cumulative * DRAW_SPACE + total - 1n) / total;
    thresholds.push(Number(threshold));
    counts.push(threshold - previous);
    previous = threshold;
  }
  return { weights: [...weights], thresholds, counts };
}

// the index that the draw a selects (0 <= a < 2^32): the first k with a < t_k
export function selectIndex(a: number, table: DrawTable): number {
  if (!Number.isInteger(a) || a < 0 || a >= 2 ** 32) throw new RangeError(`a draw must be an integer, 0 to 2^32 - 1: ${a}`);
  const { thresholds } = table;
  let low = 0;
  let high = thresholds.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (a < thresholds[middle]!) high = middle;
    else low = middle + 1;
  }
  return low;
}

// D2's draw of an HMAC: its first 4 bytes, big-endian
export const drawOf = (h: Buffer): number => h.readUInt32BE(0);
