import { expect } from 'chai';
import { createLogger } from '../../src/shared/platform/logger.js';
import { FINISH_IN_FLIGHT_MS, SHUTDOWN_DEADLINE_MS, SHUTDOWN_STAGES, Shutdown, finishedInTime, type ShutdownClock } from '../../src/shared/platform/shutdown.js';

// The shutdown's order and its one deadline (D12, src/shared/platform/shutdown.ts). The clock here
// is the test's: time moves only when the test moves it, and a step's deadline passes only
// when the test fires it, so every assertion sees the shutdown between two of its moves.

type Sleep = { ms: number; fire: () => void };

function fakeClock() {
  let now = 1_000_000;
  const sleeps: Sleep[] = [];
  const clock: ShutdownClock = {
    now: () => now,
    sleep: (ms) => {
      let fire = () => {};
      const done = new Promise<void>((resolve) => {
        fire = resolve;
      });
      sleeps.push({ ms, fire });
      return { done, cancel: () => {} };
    },
  };
  return { clock, sleeps, advance: (ms: number) => (now += ms), startedAt: now };
}

function logLines() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { logger, lines };
}

// a step the test ends by hand
function pending() {
  let resolve = () => {};
  let reject = (_err: Error) => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = () => res();
    reject = rej;
  });
  return { promise, resolve, reject };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Shutdown (named steps, declared stages, one deadline)', () => {
  it('runs the stages in their declared order, whatever order the steps were added in', async () => {
    const ran: string[] = [];
    const shutdown = new Shutdown();
    const step = (name: string) => async () => void ran.push(name);
    shutdown.add('connections', 'service context', step('service context'));
    shutdown.add('work in flight', 'bet workers', step('bet workers'));
    shutdown.add('listeners', 'public listener', step('public listener'));
    shutdown.add('player channel', 'player channel', step('player channel'));
    const { logger } = logLines();
    expect(await shutdown.run(logger, { clock: fakeClock().clock })).to.deep.equal({ failed: [] });
    expect(SHUTDOWN_STAGES).to.deep.equal(['player channel', 'listeners', 'work in flight', 'connections']);
    expect(ran).to.deep.equal(['player channel', 'public listener', 'bet workers', 'service context']);
  });

  it('starts a stage once the one before it has finished, and runs the steps of a stage together', async () => {
    const started: string[] = [];
    const steps = { channel: pending(), bet: pending(), settle: pending() };
    const shutdown = new Shutdown();
    shutdown.add('player channel', 'player channel', () => (started.push('player channel'), steps.channel.promise));
    shutdown.add('work in flight', 'bet workers', () => (started.push('bet workers'), steps.bet.promise));
    shutdown.add('work in flight', 'settle workers', () => (started.push('settle workers'), steps.settle.promise));
    const { logger } = logLines();
    const outcome = shutdown.run(logger, { clock: fakeClock().clock });
    await turn();
    expect(started, 'the players are told first').to.deep.equal(['player channel']);
    steps.channel.resolve();
    await turn();
    expect(started, 'both pools close together').to.deep.equal(['player channel', 'bet workers', 'settle workers']);
    steps.settle.resolve();
    steps.bet.resolve();
    expect(await outcome).to.deep.equal({ failed: [] });
  });

  it('a step that throws or rejects is logged at error by its name, and the steps after it still run', async () => {
    const ran: string[] = [];
    const shutdown = new Shutdown();
    shutdown.add('listeners', 'public listener', () => {
      throw new Error('the listener failed to close');
    });
    shutdown.add('listeners', 'health listener', async () => {
      throw new Error('the health listener failed to close');
    });
    shutdown.add('work in flight', 'bet workers', async () => void ran.push('bet workers'));
    shutdown.add('connections', 'service context', async () => void ran.push('service context'));
    const { logger, lines } = logLines();
    const outcome = await shutdown.run(logger, { clock: fakeClock().clock });
    expect(ran, 'the workers still drain, the connections still close').to.deep.equal(['bet workers', 'service context']);
    expect(outcome.failed).to.deep.equal(['public listener', 'health listener']);
    const logged = lines.filter((l) => l.msg === 'shutdown step failed');
    expect(logged.map((l) => [l.level, l.step, l.stage, (l.err as { message: string }).message])).to.deep.equal([
      [50, 'public listener', 'listeners', 'the listener failed to close'],
      [50, 'health listener', 'listeners', 'the health listener failed to close'],
    ]);
  });

  it('has one deadline for every step: a later step gets what is left of it, and one still running at the deadline is logged and passed', async () => {
    const { clock, sleeps, advance, startedAt } = fakeClock();
    const givenUntil: number[] = [];
    const channel = pending();
    const ran: string[] = [];
    const shutdown = new Shutdown();
    shutdown.add('player channel', 'player channel', (until) => (givenUntil.push(until), channel.promise));
    // never finishes
    shutdown.add('work in flight', 'bet workers', (until) => (givenUntil.push(until), new Promise<void>(() => {})));
    shutdown.add('connections', 'service context', async (until) => void (givenUntil.push(until), ran.push('service context')));
    const { logger, lines } = logLines();
    const outcome = shutdown.run(logger, { clock });
    await turn();
    expect(sleeps.map((s) => s.ms), 'the first step has the whole deadline').to.deep.equal([SHUTDOWN_DEADLINE_MS]);
    advance(4000);
    channel.resolve();
    await turn();
    expect(sleeps.map((s) => s.ms), 'the next has what is left of the same deadline').to.deep.equal([SHUTDOWN_DEADLINE_MS, SHUTDOWN_DEADLINE_MS - 4000]);
    advance(SHUTDOWN_DEADLINE_MS - 4000);
    sleeps[1]!.fire();
    expect(await outcome).to.deep.equal({ failed: ['bet workers'] });
    expect(ran, 'the step after the one still running still ran').to.deep.equal(['service context']);
    expect(sleeps[2]!.ms, 'nothing is left of the deadline for it').to.equal(0);
    expect(lines.filter((l) => l.msg === 'shutdown step still running at the deadline').map((l) => [l.level, l.step])).to.deep.equal([[50, 'bet workers']]);
    expect(givenUntil, 'every step has the same instant for its work in flight').to.deep.equal([0, 1, 2].map(() => startedAt + FINISH_IN_FLIGHT_MS));
  });

  it('runs once: a second signal gets the outcome of the first', async () => {
    let runs = 0;
    const shutdown = new Shutdown();
    shutdown.add('listeners', 'public listener', async () => {
      runs++;
      throw new Error('failed');
    });
    const { logger } = logLines();
    const { clock } = fakeClock();
    const [first, second] = await Promise.all([shutdown.run(logger, { clock }), shutdown.run(logger, { clock })]);
    expect(runs).to.equal(1);
    expect(first).to.equal(second);
    expect(first.failed).to.deep.equal(['public listener']);
  });
});

describe('finishedInTime (the work in flight at shutdown)', () => {
  it('is true for work that finished, false for work still running at the instant given', async () => {
    expect(await finishedInTime(Promise.resolve(), Date.now())).to.equal(true);
    expect(await finishedInTime(new Promise(() => {}), Date.now() - 1)).to.equal(false);
  });
});
