import { expect } from 'chai';
import { BET_ACK_STEPS, chainFloor, seeded } from '../../../bench/path-floor.js';

// The floor of a bet ack under load: the chain of the machine's steps a bet cannot skip,
// each drawn from what that step cost while the players bet.

// a chain for the arithmetic below
const steps = { postgresCommitMs: 3, redisPingMs: 2, loopbackHttpMs: 2 };

describe('bench chain floor', () => {
  it('the bet ack chain is two commits, two Redis round trips and two loopback exchanges', () => {
    expect(BET_ACK_STEPS).to.deep.equal({ postgresCommitMs: 2, redisPingMs: 2, loopbackHttpMs: 2 });
  });

  it('steps that always cost the same add up exactly', () => {
    const floor = chainFloor({ postgresCommitMs: [0.5], redisPingMs: [0.1], loopbackHttpMs: [0.3] }, steps, 1000);
    expect(floor).to.deep.equal({ count: 1000, p50: 2.3, p99: 2.3, p99Interval: [2.3, 2.3], max: 2.3, mean: 2.3 });
  });

  it('a step that is slow one time in ten makes the chain slow far more often: its p99 is the slow case', () => {
    // a commit of 10 ms one time in ten, otherwise 1 ms; the other steps free
    const commits = [...Array.from({ length: 9 }, () => 1), 10];
    const floor = chainFloor({ postgresCommitMs: commits, redisPingMs: [0], loopbackHttpMs: [0] }, steps, 20_000);
    // three commits: all fast (p = 0.729) costs 3 ms, one slow 12 ms, two slow 21 ms (p = 0.027)
    expect(floor.p50).to.equal(3);
    expect(floor.p99).to.equal(21);
    expect(floor.max).to.be.at.most(30);
    expect(floor.mean).to.be.closeTo(3 * 1.9, 0.15);
  });

  it('the same samples give the same floor (the draws are seeded)', () => {
    const samples = { postgresCommitMs: [0.2, 0.4, 3.1, 0.3], redisPingMs: [0.05, 0.9], loopbackHttpMs: [0.2, 0.25, 7] };
    expect(chainFloor(samples, steps)).to.deep.equal(chainFloor(samples, steps));
    expect(chainFloor(samples, steps, 500, seeded(7))).to.not.deep.equal(chainFloor(samples, steps, 500, seeded(8)));
  });

  it('no samples of a step the chain needs: no floor rather than a made-up one', () => {
    const floor = chainFloor({ postgresCommitMs: [], redisPingMs: [0.1], loopbackHttpMs: [0.3] }, steps);
    expect(floor.count).to.equal(0);
    expect(floor.p99).to.equal(null);
  });

  it('the seeded draws cover [0, 1) evenly', () => {
    const random = seeded(42);
    const buckets = Array.from({ length: 10 }, () => 0);
    // one assertion for the whole draw rather than one per value (chai's cost would dominate)
    const outside: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      const value = random();
      if (!(value >= 0 && value < 1)) outside.push(value);
      else buckets[Math.floor(value * 10)]! += 1;
    }
    expect(outside, 'draws outside [0, 1)').to.deep.equal([]);
    for (const count of buckets) expect(count).to.be.within(9_500, 10_500);
  });
});
