import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Report } from '../../../bench/report.js';
import { runBench } from '../../support/bench-run.js';
import { p99IntervalRanks, type Summary } from '../../../bench/stats.js';

// The benchmark is not a test and nothing here is timed: this runs it with a tiny
// load, as a real child process against the real Postgres and Redis, so that it cannot rot.
// It must finish, and its results file must hold every section, measured.

// every leaf under the value, with its path
function leaves(value: unknown, at: string): [string, unknown][] {
  if (typeof value !== 'object' || value === null) return [[at, value]];
  return Object.entries(value).flatMap(([key, inner]) => leaves(inner, `${at}.${key}`));
}

// every latency summary under the value, with its path
function summaries(value: unknown, at: string): [string, Summary][] {
  if (typeof value !== 'object' || value === null) return [];
  if ('p99Interval' in value) return [[at, value as Summary]];
  return Object.entries(value).flatMap(([key, inner]) => summaries(inner, `${at}.${key}`));
}

describe('npm run bench -- --smoke', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rgs-bench-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a tiny load to the end and reports every section with measured numbers', async () => {
    const out = path.join(dir, 'smoke.json');
    const run = await runBench('--smoke', '--out', out, '--trace-bets', path.join(dir, 'steps'), '--skeleton');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.include('bet ack');
    expect(run.stdout).to.include('bet ack step by step');
    expect(run.stdout).to.include('the bet path skeleton while betting');

    const report = JSON.parse(await readFile(out, 'utf8')) as Report;
    const { postgres, ...floors } = report.floors;
    expect(postgres.synchronousCommit).to.be.a('string');
    const measured = {
      floors,
      sessionCreate: report.sessionCreate,
      connect: report.connect,
      // --skeleton: the bet path's bare steps ran beside the players
      floorsWhileBetting: report.floorsWhileBetting,
      betAck: report.betAck,
      settlement: report.settlement,
      walletOverhead: report.walletOverhead,
      throughput: report.throughput,
      failures: { operations: report.failures.operations, total: report.failures.total, rate: report.failures.rate },
      resources: report.resources,
    };
    // a p99's interval is missing only where its samples are too few to bound it (stats.ts),
    // as they are in a few seconds of a tiny load
    const latencies = summaries(measured, 'report');
    expect(latencies.length).to.be.above(10);
    for (const [at, summary] of latencies) expect(summary.p99Interval === null, at).to.equal(p99IntervalRanks(summary.count) === null);
    for (const [at, value] of leaves(measured, 'report').filter(([where, v]) => !(where.endsWith('.p99Interval') && v === null))) {
      expect(value, at).to.be.a('number');
      expect(Number.isFinite(value), at).to.equal(true);
    }
    // every latency section has samples: a count of 0 would mean a path went unmeasured
    for (const [at, value] of leaves(measured, 'report').filter(([where]) => where.endsWith('.count'))) {
      expect(value, at).to.be.above(0);
    }
    expect(report.throughput.acceptedBetsPerS).to.be.above(0);

    // the idle window (players connected, none betting): its section and its line are there,
    // every figure a finite number; how much CPU it shows is not asserted
    const { idle } = report.resources;
    expect(Object.keys(idle).sort()).to.deep.equal(
      ['boxCpuPercent', 'operators', 'players', 'postgresCpuPercent', 'redisCpuPercent', 'seconds', 'serviceCpuPercent', 'serviceCpuPercentPerOperator'],
    );
    for (const [at, value] of Object.entries(idle)) {
      expect(value, at).to.be.a('number');
      expect(Number.isFinite(value), at).to.equal(true);
    }
    expect(idle).to.include({ operators: report.run.options.operators, players: report.connect.connected });
    expect(idle.seconds).to.be.above(0);
    for (const phases of [report.resources.service.cpuPercentByPhase, ...Object.values(report.resources.service.processes).map((p) => p.cpuPercentByPhase)]) {
      expect(Object.keys(phases)).to.deep.equal(['sessions', 'connect', 'idle', 'betting']);
    }
    expect(run.stdout).to.match(
      new RegExp(`^idle {8}${idle.players} players connected on ${idle.operators} operators, no bets, \\d+ s: service [0-9.]+ % of a core \\([0-9.]+ % per operator\\), postgres [0-9.]+ %, redis [0-9.]+ %`, 'm'),
    );

    // D37: the overload section is in every run, --overload or not; whether a tiny load meets
    // the service's intake bound is not asserted, only that what it counts adds up
    const { refusalAckMs, ...overload } = report.overload;
    expect(Object.keys(overload).sort()).to.deep.equal(
      ['betsAccepted', 'betsOffered', 'betsRefused', 'refusedPerS', 'refusedPercentOfOffered', 'sessionCreatesRefused'],
    );
    for (const [at, value] of Object.entries(overload)) {
      expect(value, at).to.be.a('number');
      expect(Number.isFinite(value), at).to.equal(true);
    }
    expect(overload.betsAccepted).to.be.above(0);
    expect(overload.betsAccepted).to.equal(report.betAck.latencyMs.count);
    expect(overload.betsAccepted + overload.betsRefused).to.be.at.most(overload.betsOffered);
    expect(refusalAckMs.count).to.equal(overload.betsRefused);
    for (const key of ['p50', 'p99', 'max', 'mean'] as const) {
      if (refusalAckMs.count > 0) expect(refusalAckMs[key], key).to.be.a('number');
      else expect(refusalAckMs[key], key).to.equal(null);
    }
    expect(run.stdout).to.include('bet refused service_busy (place_bet to its ack)');
    expect(run.stdout).to.match(/^overload {4}bets offered \d+, accepted \d+, refused service_busy \d+ /m);
    // without --overload the first line names the players as given
    expect(report.run.options.overload).to.equal(false);
    expect(run.stdout).to.include(`${report.run.options.players} players on`);

    // the all-in-one process debits its own players' bets: no queue hop, and each bet's audit
    // row is written with its bet row, in the service's path and in its skeleton
    expect(report.run.betHandoff).to.equal('local');
    expect(run.stdout).to.include('all-in-one (bets debited by the realtime node)');
    expect(Object.keys(report.floorsWhileBetting.betPathSkeleton!.stepsMs)).to.deep.equal(['placed', 'debited', 'accepted']);

    // --trace-bets: every accepted bet's path, step by step, from the player's send to its ack
    const steps = report.betSteps!;
    expect(steps.bets, 'every accepted bet traced').to.equal(report.betAck.latencyMs.count);
    expect(['sent', ...steps.steps.map(({ to }) => to)].join(' > ')).to.equal('sent > received > placed > audited > debited > accepted > acked > at the player');
    expect(steps.receivedToAcceptedMs.count).to.equal(steps.bets);
    expect(steps.steps.find(({ to }) => to === 'audited')!.ms.max, 'audited by the placing statement').to.equal(0);
    for (const { from, to, ms } of steps.steps) {
      expect(ms.count, `${from}>${to}`).to.equal(steps.bets);
      expect(ms.p50, `${from}>${to}`).to.be.at.least(0);
    }
    // the steps add up to the ack: over the slowest acks their means sum to those acks' mean,
    // which lies between the ack's p50 and its max (each mean is rounded to 0.01 ms)
    const slowestAckMean = steps.steps.reduce((sum, { slowestMeanMs }) => sum + slowestMeanMs, 0);
    expect(slowestAckMean).to.be.within(report.betAck.latencyMs.p50! - 0.05, report.betAck.latencyMs.max! + 0.05);
    expect(report.failures.byKind, JSON.stringify(report.failures.byKind)).to.deep.equal({});
    expect(report.failures.total).to.equal(0);
    expect(report.crash).to.equal(null);
  });

  // D40: the same tiny load playing crash, its flights short (--smoke aims at 1.30x at most):
  // bets, cash-outs by hand and automatic, and the crash section's figures, every decision
  // agreeing with what its player was told (any disagreement is a failure)
  it('runs the crash game to the end and reports its cash-outs', async () => {
    const out = path.join(dir, 'crash.json');
    const run = await runBench('--smoke', '--game', 'crash', '--out', out);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.include('RGS benchmark (crash)');
    expect(run.stdout).to.include('cash-out ack (cash_out to ack)');
    expect(run.stdout).to.match(/^crash {7}targets 1\.05 to 1\.30; bets by hand \d+, auto \d+ .*cash-out ack p95 [0-9.]+ ms$/m);

    const report = JSON.parse(await readFile(out, 'utf8')) as Report;
    expect(report.run.options).to.include({ game: 'crash', cashOutMaxCents: 130 });
    const crash = report.crash!;
    expect(crash.bets.byHand + crash.bets.auto).to.equal(report.betAck.latencyMs.count);
    // every operator's second player cashes out automatically (bench/crash-play.ts)
    expect(crash.bets.auto).to.be.above(0);
    expect(crash.auto.won + crash.auto.lost).to.equal(crash.bets.auto);
    expect(crash.cashOuts.sent).to.equal(crash.cashOutAckMs.count);
    expect(crash.cashOuts.won + crash.cashOuts.tooLate).to.equal(crash.cashOuts.sent);
    expect(crash.cashOuts.sent + crash.cashOuts.notSentCrashedFirst).to.equal(crash.bets.byHand);
    expect(crash.grantedOffArrivalStamp).to.equal(0);
    for (const [at, summary] of summaries({ crash, settlement: report.settlement, betAck: report.betAck }, 'report')) {
      if (summary.count === 0) continue;
      for (const key of ['p50', 'p99', 'max', 'mean'] as const) expect(Number.isFinite(summary[key]), `${at}.${key}`).to.equal(true);
    }
    expect(report.betAck.latencyMs.count).to.be.above(0);
    expect(report.failures.byKind, JSON.stringify(report.failures.byKind)).to.deep.equal({});
  });

  // D41: the same tiny load playing Gem Vault, some plays buying the feature: every play's
  // round_result, and the wallet's wins against them (any difference is a failure)
  it('runs Gem Vault to the end and reports its plays and payouts', async () => {
    const out = path.join(dir, 'gems.json');
    const run = await runBench('--smoke', '--game', 'gems', '--feature-buy-share', '0.3', '--out', out);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.include('RGS benchmark (gems)');
    expect(run.stdout).to.include('play to round_result');

    const report = JSON.parse(await readFile(out, 'utf8')) as Report;
    expect(report.run.options).to.include({ game: 'gems' });
    const gems = report.gems!;
    expect(gems.plays.accepted).to.be.above(0);
    expect(gems.playToResultMs.count).to.equal(gems.plays.accepted);
    expect(gems.payouts.sumsEqual).to.equal(true);
    expect(gems.payouts.resultsMicro).to.equal(gems.payouts.walletWinsMicro);
    expect(gems.payouts).to.include({ winsMissing: 0, winsMismatched: 0 });
    expect(report.failures.byKind, JSON.stringify(report.failures.byKind)).to.deep.equal({});
    expect(report.crash).to.equal(null);
  });
});
