// D31: when a webhook delivery that was not acknowledged is tried again. Pure: the clock and
// the randomness are the caller's.

const SECOND = 1000;
const HOUR = 60 * 60 * SECOND;

// the delay after the 1st, 2nd, ... failed attempt; after the last, every 24 hours
export const RETRY_DELAYS_MS: readonly number[] = [
  10 * SECOND,
  60 * SECOND,
  5 * 60 * SECOND,
  15 * 60 * SECOND,
  HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  24 * HOUR,
];
export const DAILY_MS = 24 * HOUR;

// D31: attempts go on until this long after the event; then the delivery is failed
export const DELIVERY_WINDOW_MS = 72 * HOUR;

// D31: a 2xx within this long acknowledges
export const DELIVERY_TIMEOUT_MS = 10 * SECOND;

// jitter: each delay is spread over 80% to 120% of its nominal value, so that the retries of
// many events that failed together (one receiver down) do not all arrive together again
const JITTER = 0.2;

export function retryDelayMs(attemptsMade: number, random: () => number = Math.random): number {
  const nominal = RETRY_DELAYS_MS[Math.max(0, attemptsMade - 1)] ?? DAILY_MS;
  return Math.round(nominal * (1 - JITTER + 2 * JITTER * random()));
}

// After a failed attempt (the `attemptsMade`th) at `now`: when the next one is due, or
// 'failed' once the window after the event is spent. The last attempt is made at the end of
// the window itself rather than skipped when a delay would overshoot it, so that an event is
// tried "until 72 h after" it and not up to a day less.
export function nextAttempt(
  attemptsMade: number,
  occurredAt: Date,
  now: Date,
  random: () => number = Math.random,
): Date | 'failed' {
  const deadline = occurredAt.getTime() + DELIVERY_WINDOW_MS;
  if (now.getTime() >= deadline) return 'failed';
  return new Date(Math.min(now.getTime() + retryDelayMs(attemptsMade, random), deadline));
}

// D31: an endpoint whose circuit opened is held (its events are not claimed) for the
// circuit's open period, lengthened by up to 20 % at random, and then probed by one attempt:
// the endpoints that failed together (a network fault) are not all probed at the same moment,
// and a hold never ends before the circuit would let the probe through.
export function holdUntil(openMs: number, now: Date, random: () => number = Math.random): Date {
  return new Date(now.getTime() + Math.round(openMs * (1 + JITTER * random())));
}
