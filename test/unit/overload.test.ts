import { expect } from 'chai';
import { Writable } from 'node:stream';
import { OverloadGate, REFUSAL_LOG_EVERY_MS, overloaded } from '../../src/shared/platform/overload.js';
import { createLogger } from '../../src/shared/platform/logger.js';
import { createMetrics } from '../../src/shared/platform/metrics.js';

// D37: when a process counts itself busy. Its clock is the test's, and the samples the
// gate's timer would take are taken by hand, so each assertion sees one exact moment.

// warmUpMs: how long the process is still starting after it reports ready; `ready`: whether
// it has reported ready (the gates of most tests are past their start-up)
function gateAt(boundMs: number, { warmUpMs = 0, ready = true }: { warmUpMs?: number; ready?: boolean } = {}) {
  let now = 1000;
  const gate = new OverloadGate(boundMs, () => now, warmUpMs);
  if (ready) gate.ready();
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

// what the service's logger writes, as parsed lines, and the refusal counter's values
function logged() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const svc = { logger: createLogger({ level: 'info', format: 'json', destination }), metrics: createMetrics() };
  const entries = () => lines.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  const counted = async (kind: string) => (await svc.metrics.overloadRefusals.get()).values.find((v) => v.labels.kind === kind)?.value ?? 0;
  return { svc, entries, counted };
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

  it('refuses nothing while the process starts: before it reports ready, in the warm-up after, and while a recovery it began with runs', async () => {
    const t = gateAt(100, { warmUpMs: 1000, ready: false });
    t.gate.start();
    try {
      let recovered = () => {};
      const recovery = new Promise<void>((resolve) => {
        recovered = resolve;
      });
      // loading, connecting, recovering: the loop late turn after turn, a queue waiting
      let waited = 500;
      t.gate.watch(() => waited);
      t.gate.startingWith(recovery);
      for (let i = 0; i < 10; i++) t.blocked(150);
      expect(t.gate.busy()).to.equal(false);
      t.gate.ready();
      // the warm-up: the first requests run code for the first time
      for (let i = 0; i < 10; i++) t.blocked(150);
      expect(t.gate.busy()).to.equal(false);
      // past the warm-up, the recovery still runs
      t.wait(1000);
      for (let i = 0; i < 4; i++) t.blocked(150);
      expect(t.gate.state()).to.include({ busy: false });
      recovered();
      await recovery;
      waited = 0;
      // start-up over: what it delayed is not counted, the loop's window starts now
      t.onTime(20);
      expect(t.gate.warm()).to.equal(true);
      expect(t.gate.state()).to.deep.equal({ busy: false, loopDelayMs: 0, queueWaitMs: 0 });
      // and from now on the gate counts
      for (let i = 0; i < 8; i++) t.blocked(120);
      expect(t.gate.busy()).to.equal(true);
      waited = 500;
      // a recovery begun later (another node's crash) is ordinary work
      t.gate.startingWith(new Promise<void>(() => {}));
      t.onTime(200);
      expect(t.gate.state()).to.include({ busy: true, queueWaitMs: 500 });
    } finally {
      t.gate.stop();
    }
  });

  it('logs refusals at most once per interval and kind, with the count since the last line, the reason and the delays', async () => {
    const t = gateAt(100);
    const { svc, entries, counted } = logged();
    let waited = 250;
    t.gate.watch(() => waited);
    t.gate.refuse('bet', svc);
    for (let i = 0; i < 4; i++) {
      t.wait(1000);
      t.gate.refuse('bet', svc);
    }
    t.gate.refuse('operator_call', svc);
    expect(entries()).to.have.length(2);
    expect(entries()[0]).to.deep.include({ level: 40, msg: 'overload: work refused service_busy', kind: 'bet', refused: 1, reason: 'queue_wait', queueWaitMs: 250, boundMs: 100 });
    expect(entries()[1]).to.deep.include({ kind: 'operator_call', refused: 1 });
    // the interval after the first line: the next refusal's line counts the four unlogged
    // and itself
    waited = 300;
    t.wait(REFUSAL_LOG_EVERY_MS - 4000);
    t.gate.refuse('bet', svc);
    expect(entries()).to.have.length(3);
    expect(entries()[2]).to.deep.include({ kind: 'bet', refused: 5, queueWaitMs: 300, sinceMs: REFUSAL_LOG_EVERY_MS });
    // every refusal is counted in the metric, logged or not
    expect(await counted('bet')).to.equal(6);
    expect(await counted('operator_call')).to.equal(1);
  });
});
