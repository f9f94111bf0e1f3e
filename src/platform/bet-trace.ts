import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import { epochMs } from './clock.js';

// Where a bet's acknowledgement spends its time, step by step, for the benchmark's
// `--trace-bets`. Off unless BET_TRACE_DIR is set; then each
// process appends `[betId, step, epochMs]` lines to <dir>/<pid>.jsonl, so that the steps of a
// bet that crosses processes (the split deployment) meet in one place. The times are this
// machine's clock with sub-millisecond resolution (clock.ts).
//
// The steps, in the order a real-money bet passes them:
// - received: place_bet reached the realtime node's handler;
// - placed: its bet row is written (placement.ts, with the bets placed at the same moment);
// - queued: its bet job is in the queue;
// - picked_up: a bet worker started the job;
//   (neither where the realtime node debits its own bets: local-debits.ts)
// - audited: the debit's audit row is committed (contract 2.13), just before the call (where
//   the realtime node debits its own bets, by the statement that placed the bet: the same
//   moment as placed);
// - debited: the wallet answered /wallet/bet;
// - accepted: the acceptance statement returned;
// - acked: the realtime node wrote the ack to the player's socket.
// A demo bet has no audited and no debited step.
export const BET_STEPS = ['received', 'placed', 'queued', 'picked_up', 'audited', 'debited', 'accepted', 'acked'] as const;
export type BetStep = (typeof BET_STEPS)[number];
// the bet job's queue hop: absent where the realtime node debits its own bets (local-debits.ts)
export const QUEUE_HOP_STEPS: readonly BetStep[] = ['queued', 'picked_up'];

const FLUSH_EVERY_MS = 250;

export class BetTrace {
  private lines: string[] = [];
  private readonly out: WriteStream | undefined;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(dir: string | undefined) {
    if (!dir) return;
    this.out = createWriteStream(path.join(dir, `${process.pid}.jsonl`), { flags: 'a' });
    this.timer = setInterval(() => this.flush(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  // `at`: a moment taken earlier with epochMs(), for a step whose bet id came later
  step(betId: string, step: BetStep, at: number = epochMs()): void {
    if (this.out) this.lines.push(JSON.stringify([betId, step, at]));
  }

  close(): Promise<void> {
    const out = this.out;
    if (!out) return Promise.resolve();
    clearInterval(this.timer);
    this.flush();
    return new Promise((resolve) => out.end(resolve));
  }

  private flush(): void {
    if (this.lines.length === 0) return;
    this.out!.write(`${this.lines.join('\n')}\n`);
    this.lines = [];
  }
}
