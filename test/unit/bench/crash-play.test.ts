import { expect } from 'chai';
import { curveCents, curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import {
  CASH_OUT_MIN_CENTS,
  cashesOutAutomatically,
  crashCycleMs,
  drawTargetCents,
  FlightClock,
  parseCashOutMax,
} from '../../../bench/crash-play.js';

// How a bench player plays crash (D40): its targets, which players cash out automatically, and
// the clock a player draws from the ROLLING round_state to know when to click.

describe('bench crash play', () => {
  it('draws targets on the curve between 1.05 and the highest, evenly over the flight time', () => {
    expect(drawTargetCents(0, 200)).to.equal(CASH_OUT_MIN_CENTS);
    expect(drawTargetCents(0.999999999, 200)).to.equal(200);
    const targets = Array.from({ length: 1000 }, (_, i) => drawTargetCents(i / 1000, 200));
    for (const cents of targets) {
      expect(cents).to.be.within(105, 200);
      // a value the curve shows: the first ms at which it reaches the target shows it
      expect(Number(curveCents(curveTime(BigInt(cents))))).to.equal(cents);
    }
    // evenly over time, so half the draws fall in the first half of the flight's span
    const middle = Number(curveCents(Math.floor((curveTime(105n) + curveTime(200n)) / 2)));
    expect(targets.filter((cents) => cents < middle).length).to.be.within(480, 520);
  });

  it('has one player in four cash out automatically, every operator some of them', () => {
    // 50 operators, 2000 players dealt in turn: each operator's 40 players, 10 of them automatic
    for (let operator = 0; operator < 50; operator++) {
      const own = Array.from({ length: 40 }, (_, j) => operator + 50 * j);
      expect(own.filter((index) => cashesOutAutomatically(index, 50)), `operator ${operator}`).to.have.length(10);
    }
    // a smoke run's 6 players on 2 operators: one of each operator's three
    expect([0, 1, 2, 3, 4, 5].map((index) => cashesOutAutomatically(index, 2))).to.deep.equal([false, false, true, true, false, false]);
  });

  it('reads --cash-out-max as a multiplier with two decimals above 1.05, at most 10.00', () => {
    expect(parseCashOutMax('2.00')).to.equal(200);
    expect(parseCashOutMax('10.00')).to.equal(1000);
    for (const text of ['1.05', '2', '2.0', '10.01', 'x']) expect(parseCashOutMax(text), text).to.equal(undefined);
  });

  it('counts a cycle as the betting window, the flight to the highest target and the cooldown', () => {
    expect(crashCycleMs(1000, 200, 200)).to.equal(1000 + curveTime(200n) + 200);
  });

  it("runs the player's clock from serverTime as the round_state arrived: behind the service's by its delivery", () => {
    const flightStartedAt = Date.parse('2026-01-01T00:00:00.000Z');
    // sent 20 ms into the flight, delivered 30 ms later
    const receivedAt = flightStartedAt + 50;
    const clock = new FlightClock({ flightStartedAt: '2026-01-01T00:00:00.000Z', serverTime: '2026-01-01T00:00:00.020Z' }, receivedAt);
    expect(clock.startedAt).to.equal(flightStartedAt);
    expect(clock.flightMs(receivedAt)).to.equal(20);
    expect(clock.flightMs(flightStartedAt + 1000)).to.equal(970);
    // the target's first ms on the player's clock comes 30 ms late on the service's
    const target = curveTime(200n);
    expect(clock.localAt(target)).to.equal(flightStartedAt + target + 30);
    expect(clock.centsAt(clock.localAt(target))).to.equal(200);
    expect(clock.centsAt(clock.localAt(target) - 1)).to.equal(199);
    // before the flight, by the player's clock, the curve shows 1.00
    expect(clock.centsAt(flightStartedAt)).to.equal(100);
  });
});
