import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BetHandoff } from '../src/shared/platform/config.js';
import type { BetStepsReport } from './bet-steps.js';
import type { Floors } from './floors.js';
import type { HistoryInfo } from './history.js';
import type { BenchOptions } from './options.js';
import type { StepCounts } from './path-floor.js';
import type { SkeletonStep } from './skeleton.js';
import type { Summary } from './stats.js';
import type { CrashReport } from './crash-analysis.js';
import { CASH_OUT_MIN_CENTS, centsWords } from './crash-play.js';
import type { GemsReport } from './gems-analysis.js';

// The results of a run: the whole of it as JSON in a file, and a short table on stdout.

export type SegmentName =
  | 'placeToBetRow'
  | 'betRowToAuditRow'
  | 'auditRowToWallet'
  | 'insideWallet'
  | 'walletToAuditUpdate'
  | 'auditUpdateToAccepted'
  | 'acceptedToAck';

// percent of one core (200 = two cores busy) while sessions are created, players connect, they
// stay connected without betting (the idle window), and they bet
export type CpuByPhase = { sessions: number; connect: number; idle: number; betting: number };

export type Report = {
  run: {
    startedAt: string;
    finishedAt: string;
    options: Omit<BenchOptions, 'out'>;
    machine: { node: string; cpus: number; cpuModel: string; loadAverage: number[] };
    service: { name: string; roles: string }[];
    // the bets debited by the realtime node that placed them, or through the bet queue
    betHandoff: BetHandoff;
    // --history: the bets of the past the database held, the template they were copied
    // from, and how long seeding it (once) and copying it (this run) took; null: an empty database
    history: HistoryInfo | null;
  };
  floors: Floors;
  // the floors' steps timed while the players bet, and the least a bet ack can take when
  // built of them (path-floor.ts)
  floorsWhileBetting: {
    postgresCommitMs: Summary;
    redisPingMs: Summary;
    loopbackHttpMs: Summary;
    betAckChain: { steps: StepCounts; latencyMs: Summary };
    // with --skeleton only: the bet path's steps run bare while the players bet
    // (skeleton.ts): their sum, and each step
    betPathSkeleton: { latencyMs: Summary; stepsMs: Partial<Record<SkeletonStep, Summary>> } | null;
  };
  sessionCreate: { targetRate: number; achievedRate: number; attempted: number; created: number; latencyMs: Summary };
  connect: { attempted: number; connected: number; latencyMs: Summary };
  betAck: { latencyMs: Summary };
  // with --trace-bets only: the accepted bets' steps (bet-steps.ts)
  betSteps: BetStepsReport | null;
  // dice: from the end of ROLLING announced in round_state; crash: from the instant each
  // round was decided on the service's clock (crash-analysis.ts); gems: from the play's ack,
  // after which its outcome is derived at once (gems-analysis.ts)
  settlement: { roundResultMs: Summary; walletWinMs: Summary };
  // --game crash only (D40): its cash-outs
  crash: CrashReport | null;
  // --game gems only (D41): its plays, play to round_result, and the wallet's wins against
  // round_result's payouts
  gems: GemsReport | null;
  walletOverhead: {
    insideWalletMs: Summary;
    beforeWalletMs: Summary;
    afterWalletMs: Summary;
    serviceAddedMs: Summary;
    segmentsMs: Record<SegmentName, Summary>;
  };
  throughput: {
    bettingSeconds: number;
    betsSentPerS: number;
    acceptedBetsPerS: number;
    walletCallsPerS: number;
    walletCallsPerSByEndpoint: Record<string, number>;
  };
  // D37: what the service refused at once with service_busy, as a node past its intake
  // bound does; refusals are not failures. In every run, with --overload or without.
  overload: {
    betsOffered: number;
    betsAccepted: number;
    betsRefused: number;
    refusedPerS: number;
    refusedPercentOfOffered: number;
    // place_bet sent to the ack that refused it
    refusalAckMs: Summary;
    // 503 service_busy answers to session creates, every attempt's (sessions.ts)
    sessionCreatesRefused: number;
  };
  failures: { operations: number; total: number; rate: number; byKind: Record<string, number> };
  resources: {
    service: {
      cpuPercentByPhase: CpuByPhase;
      // while betting, in the process that serves the API (the whole service, all-in-one)
      eventLoopDelayP99Ms: number;
      eventLoopDelayMaxMs: number;
      cpuMsPerAcceptedBet: number;
      peakRssMiB: number;
      idleRssKiBPerPlayer: number;
      perPlayer: { cpuMsPerS: number; peakRssKiB: number };
      processes: Record<string, { cpuPercentByPhase: CpuByPhase; peakRssMiB: number; idleRssDeltaKiB: number }>;
    };
    // the idle window: every player connected, none betting, for `seconds` (percent of one
    // core). serviceCpuPercentPerOperator is what the target compares against: an engine with
    // connected players and no bets costs at most 0.5 % of a core per operator.
    idle: {
      seconds: number;
      operators: number;
      players: number;
      serviceCpuPercent: number;
      serviceCpuPercentPerOperator: number;
      postgresCpuPercent: number;
      redisCpuPercent: number;
      boxCpuPercent: number;
    };
    // the whole machine while players bet (percent of one core; the box has run.machine.cpus)
    box: {
      cpuPercentBetting: { total: number; service: number; postgres: number; redis: number; loadGenerator: number; other: number };
      cpuMsPerAcceptedBet: number;
      postgresCpuMsPerAcceptedBet: number;
      redisCpuMsPerAcceptedBet: number;
      // bets/s that would fill every core at the measured cost per bet; and with the
      // service's share taken out, what the rest of the box (Postgres, Redis, load
      // generator, the rest) allows at most
      ceilingBetsPerS: number;
      ceilingBetsPerSWithoutService: number;
    };
    // while betting: the main thread (the wallet simulator, the floors' sampler) and the
    // worst of the players' threads
    loadGenerator: {
      cpuPercent: number;
      peakRssMiB: number;
      eventLoopDelayP99Ms: number;
      eventLoopDelayMaxMs: number;
      playerThreadsEventLoopDelayP99Ms: number;
      playerThreadsEventLoopDelayMaxMs: number;
    };
  };
};

export async function writeReport(file: string, report: Report): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}

export function formatTable(report: Report, file: string): string {
  const { options } = report.run;
  const { floors, floorsWhileBetting: loaded, throughput, overload, failures, resources } = report;
  const interval = (summary: Summary) => (summary.p99Interval ? `${number(summary.p99Interval[0])}-${number(summary.p99Interval[1])}` : '-');
  // wide enough for the longest label, the chain floor's
  const labelWidth = 56;
  const row = (label: string, summary: Summary) =>
    `${label.padEnd(labelWidth)}${String(summary.count).padStart(7)}${number(summary.p50).padStart(10)}${number(summary.p99).padStart(10)}` +
    `${interval(summary).padStart(16)}${number(summary.max).padStart(10)}`;
  const session = report.sessionCreate;
  const cpu = resources.service.cpuPercentByPhase;
  const box = resources.box.cpuPercentBetting;
  const idle = resources.idle;
  // gems (D41): a play is counted, timed and costed as a bet is
  const gems = options.game === 'gems';
  const bet = gems ? 'play' : 'bet';
  const betting = gems ? 'playing' : 'betting';
  const handoff = `${bet}s ${report.run.betHandoff === 'local' ? 'debited by the realtime node' : 'through the bet queue'}`;
  const players = `${options.players} players${options.overload ? ' (doubled by --overload)' : ''} on ${options.operators} operators`;
  const lines = [
    gems
      ? `RGS benchmark (gems): ${options.deployment} (${handoff}), ${players}, each playing as often as minRoundMs ${options.minRoundMs} ms ` +
        `allows (its first play in the first ${Math.round(options.betSpread * 100)} % of it), stake ${units(BigInt(report.gems?.stakeMicro ?? '0'))} EUR every play, ` +
        `feature bought on ${number(options.featureBuyShare * 100, 0)} % of plays, wallet +${options.walletLatencyMs} ms, ` +
        `${options.durationS} s of playing, players on ${options.playerThreads} thread(s)`
      : `RGS benchmark${options.game === 'crash' ? ' (crash)' : ''}: ${options.deployment} (${handoff}), ${players}, ` +
        `${options.bettingWindowMs} ms betting window (bets in its first ${Math.round(options.betSpread * 100)} %), wallet +${options.walletLatencyMs} ms, ` +
        `${options.durationS} s of betting, engines ${options.engineStarts}, players on ${options.playerThreads} thread(s)`,
    ...historyLines(report.run.history),
    `machine floors (p50)  postgres commit ${number(floors.postgresCommitMs.p50, 3)} ms   redis ping ${number(floors.redisPingMs.p50, 3)} ms   ` +
      `loopback http ${number(floors.loopbackHttpMs.p50, 3)} ms`,
    `  after ${floors.afterIdle.idleMs} ms idle   postgres commit ${number(floors.afterIdle.postgresCommitMs.p50, 3)} ms   ` +
      `redis ping ${number(floors.afterIdle.redisPingMs.p50, 3)} ms   loopback http ${number(floors.afterIdle.loopbackHttpMs.p50, 3)} ms`,
    `  while ${betting} (p50 / p99)   postgres commit ${number(loaded.postgresCommitMs.p50, 2)} / ${number(loaded.postgresCommitMs.p99, 2)} ms   ` +
      `redis ping ${number(loaded.redisPingMs.p50, 2)} / ${number(loaded.redisPingMs.p99, 2)} ms   ` +
      `loopback http ${number(loaded.loopbackHttpMs.p50, 2)} / ${number(loaded.loopbackHttpMs.p99, 2)} ms`,
    '',
    `${'latency (ms)'.padEnd(labelWidth)}${'count'.padStart(7)}${'p50'.padStart(10)}${'p99'.padStart(10)}${'p99 95% CI'.padStart(16)}${'max'.padStart(10)}`,
    row(`session create at ${session.targetRate}/s (sent ${number(session.achievedRate)}/s)`, session.latencyMs),
    row('player connect (handshake to connected)', report.connect.latencyMs),
    row(gems ? 'play ack (play to ack)' : 'bet ack (place_bet to ack)', report.betAck.latencyMs),
    ...(report.gems ? [row('play to round_result', report.gems.playToResultMs)] : []),
    row(`  its floor while ${betting} (${chainWords(loaded.betAckChain.steps)})`, loaded.betAckChain.latencyMs),
    ...(loaded.betPathSkeleton ? [row(`  the bet path skeleton while ${betting} (arrival to accepted)`, loaded.betPathSkeleton.latencyMs)] : []),
    row(`${bet} refused service_busy (${gems ? 'play' : 'place_bet'} to its ack)`, overload.refusalAckMs),
    ...(report.crash
      ? [
          row('round_result after the round ended by itself', report.settlement.roundResultMs),
          row('/wallet/win arrival after the round was decided', report.settlement.walletWinMs),
        ]
      : gems
        ? [
            row('round_result after the play\'s ack', report.settlement.roundResultMs),
            row('/wallet/win arrival after the play\'s ack', report.settlement.walletWinMs),
          ]
        : [
          row('round_result after end of ROLLING', report.settlement.roundResultMs),
          row('/wallet/win arrival after end of ROLLING', report.settlement.walletWinMs),
        ]),
    row('inside the wallet (/wallet/bet)', report.walletOverhead.insideWalletMs),
    row('before the wallet (bet row to /wallet/bet)', report.walletOverhead.beforeWalletMs),
    row('after the wallet (its answer to the ack)', report.walletOverhead.afterWalletMs),
    row('service-added (bet ack minus inside wallet)', report.walletOverhead.serviceAddedMs),
    ...stepRows(report.betSteps, labelWidth),
    ...crashRows(report.crash, row),
    ...gemsRows(report.gems),
    '',
    `throughput  accepted ${bet}s/s ${number(throughput.acceptedBetsPerS)} (sent ${number(throughput.betsSentPerS)})   ` +
      `wallet calls/s ${number(throughput.walletCallsPerS)}   failures ${failures.total} of ${failures.operations} (${(failures.rate * 100).toFixed(3)}%)`,
    `overload    ${bet}s offered ${overload.betsOffered}, accepted ${overload.betsAccepted}, refused service_busy ${overload.betsRefused} ` +
      `(${number(overload.refusedPerS)}/s, ${number(overload.refusedPercentOfOffered, 2)}% of offered)   ` +
      `session creates refused service_busy ${overload.sessionCreatesRefused}`,
    `idle        ${idle.players} players connected on ${idle.operators} operators, no ${bet}s, ${number(idle.seconds, 0)} s: ` +
      `service ${number(idle.serviceCpuPercent)} % of a core (${number(idle.serviceCpuPercentPerOperator, 2)} % per operator), ` +
      `postgres ${number(idle.postgresCpuPercent)} %, redis ${number(idle.redisCpuPercent)} %, box ${number(idle.boxCpuPercent)} % of ${report.run.machine.cpus * 100}`,
    `service     cpu % of a core: ${number(cpu.sessions)} creating sessions, ${number(cpu.connect)} connecting, ${number(cpu.idle)} idle, ${number(cpu.betting)} ${betting}   ` +
      `event-loop delay p99 ${number(resources.service.eventLoopDelayP99Ms)} ms (max ${number(resources.service.eventLoopDelayMaxMs)})`,
    `            peak RSS ${number(resources.service.peakRssMiB)} MiB   ` +
      `RSS per idle player ${number(resources.service.idleRssKiBPerPlayer)} KiB   cpu per accepted ${bet} ${number(resources.service.cpuMsPerAcceptedBet, 2)} ms`,
    `load gen    cpu ${number(resources.loadGenerator.cpuPercent)}% of a core   event-loop delay p99 ${number(resources.loadGenerator.eventLoopDelayP99Ms)} ms, ` +
      `players' threads ${number(resources.loadGenerator.playerThreadsEventLoopDelayP99Ms)} ms   peak RSS ${number(resources.loadGenerator.peakRssMiB)} MiB`,
    `box         cpu % of a core while ${betting}: ${number(box.total)} of ${report.run.machine.cpus * 100} = service ${number(box.service)} + ` +
      `postgres ${number(box.postgres)} + redis ${number(box.redis)} + load gen ${number(box.loadGenerator)} + other ${number(box.other)}`,
    `            cpu per accepted ${bet}: box ${number(resources.box.cpuMsPerAcceptedBet, 2)} ms, postgres ${number(resources.box.postgresCpuMsPerAcceptedBet, 2)} ms, ` +
      `redis ${number(resources.box.redisCpuMsPerAcceptedBet, 2)} ms`,
    `            ceiling at this cost: ${number(resources.box.ceilingBetsPerS, 0)} ${bet}s/s; ` +
      `${number(resources.box.ceilingBetsPerSWithoutService, 0)} ${bet}s/s if the service cost nothing`,
  ];
  const kinds = Object.entries(failures.byKind).sort(([, a], [, b]) => b - a);
  if (kinds.length > 0) lines.push(`failures    ${kinds.map(([kind, count]) => `${kind} ${count}`).join(', ')}`);
  const relative = path.relative(process.cwd(), file);
  lines.push(`results     ${relative.startsWith('..') ? file : relative}`);
  return `${lines.join('\n')}\n`;
}

// D40: the cash-outs by hand, their ack and decisions, the gap between the multiplier seen at the
// click and the one granted, and the auto cash-outs
function crashRows(crash: CrashReport | null, row: (label: string, summary: Summary) => string): string[] {
  if (!crash) return [];
  const c = crash.cashOuts;
  const cents = (gap: CrashReport['gapCents']) =>
    `${gap.withinOneCentPercent === null ? '-' : number(gap.withinOneCentPercent, 2)} % within one cent`;
  return [
    '',
    row('cash-out ack (cash_out to ack)', crash.cashOutAckMs),
    row('  click to the service\'s arrival stamp', crash.clickToArrivalStampMs),
    row('  the arrival stamp to the ack at the player', crash.arrivalStampToAckMs),
    row('  the player\'s clock behind the service\'s at the click', crash.playerClockBehindMs),
    row(`granted minus seen at the click, cents (${cents(crash.gapCents)})`, crash.gapCents),
    row(`  the same on a true clock (${cents(crash.gapOnTrueClockCents)})`, crash.gapOnTrueClockCents),
    `crash       targets ${centsWords(CASH_OUT_MIN_CENTS)} to ${centsWords(crash.cashOutMaxCents)}; bets by hand ${crash.bets.byHand}, auto ${crash.bets.auto} ` +
      `(won ${crash.auto.won}, lost ${crash.auto.lost}); cash-out ack p95 ${number(crash.cashOutAckMs.p95)} ms`,
    `            cash-outs by hand ${c.sent} (${number(c.perS)}/s): won ${c.won}, too_late ${c.tooLate} (${number(c.tooLatePercent, 2)} %: ` +
      `${c.tooLateBelowCrashOnPlayerClock} below the crash point on the player's clock, ${c.tooLatePastCrashOnPlayerClock} past it); ` +
      `${c.clickedOnBetAck} clicked on the bet's ack; ${c.notSentCrashedFirst} not sent, crashed first; ` +
      `${crash.grantedOffArrivalStamp} granted off the arrival stamp's curve`,
  ];
}

// D41: the plays, and the wallet's wins against round_result's payouts (amounts exact, in EUR)
function gemsRows(gems: GemsReport | null): string[] {
  if (!gems) return [];
  const p = gems.plays;
  const refused = Object.entries(p.refusedByReason).sort(([, a], [, b]) => b - a);
  const t = gems.playToResultMs;
  const w = gems.payouts;
  return [
    '',
    `gems        plays sent ${p.sent} (${number(p.perS)}/s, ${number(p.perPlayerPerS, 3)} per player per s), accepted ${p.accepted}, won ${p.won}, ` +
      `feature bought ${p.featureBought}; refused ${refused.length === 0 ? 'none' : refused.map(([reason, count]) => `${reason} ${count}`).join(', ')}`,
    `            play to round_result p50 ${number(t.p50)} ms, p95 ${number(t.p95)} ms, p99 ${number(t.p99)} ms, max ${number(t.max)} ms (${t.count} plays)`,
    `            payouts: round_result ${units(BigInt(w.resultsMicro))} EUR, wallet wins ${units(BigInt(w.walletWinsMicro))} EUR ` +
      `(${w.sumsEqual ? 'equal' : 'DIFFER'}); wins missing ${w.winsMissing}, of another amount ${w.winsMismatched}, without a won result ${w.winsUnexpected}`,
  ];
}

// micro-units (D18: 1.00 = 100000) as units, every micro-unit shown
function units(micro: bigint): string {
  const sign = micro < 0n ? '-' : '';
  const abs = micro < 0n ? -micro : micro;
  const fraction = (abs % MICRO_PER_UNIT).toString().padStart(5, '0').replace(/0{1,3}$/, '');
  return `${sign}${abs / MICRO_PER_UNIT}.${fraction}`;
}
const MICRO_PER_UNIT = 100_000n;

function historyLines(history: HistoryInfo | null): string[] {
  if (!history) return [];
  const month = (iso: string) => iso.slice(0, 7);
  const last = new Date(history.to);
  last.setUTCMonth(last.getUTCMonth() - 1);
  return [
    `history     ${history.bets.toLocaleString('en')} settled bets of ${month(history.from)} to ${month(last.toISOString())}, from template ` +
      `${history.template} (${(history.templateBytes / 2 ** 30).toFixed(2)} GiB, seeded in ${number(history.seedSeconds)} s` +
      `${history.reused ? ' by an earlier run, reused' : ''}; copied in ${number(history.copySeconds)} s)`,
  ];
}

const number = (value: number | null, digits = 1) => (value === null ? '-' : value.toFixed(digits));

const chainWords = (steps: StepCounts) =>
  `${steps.postgresCommitMs} commits, ${steps.redisPingMs} redis, ${steps.loopbackHttpMs} http`;

// each step's p50 and p99, and its mean in the slowest hundredth of the acks
function stepRows(steps: BetStepsReport | null, labelWidth: number): string[] {
  if (!steps) return [];
  const ms = (value: number | null) => number(value, 2);
  return [
    '',
    `${`bet ack step by step (--trace-bets, ${steps.bets} bets)`.padEnd(labelWidth)}${'p50'.padStart(10)}${'p99'.padStart(10)}` +
      `${`slowest ${steps.slowestCount}, mean`.padStart(20)}`,
    ...steps.steps.map(
      ({ from, to, ms: between, slowestMeanMs }) =>
        `${`  ${from} to ${to}`.padEnd(labelWidth)}${ms(between.p50).padStart(10)}${ms(between.p99).padStart(10)}` +
        `${ms(slowestMeanMs).padStart(20)}`,
    ),
    `${'  received to accepted (the bet path skeleton\'s span)'.padEnd(labelWidth)}${ms(steps.receivedToAcceptedMs.p50).padStart(10)}` +
      `${ms(steps.receivedToAcceptedMs.p99).padStart(10)}`,
  ];
}
