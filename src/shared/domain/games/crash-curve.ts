// The crash curve (D40): t ms after the flight started, the multiplier is
//
//   m(t) = floor(100 * e^(0.00006 t)) / 100,
//
// here in cents: curveCents(t) = floor(100 * e^(3t / 50000)). Every cash-out is paid at a value
// of this curve and every auto cash-out fires at its inverse, so both are computed exactly,
// in integers, and give the same answer on every node and in every verifier. A double's
// Math.exp is not specified to the last bit (ECMAScript leaves its accuracy to the
// implementation), so it is not used for a decided value.
//
// How the floor is decided exactly. With r = 3t / 50000 (a rational) and a precision of P bits,
// expBounds gives integers lo <= 2^P * e^r <= hi:
//   - Halve r j times, so that x = r / 2^j <= 1, then sum the Taylor series of e^x term by
//     term, T_k = T_(k-1) * x / k, with each term rounded down for lo and up for hi. Rounded
//     down, every term is at most the true term (induction on k), so lo is at most the partial
//     sum, itself below e^x. Rounded up, every term is at least the true one; the sum stops at
//     the first term n whose rounded-up value is at most 1 (of 2^P), and the tail it leaves out
//     is sum_(k>n) x^k/k! <= term_n * (x/(n+1)) / (1 - x/(n+1)) <= term_n, since x <= 1 and
//     n >= 1; hi adds 2 * T_n, more than that tail.
//   - Square j times: lo' = floor(lo^2 / 2^P), hi' = ceil(hi^2 / 2^P). Squaring is increasing on
//     non-negative numbers, so the bounds stay bounds of 2^P * e^(2x), ..., up to 2^P * e^r.
// Then floor(100 * lo / 2^P) <= floor(100 * e^r) <= floor(100 * hi / 2^P); when the two ends are
// equal, that is the exact floor. When they differ, an integer lies between the bounds and the
// precision is doubled. That ends: 100 * e^r is not an integer for any t > 0 (by
// Lindemann-Weierstrass e^r is transcendental for a rational r other than 0), so it has a
// positive distance to the nearest integer, and the bounds close in on it as P grows (their
// gap shrinks about as 2^(j-P)); for t = 0 both bounds are exactly 2^P and the answer is 100.
// In practice the first precision decides every t a flight reaches.

const RATE_NUMERATOR = 3n; // 0.00006 per ms = 3 / 50000
const RATE_DENOMINATOR = 50000n;
const FIRST_PRECISION = 64n;
const LAST_PRECISION = 4096n;

// far past any flight (the curve reaches 1000x, the highest crash point, at 115130 ms); beyond
// it m(t) is not asked, and refusing it keeps the bigints small
export const CURVE_MAX_MS = 10_000_000;

// integers lo <= 2^P * e^(p/q) <= hi, for p >= 0, q > 0 (see above)
function expBounds(p: bigint, q: bigint, precision: bigint): [bigint, bigint] {
  const one = 1n << precision;
  let halvings = 0n;
  while (p > q << halvings) halvings++;
  const divisor = q << halvings;
  let lo = one;
  let hi = one;
  let termLo = one;
  let termHi = one;
  for (let k = 1n; ; k++) {
    termLo = (termLo * p) / (divisor * k);
    termHi = (termHi * p + divisor * k - 1n) / (divisor * k);
    lo += termLo;
    hi += termHi;
    if (termHi <= 1n) {
      hi += 2n * termHi;
      break;
    }
  }
  for (let i = 0n; i < halvings; i++) {
    lo = (lo * lo) >> precision;
    hi = (hi * hi + one - 1n) >> precision;
  }
  return [lo, hi];
}

// floor(100 * e^(0.00006 t)), the multiplier in cents t ms into the flight
export function curveCents(t: number): bigint {
  if (!Number.isSafeInteger(t) || t < 0 || t > CURVE_MAX_MS) throw new RangeError(`t must be an integer number of ms, 0 to ${CURVE_MAX_MS}: ${t}`);
  const p = RATE_NUMERATOR * BigInt(t);
  for (let precision = FIRST_PRECISION; precision <= LAST_PRECISION; precision *= 2n) {
    const [lo, hi] = expBounds(p, RATE_DENOMINATOR, precision);
    const low = (100n * lo) >> precision;
    if (low === (100n * hi) >> precision) return low;
  }
  // unreachable (see above): the bounds of 4096 bits would have to straddle an integer
  throw new Error(`the crash curve at ${t} ms was not decided at ${LAST_PRECISION} bits`);
}

// D40 "at time t(a)": the first whole ms at which the curve reaches `cents`, the smallest t
// with curveCents(t) >= cents. A double gives the guess, ceil(ln(cents / 100) / 0.00006), and
// the exact curve decides it: the answer is checked on both sides (curveCents is
// non-decreasing), so the guess's rounding can only cost a step, never the result.
export function curveTime(cents: bigint): number {
  if (cents <= 100n) return 0;
  if (cents > 100000n) throw new RangeError(`the curve's times are asked up to 1000x (100000 cents): ${cents}`);
  let t = Math.max(0, Math.ceil((Math.log(Number(cents) / 100) * Number(RATE_DENOMINATOR)) / Number(RATE_NUMERATOR)));
  while (curveCents(t) < cents) t++;
  while (t > 0 && curveCents(t - 1) >= cents) t--;
  return t;
}
