import { expect } from 'chai';
import { idleOf, isRefusal, overloadOf } from '../../../bench/analysis.js';
import type { BetRecord } from '../../../bench/players.js';
import type { BoxUsage, Snapshot } from '../../../bench/usage.js';

// The report's overload section (D37) from the players' bets: a bet the service acked
// {ok: false, reason: 'service_busy'} is refused, neither accepted nor a failure.

const bet = (sentAt: number, ack: Partial<BetRecord>): BetRecord => ({ cycleId: 'c', sentAt, ...ack });

describe('bench overload section', () => {
  it('counts the offered bets, the accepted, and the refused with their ack latency and rate', () => {
    const bets = [
      bet(0, { ackAt: 40, ok: true, betId: 'b1', roundId: 'r1' }),
      bet(10, { ackAt: 12, ok: false, reason: 'service_busy' }),
      bet(20, { ackAt: 25, ok: false, reason: 'service_busy' }),
      bet(30, { ackAt: 900, ok: false, reason: 'phase_not_open' }),
      bet(40, {}),
    ];
    const overload = overloadOf(bets, 3, 2);
    expect(overload).to.deep.include({
      betsOffered: 5,
      betsAccepted: 1,
      betsRefused: 2,
      refusedPerS: 1,
      refusedPercentOfOffered: 40,
      sessionCreatesRefused: 3,
    });
    expect(overload.refusalAckMs).to.include({ count: 2, p50: 2, p99: 5, max: 5 });
    expect(bets.map(isRefusal)).to.deep.equal([false, true, true, false, false]);
  });

  it('is there with nothing refused, its latency without samples', () => {
    const overload = overloadOf([bet(0, { ackAt: 3, ok: true })], 0, 1);
    expect(overload).to.deep.include({ betsOffered: 1, betsAccepted: 1, betsRefused: 0, refusedPerS: 0, refusedPercentOfOffered: 0, sessionCreatesRefused: 0 });
    expect(overload.refusalAckMs).to.include({ count: 0, p50: null, p99: null });
  });
});

// The idle window's section: the service's CPU with every player connected and none betting,
// whole and per operator (the target: at most 0.5 % of a core per operator), beside what
// Postgres, Redis and the whole box spent over the same window.

const usage = (cpuSeconds: number) => ({ cpuSeconds, rssKiB: 0, peakRssKiB: 0 });
const snap = (at: number, cpu: Record<string, number>): Snapshot => ({
  at,
  processes: Object.fromEntries(Object.entries(cpu).map(([name, seconds]) => [name, usage(seconds)])),
});
const box = (at: number, busySeconds: number, postgres: number, redis: number): BoxUsage => ({ at, busySeconds, byServer: { postgres, redis } });

describe('bench idle section', () => {
  it('divides the service processes\' CPU over the window by the operators, and reads the box over its own marks', () => {
    // 5 s: the service's two processes spent 0.3 s and 0.2 s, a tenth of a core
    const service = { start: snap(1000, { web: 10, worker: 4 }), end: snap(6000, { web: 10.3, worker: 4.2 }) };
    // the box's marks a little later than the service's: each window over its own clock
    const idle = idleOf(service, { start: box(1010, 100, 20, 5), end: box(5010, 101.2, 20.16, 5.02) }, 50, 2000);
    expect(idle).to.deep.equal({
      seconds: 5,
      operators: 50,
      players: 2000,
      serviceCpuPercent: 10,
      serviceCpuPercentPerOperator: 0.2,
      postgresCpuPercent: 4,
      redisCpuPercent: 0.5,
      boxCpuPercent: 30,
    });
  });

  it('keeps the per-operator figure finer than the whole, which is rounded to a tenth', () => {
    // 0.0123 s over 3 s: 0.41 % of a core, 0.041 % for each of 10 operators
    const service = { start: snap(0, { all: 1 }), end: snap(3000, { all: 1.0123 }) };
    const idle = idleOf(service, { start: box(0, 0, 0, 0), end: box(3000, 0, 0, 0) }, 10, 10);
    expect(idle).to.include({ serviceCpuPercent: 0.4, serviceCpuPercentPerOperator: 0.041, boxCpuPercent: 0 });
  });

  it('reports zeros rather than dividing by an empty window or no operators', () => {
    const at = snap(5, { all: 1 });
    const idle = idleOf({ start: at, end: at }, { start: box(5, 1, 1, 1), end: box(5, 1, 1, 1) }, 0, 0);
    expect(idle).to.deep.equal({
      seconds: 0,
      operators: 0,
      players: 0,
      serviceCpuPercent: 0,
      serviceCpuPercentPerOperator: 0,
      postgresCpuPercent: 0,
      redisCpuPercent: 0,
      boxCpuPercent: 0,
    });
  });
});
