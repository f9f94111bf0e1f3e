import { subscribe } from 'node:diagnostics_channel';
import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { BET_STEP_CHANNEL, type BetStepMessage } from '../src/shared/platform/bet-steps.js';

// `--trace-bets`: loaded into every service process the bench starts (`node --import`,
// service.ts), never by the service itself. It records each step of a bet the service
// publishes (src/shared/platform/bet-steps.ts) as a `[betId, step, epochMs]` line in
// <BENCH_TRACE_DIR>/<pid>.jsonl, so that the steps of a bet that crosses processes (the split
// deployment) meet in one directory (bet-steps.ts reads them). The lines are written every
// FLUSH_EVERY_MS, and the rest when the process exits: an exit handler can only write
// synchronously, so every write is synchronous and the lines stay in the order published.

const FLUSH_EVERY_MS = 250;

const dir = process.env.BENCH_TRACE_DIR;
if (!dir) throw new Error('bench/trace-subscriber.ts needs BENCH_TRACE_DIR: the directory of the bet step files');

const fd = openSync(path.join(dir, `${process.pid}.jsonl`), 'a');
let lines: string[] = [];

function flush(): void {
  if (lines.length === 0) return;
  writeSync(fd, `${lines.join('\n')}\n`);
  lines = [];
}

subscribe(BET_STEP_CHANNEL, (message) => {
  const { betId, step, at } = message as BetStepMessage;
  lines.push(JSON.stringify([betId, step, at]));
});
setInterval(flush, FLUSH_EVERY_MS).unref();
process.once('exit', () => {
  flush();
  closeSync(fd);
});
