import { expect } from 'chai';
import { DELIVERY_WINDOW_MS, nextAttempt, retryDelayMs } from '../../src/shared/game/webhooks/schedule.js';

// The webhook retry schedule (D31): about 10 s, 1 min, 5 min, 15 min, 1 h, 3 h, 6 h, 12 h,
// 24 h, then every 24 h until 72 h after the event, jittered; then failed.

const S = 1000;
const H = 3600 * S;

describe('webhook retry schedule (D31)', () => {
  const middle = () => 0.5;

  it('follows the nominal delays, then every 24 hours', () => {
    const delays = Array.from({ length: 12 }, (_, i) => retryDelayMs(i + 1, middle));
    expect(delays).to.deep.equal([10 * S, 60 * S, 300 * S, 900 * S, H, 3 * H, 6 * H, 12 * H, 24 * H, 24 * H, 24 * H, 24 * H]);
    expect(retryDelayMs(0, middle)).to.equal(10 * S);
  });

  it('jitters within ±20 % of the nominal delay, whole milliseconds', () => {
    for (const [attempts, nominal] of [[1, 10 * S], [3, 300 * S], [9, 24 * H], [40, 24 * H]] as const) {
      expect(retryDelayMs(attempts, () => 0)).to.equal(nominal * 0.8);
      expect(retryDelayMs(attempts, () => 0.999_999)).to.be.within(nominal * 1.199, nominal * 1.2);
    }
    const samples = Array.from({ length: 1000 }, () => retryDelayMs(1));
    for (const delay of samples) expect(Number.isInteger(delay) && delay >= 8 * S && delay <= 12 * S).to.equal(true);
    expect(new Set(samples).size).to.be.above(100);
  });

  it('retries until 72 hours after the event, the last attempt at the end of the window, then fails', () => {
    const occurredAt = new Date('2026-01-01T00:00:00.000Z');
    const attempts: Date[] = [occurredAt];
    let next = nextAttempt(1, occurredAt, occurredAt, middle);
    while (next !== 'failed') {
      attempts.push(next);
      next = nextAttempt(attempts.length, occurredAt, next, middle);
    }
    const hoursAfter = attempts.map((at) => (at.getTime() - occurredAt.getTime()) / H);
    // 10 s, 1 min, 5 min, 15 min, 1 h, 3 h, 6 h, 12 h, 24 h after each other: 46.35 h, then
    // 70.35 h, then the end of the window
    expect(hoursAfter.at(-1)).to.equal(72);
    expect(hoursAfter.at(-2)).to.be.closeTo(70.35, 0.01);
    expect(attempts).to.have.length(12);
    expect(attempts.every((at, i) => i === 0 || at > attempts[i - 1]!)).to.equal(true);
  });

  it('fails at once an attempt made after the window (a redelivery of an event older than 72 hours)', () => {
    const occurredAt = new Date('2026-01-01T00:00:00.000Z');
    expect(nextAttempt(1, occurredAt, new Date(occurredAt.getTime() + DELIVERY_WINDOW_MS))).to.equal('failed');
    expect(nextAttempt(1, occurredAt, new Date(occurredAt.getTime() + DELIVERY_WINDOW_MS + 5 * H))).to.equal('failed');
    expect(nextAttempt(1, occurredAt, new Date(occurredAt.getTime() + DELIVERY_WINDOW_MS - S), middle)).to.deep.equal(
      new Date(occurredAt.getTime() + DELIVERY_WINDOW_MS),
    );
  });
});
