import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { betSteps, readBetSteps, type BetStepTimes } from '../../../bench/bet-steps.js';
import { BET_STEPS } from '../../../src/shared/platform/bet-steps.js';

// `--trace-bets`: the steps of each accepted bet, read from every service process's
// file, and where the slowest acks spend their time.

// a bet sent at `sent` whose steps each take the given milliseconds, in BET_STEPS order,
// then `last` ms from the ack's write to the player
function tracedBet(betId: string, sent: number, stepMs: number[], last: number) {
  const steps: Record<string, number> = {};
  let at = sent;
  BET_STEPS.forEach((step, i) => {
    at += stepMs[i]!;
    steps[step] = at;
  });
  return { betId, steps, acked: { betId, sentAt: sent, ackAt: at + last } };
}

describe('bench bet steps (--trace-bets)', () => {
  it('times each step of every fully traced bet, and the mean of each in the slowest hundredth of acks', () => {
    const bets = Array.from({ length: 199 }, (_, i) => tracedBet(`b${i}`, 1000 * i, [1, 1, 1, 1, 1, 1, 1, 1], 1));
    // the two slowest acks (the slowest hundredth of 200, rounded up): slow in the wallet call
    bets.push(tracedBet('slow-1', 5, [1, 1, 1, 1, 1, 30, 1, 1], 1), tracedBet('slow-2', 7, [1, 1, 1, 1, 1, 50, 1, 1], 1));
    const times: BetStepTimes = new Map(bets.map((bet) => [bet.betId, bet.steps]));
    // a demo bet (no debit) and a bet the service never traced are left out
    const { audited: _audited, debited: _debited, ...demo } = tracedBet('demo', 3, [1, 1, 1, 1, 1, 1, 1, 1], 1).steps;
    times.set('demo', demo);
    const acked = [...bets.map((bet) => bet.acked), { betId: 'demo', sentAt: 3, ackAt: 12 }, { betId: 'untraced', sentAt: 0, ackAt: 90 }];

    const report = betSteps(times, acked);
    expect(report.bets).to.equal(201);
    expect(report.slowestCount).to.equal(3);
    const byName = new Map(report.steps.map((step) => [`${step.from}>${step.to}`, step]));
    expect(byName.get('sent>received')!.ms.p50).to.equal(1);
    const debit = byName.get('audited>debited')!;
    expect(debit.ms.max).to.equal(50);
    // the slowest three: 50, 30 and one of the 1 ms calls
    expect(debit.slowestMeanMs).to.equal(27);
    expect(byName.get('acked>at the player')!.slowestMeanMs).to.equal(1);
    // the span the bet path skeleton runs: received to accepted, six steps
    expect(report.receivedToAcceptedMs).to.include({ count: 201, p50: 6, max: 55 });
  });

  it('where the realtime node debits its own bets (no queue hop), goes from placed straight to audited', () => {
    const bets = Array.from({ length: 10 }, (_, i) => tracedBet(`b${i}`, 1000 * i, [1, 2, 0, 0, 3, 4, 5, 6], 1));
    const times: BetStepTimes = new Map(
      bets.map((bet) => {
        const { queued: _queued, picked_up: _pickedUp, ...steps } = bet.steps;
        return [bet.betId, steps];
      }),
    );
    const report = betSteps(
      times,
      bets.map((bet) => bet.acked),
    );
    expect(report.bets).to.equal(10);
    expect(report.steps.map((step) => `${step.from}>${step.to}`)).to.deep.equal([
      'sent>received',
      'received>placed',
      'placed>audited',
      'audited>debited',
      'debited>accepted',
      'accepted>acked',
      'acked>at the player',
    ]);
    expect(report.steps.find((step) => step.to === 'audited')!.ms.p50).to.equal(3);
    expect(report.receivedToAcceptedMs.p50).to.equal(14);
  });

  it('reads every process file, keeping the first time a step was recorded', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rgs-steps-'));
    try {
      await writeFile(path.join(dir, '100.jsonl'), `${JSON.stringify(['b1', 'received', 10])}\n${JSON.stringify(['b1', 'acked', 19])}\n`);
      // a redelivered job: picked up twice, in another process
      await writeFile(
        path.join(dir, '200.jsonl'),
        ['picked_up', 'picked_up', 'debited'].map((step, i) => JSON.stringify(['b1', step, 13 + i])).join('\n') + '\n',
      );
      await writeFile(path.join(dir, 'notes.txt'), 'not a trace');
      const times = await readBetSteps(dir);
      expect(times.get('b1')).to.deep.equal({ received: 10, acked: 19, picked_up: 13, debited: 15 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('records the steps a service process publishes, when the bench loads its subscriber into it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'rgs-steps-'));
    try {
      const root = fileURLToPath(new URL('../../../', import.meta.url));
      const before = Date.now();
      await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', './bench/trace-subscriber.ts', 'test/unit/bench/fixtures/bet-steps-process.ts'], {
        cwd: root,
        env: { ...process.env, BENCH_TRACE_DIR: dir },
      });
      const b1 = (await readBetSteps(dir)).get('b1');
      expect(Object.keys(b1 ?? {}), 'the steps written at exit').to.deep.equal(['received', 'placed']);
      expect(b1!.received).to.equal(10);
      expect(b1!.placed).to.be.at.least(before);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
