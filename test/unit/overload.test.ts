import { expect } from 'chai';
import { OverloadGate, overloaded } from '../../src/platform/overload.js';

// D37: when a process counts itself busy. Its clock is the test's, and the samples the
// gate's timer would take are taken by hand, so each assertion sees one exact moment.

function gateAt(boundMs: number) {
  let now = 1000;
  const gate = new OverloadGate(boundMs, () => now);
  return {
    gate,
    // the loop runs on time for ms: one sample every 20 ms
    onTime(ms: number) {
      for (let t = 0; t < ms; t += 20) {
        now += 20;
        gate.sample();
      }
    },
    // the loop is blocked for ms, then the overdue sample runs
    blocked(ms: number) {
      now += 20 + ms;
      gate.sample();
    },
    wait(ms: number) {
      now += ms;
    },
  };
}

// a gate whose sampling runs (start) for the length of body
function running(boundMs: number, body: (t: ReturnType<typeof gateAt>) => void) {
  const t = gateAt(boundMs);
  t.gate.start();
  try {
    body(t);
  } finally {
    t.gate.stop();
  }
}

describe('overload gate (D37)', () => {
  it('is busy only past its bound, on the worse of loop delay and queue wait; 0 means no bound', () => {
    expect(overloaded(100, 20, 30)).to.equal(false);
    expect(overloaded(100, 101, 0)).to.equal(true);
    expect(overloaded(100, 0, 150)).to.equal(true);
    expect(overloaded(100, 100, 100)).to.equal(false);
    expect(overloaded(0, 5000, 5000)).to.equal(false);
  });

  it('counts a loop that stays late as busy, and resumes within two windows of catching up', () => {
    running(100, (t) => {
      t.onTime(200);
      expect(t.gate.busy()).to.equal(false);
      // every turn runs 120 ms past its due time
      for (let i = 0; i < 8; i++) t.blocked(120);
      expect(t.gate.state()).to.include({ busy: true, loopDelayMs: 120 });
      // back on time: the window that was late still counts
      t.onTime(40);
      expect(t.gate.busy()).to.equal(true);
      t.onTime(200);
      expect(t.gate.state()).to.deep.equal({ busy: false, loopDelayMs: 0, queueWaitMs: 0 });
    });
  });

  it('counts one long turn only until the loop is back on time: what it delayed cannot be given back', () => {
    running(100, (t) => {
      t.onTime(200);
      t.blocked(150);
      expect(t.gate.state()).to.include({ busy: true, loopDelayMs: 150 });
      t.onTime(20);
      expect(t.gate.busy()).to.equal(false);
    });
  });

  it('counts a sample that is overdue now: work arriving in a long turn sees that turn', () => {
    running(100, (t) => {
      t.onTime(40);
      t.wait(130);
      expect(t.gate.busy()).to.equal(true);
    });
  });

  it('is busy while any watched queue holds an item older than the bound, and not once it is gone', () => {
    const t = gateAt(100);
    let waited = 0;
    const unwatch = t.gate.watch(() => waited);
    t.gate.watch(() => 10);
    expect(t.gate.busy()).to.equal(false);
    waited = 250;
    expect(t.gate.state()).to.deep.equal({ busy: true, loopDelayMs: 0, queueWaitMs: 250 });
    unwatch();
    expect(t.gate.state()).to.deep.equal({ busy: false, loopDelayMs: 0, queueWaitMs: 10 });
  });

  it('with no bound never samples and is never busy', () => {
    const t = gateAt(0);
    t.gate.start();
    t.gate.watch(() => 60_000);
    t.blocked(10_000);
    expect(t.gate.busy()).to.equal(false);
    t.gate.stop();
  });
});
