import type { Logger } from './logger.js';

// D12: a process stops within 10 s of SIGTERM. This is the one deadline of its shutdown:
// every step below runs within it, counted from the signal.
export const SHUTDOWN_DEADLINE_MS = 10_000;

// D12: of that deadline, the work in flight (a wallet call ends within its timeout) is let
// finish until this long after the signal; what is still running then is left to another
// process (a queue job's lock lapses) or to recovery (a node's own debits), and the rest of
// the deadline closes the connections.
export const FINISH_IN_FLIGHT_MS = 7000;

// The stages of a shutdown, in the order they run (D12). This list is the one place that
// order is declared; a role adds its steps to a stage by name (roles.ts).
// - player channel: intake stops, players get their reconnect hint and their sockets close
// - listeners: the HTTP listeners close, once the players were told
// - work in flight: worker pools, the scheduler (D30: it hands over) and the node's own
//   debits finish or hand back what they run, all together
// - connections: Postgres, Redis and the queues, once nothing uses them
export const SHUTDOWN_STAGES = ['player channel', 'listeners', 'work in flight', 'connections'] as const;
export type ShutdownStage = (typeof SHUTDOWN_STAGES)[number];

// A step is given the time (ms since the epoch) by which its work in flight must have
// finished or been handed back (finishedInTime); it is the same instant for every step.
export type ShutdownStep = (inFlightUntil: number) => Promise<void>;

export type ShutdownOutcome = { failed: string[] };

export type ShutdownClock = {
  now: () => number;
  // resolves after ms; cancel lets the process exit without waiting for it
  sleep: (ms: number) => { done: Promise<void>; cancel: () => void };
};

const realClock: ShutdownClock = {
  now: () => Date.now(),
  sleep: (ms) => {
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    return { done, cancel: () => clearTimeout(timer) };
  },
};

export type ShutdownOptions = { deadlineMs?: number; inFlightMs?: number; clock?: ShutdownClock };

// Named steps in the declared stages, run stage after stage under one deadline (D12). The
// steps of a stage run together. A step that throws, or is still running at the deadline,
// is logged at error with its name, and the following steps and stages still run: one
// failing close() must not keep the workers from finishing their jobs. Runs once: a second
// signal gets the same outcome.
export class Shutdown {
  private readonly steps: { stage: ShutdownStage; name: string; run: ShutdownStep }[] = [];
  private running: Promise<ShutdownOutcome> | undefined;

  add(stage: ShutdownStage, name: string, run: ShutdownStep): void {
    this.steps.push({ stage, name, run });
  }

  run(logger: Pick<Logger, 'error'>, options: ShutdownOptions = {}): Promise<ShutdownOutcome> {
    this.running ??= this.runOnce(logger, options);
    return this.running;
  }

  private async runOnce(logger: Pick<Logger, 'error'>, options: ShutdownOptions): Promise<ShutdownOutcome> {
    const { deadlineMs = SHUTDOWN_DEADLINE_MS, inFlightMs = FINISH_IN_FLIGHT_MS, clock = realClock } = options;
    const startedAt = clock.now();
    const deadline = startedAt + deadlineMs;
    const inFlightUntil = startedAt + Math.min(inFlightMs, deadlineMs);
    const failed: string[] = [];
    for (const stage of SHUTDOWN_STAGES) {
      const steps = this.steps.filter((step) => step.stage === stage);
      await Promise.all(
        steps.map(async ({ name, run }) => {
          const timeout = clock.sleep(Math.max(0, deadline - clock.now()));
          // a step that throws synchronously fails like one that rejects
          const step = Promise.resolve().then(() => run(inFlightUntil));
          try {
            const finished = await Promise.race([step.then(() => true), timeout.done.then(() => false)]);
            if (!finished) {
              failed.push(name);
              logger.error({ step: name, stage }, 'shutdown step still running at the deadline');
            }
          } catch (err) {
            failed.push(name);
            logger.error({ step: name, stage, err }, 'shutdown step failed');
          } finally {
            timeout.cancel();
          }
        }),
      );
    }
    return { failed };
  }
}

// true when the work finished by `until` (ms since the epoch; FINISH_IN_FLIGHT_MS from now
// when not given), false when it was still running
export async function finishedInTime(work: Promise<unknown>, until = Date.now() + FINISH_IN_FLIGHT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()));
  });
  const finished = await Promise.race([work.then(() => true as const), deadline]);
  clearTimeout(timer);
  return finished;
}
