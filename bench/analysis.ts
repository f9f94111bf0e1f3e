import type { RecordedRequest } from '../src/simulator/wallet-simulator.js';
import type { BetPathRow } from './bet-path.js';
import { betSteps, type BetStepTimes } from './bet-steps.js';
import type { LoopDelay } from './event-loop.js';
import type { LoadedSteps } from './floors.js';
import { BET_ACK_STEPS, chainFloor } from './path-floor.js';
import { SKELETON_STEPS, type SkeletonSample, type SkeletonStep } from './skeleton.js';
import type { BetRecord, PlayerRecords } from './players.js';
import type { Report } from './report.js';
import type { SessionPhase } from './sessions.js';
import { round, summarize, type Summary } from './stats.js';
import { totalOf, type BoxUsage, type Snapshot } from './usage.js';
import type { WalletAnswerTimes } from './wallet-timing.js';
import { analyseCrash, crashSettlement } from './crash-analysis.js';
import type { CrashRoundRow } from './crash-rounds.js';
import { analyseGems, gemsSettlement } from './gems-analysis.js';
import type { LedgerEntry } from '../src/simulator/ledger.js';

// Turns what a run observed (the players' clocks, the wallet's, the service's own rows and
// the processes' usage) into the report's measurement sections. Every latency is a
// difference of two clocks of this one machine; Postgres timestamps have millisecond
// resolution, so a segment between two of them is good to about a millisecond.

export type Observations = {
  planned: { players: number; operators: number; sessionRate: number };
  // crash (D40): the highest cash-out target, the rounds as the service decided them, and
  // the bench's stake; null for dice
  crash: { cashOutMaxCents: number; rounds: CrashRoundRow[]; stakeMicro: bigint } | null;
  // gems (D41): the operators' minRoundMs, the share of plays that buy the feature, the
  // bench's stake, and the wallet simulator's ledger (the wins it booked); null for the others
  gems: { minRoundMs: number; featureBuyShare: number; stakeMicro: bigint; ledger: readonly LedgerEntry[] } | null;
  sessions: SessionPhase;
  players: PlayerRecords;
  walletRequests: readonly RecordedRequest[];
  walletViolations: readonly string[];
  answers: WalletAnswerTimes;
  betPaths: BetPathRow[];
  // --trace-bets: each bet's steps through the service
  betStepTimes: BetStepTimes | null;
  // the machine's steps, timed while the players bet
  loadedSteps: LoadedSteps;
  // --skeleton: the bet path's skeleton, run while the players bet
  skeleton: SkeletonSample[] | null;
  betting: { start: number; end: number };
  // usage marks: around session creation, around connecting, around the idle window (players
  // connected, none betting; its end is where betting starts), at the end of betting, and
  // after the drain (whose peak RSS covers the whole run)
  service: {
    sessionsStart: Snapshot;
    sessionsEnd: Snapshot;
    beforeConnect: Snapshot;
    connected: Snapshot;
    idle: Snapshot;
    bettingStart: Snapshot;
    bettingEnd: Snapshot;
    final: Snapshot;
  };
  loadGenerator: { bettingStart: Snapshot; bettingEnd: Snapshot; eventLoopDelay: LoopDelay };
  // the loop of the service process that serves the API (all of it, all-in-one)
  serviceEventLoopDelay: LoopDelay;
  // the whole box over the idle window and over the betting phase, and its cores
  box: { idle: BoxWindow; betting: BoxWindow; cpus: number };
};

type Measurements = Omit<Report, 'run' | 'floors'>;
type BoxWindow = { start: BoxUsage; end: BoxUsage };

const KIB_PER_MIB = 1024;

export function analyse(o: Observations): Measurements {
  const bettingSeconds = (o.betting.end - o.betting.start) / 1000;
  const betsById = new Map(o.players.bets.filter((bet) => bet.betId).map((bet) => [bet.betId!, bet]));
  const cycleOfRound = new Map(o.players.bets.filter((bet) => bet.roundId).map((bet) => [bet.roundId!, bet.cycleId]));
  const walletByRequestUuid = new Map(o.walletRequests.map((record) => [requestUuidOf(record), record]));
  const receivedAt = (record: RecordedRequest) => record.receivedAt.getTime();

  // the first /wallet/win of each round: a retry is the service recovering, not settling
  const wins = new Map<string, RecordedRequest>();
  for (const record of o.walletRequests) {
    const roundId = record.endpoint === 'win' ? roundIdOf(record) : undefined;
    if (roundId && !wins.has(roundId)) wins.set(roundId, record);
  }
  const afterRollingEnd = (cycleId: string | undefined, at: number) => {
    const end = cycleId === undefined ? undefined : o.players.rollingEndsAt.get(cycleId);
    return end === undefined ? [] : [at - end];
  };

  const accepted = o.players.bets.filter((bet) => bet.ok);
  const segments = {
    placeToBetRow: [] as number[],
    betRowToAuditRow: [] as number[],
    auditRowToWallet: [] as number[],
    insideWallet: [] as number[],
    walletToAuditUpdate: [] as number[],
    auditUpdateToAccepted: [] as number[],
    acceptedToAck: [] as number[],
  };
  const beforeWallet: number[] = [];
  const afterWallet: number[] = [];
  const serviceAdded: number[] = [];
  for (const row of o.betPaths) {
    const bet = betsById.get(row.betId);
    const call = walletByRequestUuid.get(row.requestUuid);
    const answeredAt = call ? o.answers.answeredAt(call) : undefined;
    if (!bet?.ackAt || !call || answeredAt === undefined) continue;
    const arrived = receivedAt(call);
    segments.placeToBetRow.push(row.betRowAt - bet.sentAt);
    segments.betRowToAuditRow.push(row.auditRowAt - row.betRowAt);
    segments.auditRowToWallet.push(arrived - row.auditRowAt);
    segments.insideWallet.push(answeredAt - arrived);
    segments.walletToAuditUpdate.push(row.auditUpdatedAt - answeredAt);
    segments.auditUpdateToAccepted.push(row.acceptedAt - row.auditUpdatedAt);
    segments.acceptedToAck.push(bet.ackAt - row.acceptedAt);
    beforeWallet.push(arrived - row.betRowAt);
    afterWallet.push(bet.ackAt - answeredAt);
    serviceAdded.push(bet.ackAt - bet.sentAt - (answeredAt - arrived));
  }

  const inWindow = o.walletRequests.filter((record) => receivedAt(record) >= o.betting.start && receivedAt(record) <= o.betting.end);
  const walletCallsPerSByEndpoint: Record<string, number> = {};
  for (const record of inWindow) {
    const endpoint = record.endpoint ?? 'other';
    walletCallsPerSByEndpoint[endpoint] = (walletCallsPerSByEndpoint[endpoint] ?? 0) + 1;
  }
  for (const endpoint of Object.keys(walletCallsPerSByEndpoint)) {
    walletCallsPerSByEndpoint[endpoint] = round(walletCallsPerSByEndpoint[endpoint]! / bettingSeconds, 1);
  }

  const failures: string[] = [...o.sessions.failures, ...o.players.failures];
  // a gems play is a bet in every count (D41), named as what it is
  const kind = o.gems ? 'play' : 'bet';
  for (const bet of o.players.bets) {
    // D37: a refusal is the service's answer to more than it can take, not a failure; the
    // overload section counts it
    if (isRefusal(bet)) continue;
    if (!bet.ok) failures.push(`${kind}:${bet.reason ?? 'no_ack'}`);
    else {
      const result = o.players.results.get(bet.roundId!);
      if (!result) failures.push(`${kind}:no_round_result`);
      else if (result.won && !wins.has(bet.roundId!)) failures.push(`${kind}:no_wallet_win`);
    }
  }
  for (const record of o.walletRequests) {
    const status = typeof record.response === 'object' ? (record.response.status ?? `http_${record.response.httpStatus}`) : record.response;
    if (status !== 'RS_OK') failures.push(`wallet:${record.endpoint ?? record.path}:${status}`);
  }
  for (let i = 0; i < o.walletViolations.length; i++) failures.push('wallet:violation');
  const crash =
    o.crash &&
    analyseCrash({
      cashOutMaxCents: o.crash.cashOutMaxCents,
      bets: o.players.bets,
      cashOuts: o.players.cashOuts,
      results: o.players.results,
      rounds: o.crash.rounds,
      bettingSeconds,
      stakeMicro: o.crash.stakeMicro,
    });
  if (crash) failures.push(...crash.failures);
  const gems =
    o.gems &&
    analyseGems({
      minRoundMs: o.gems.minRoundMs,
      featureBuyShare: o.gems.featureBuyShare,
      stakeMicro: o.gems.stakeMicro,
      players: o.players.connected,
      bets: o.players.bets,
      results: o.players.results,
      ledger: o.gems.ledger,
      bettingSeconds,
    });
  if (gems) failures.push(...gems.failures);
  const byKind: Record<string, number> = {};
  for (const kind of failures) byKind[kind] = (byKind[kind] ?? 0) + 1;
  const operations = o.planned.players + o.sessions.sessions.length + o.players.bets.length + o.players.cashOuts.length + o.walletRequests.length;

  const { service } = o;
  const serviceNames = Object.keys(service.final.processes);
  const byPhase = (name?: string) => ({
    sessions: cpuPercent(service.sessionsStart, service.sessionsEnd, name),
    connect: cpuPercent(service.beforeConnect, service.connected, name),
    idle: cpuPercent(service.idle, service.bettingStart, name),
    betting: cpuPercent(service.bettingStart, service.bettingEnd, name),
  });
  const idleDeltaKiB = totalOf(service.idle, 'rssKiB') - totalOf(service.beforeConnect, 'rssKiB');
  const peakRssKiB = totalOf(service.final, 'peakRssKiB');
  const connected = o.players.connected;
  const serviceCpu = byPhase();
  const bettingCpuMs = (serviceCpu.betting / 100) * bettingSeconds * 1000;

  return {
    sessionCreate: {
      targetRate: o.planned.sessionRate,
      achievedRate: round(o.sessions.achievedRate, 1),
      attempted: o.planned.players,
      created: o.sessions.sessions.length,
      latencyMs: summarize(o.sessions.latenciesMs),
    },
    connect: { attempted: o.sessions.sessions.length, connected, latencyMs: summarize(o.players.connectLatenciesMs) },
    floorsWhileBetting: {
      postgresCommitMs: summarize(o.loadedSteps.postgresCommitMs),
      redisPingMs: summarize(o.loadedSteps.redisPingMs),
      loopbackHttpMs: summarize(o.loadedSteps.loopbackHttpMs),
      betAckChain: { steps: BET_ACK_STEPS, latencyMs: chainFloor(o.loadedSteps, BET_ACK_STEPS) },
      betPathSkeleton: o.skeleton && skeletonReport(o.skeleton),
    },
    betAck: { latencyMs: summarize(accepted.map((bet) => bet.ackAt! - bet.sentAt)) },
    betSteps: o.betStepTimes && betSteps(o.betStepTimes, accepted.map((bet) => ({ betId: bet.betId!, sentAt: bet.sentAt, ackAt: bet.ackAt! }))),
    settlement: o.crash
      ? crashSettlement(o.crash.rounds, o.players.results, new Map([...wins].map(([roundId, record]) => [roundId, receivedAt(record)])))
      : o.gems
        ? gemsSettlement(o.players.bets, o.players.results, new Map([...wins].map(([roundId, record]) => [roundId, receivedAt(record)])))
        : {
            roundResultMs: summarize([...o.players.results.values()].flatMap((result) => afterRollingEnd(result.cycleId, result.at))),
            walletWinMs: summarize([...wins].flatMap(([roundId, record]) => afterRollingEnd(cycleOfRound.get(roundId), receivedAt(record)))),
          },
    crash: crash?.report ?? null,
    gems: gems?.report ?? null,
    walletOverhead: {
      insideWalletMs: summarize(segments.insideWallet),
      beforeWalletMs: summarize(beforeWallet),
      afterWalletMs: summarize(afterWallet),
      serviceAddedMs: summarize(serviceAdded),
      segmentsMs: Object.fromEntries(Object.entries(segments).map(([name, samples]) => [name, summarize(samples)])) as Report['walletOverhead']['segmentsMs'],
    },
    throughput: {
      bettingSeconds: round(bettingSeconds, 1),
      betsSentPerS: round(o.players.bets.length / bettingSeconds, 1),
      acceptedBetsPerS: round(accepted.length / bettingSeconds, 1),
      walletCallsPerS: round(inWindow.length / bettingSeconds, 1),
      walletCallsPerSByEndpoint,
    },
    overload: overloadOf(o.players.bets, o.sessions.refusals, bettingSeconds),
    failures: { operations, total: failures.length, rate: operations > 0 ? round(failures.length / operations, 6) : 0, byKind },
    resources: {
      service: {
        cpuPercentByPhase: serviceCpu,
        eventLoopDelayP99Ms: o.serviceEventLoopDelay.p99Ms,
        eventLoopDelayMaxMs: o.serviceEventLoopDelay.maxMs,
        cpuMsPerAcceptedBet: accepted.length > 0 ? round(bettingCpuMs / accepted.length) : 0,
        peakRssMiB: round(peakRssKiB / KIB_PER_MIB, 1),
        idleRssKiBPerPlayer: connected > 0 ? round(idleDeltaKiB / connected, 1) : 0,
        perPlayer: {
          cpuMsPerS: connected > 0 ? round(bettingCpuMs / bettingSeconds / connected) : 0,
          peakRssKiB: connected > 0 ? round(peakRssKiB / connected, 1) : 0,
        },
        processes: Object.fromEntries(
          serviceNames.map((name) => [
            name,
            {
              cpuPercentByPhase: byPhase(name),
              peakRssMiB: round(service.final.processes[name]!.peakRssKiB / KIB_PER_MIB, 1),
              idleRssDeltaKiB: service.idle.processes[name]!.rssKiB - service.beforeConnect.processes[name]!.rssKiB,
            },
          ]),
        ),
      },
      idle: idleOf({ start: service.idle, end: service.bettingStart }, o.box.idle, o.planned.operators, connected),
      box: boxDuringBetting(o, serviceCpu.betting, cpuPercent(o.loadGenerator.bettingStart, o.loadGenerator.bettingEnd), accepted.length),
      loadGenerator: {
        cpuPercent: cpuPercent(o.loadGenerator.bettingStart, o.loadGenerator.bettingEnd),
        peakRssMiB: round(totalOf(o.loadGenerator.bettingEnd, 'peakRssKiB') / KIB_PER_MIB, 1),
        eventLoopDelayP99Ms: o.loadGenerator.eventLoopDelay.p99Ms,
        eventLoopDelayMaxMs: o.loadGenerator.eventLoopDelay.maxMs,
        playerThreadsEventLoopDelayP99Ms: o.players.eventLoopDelay.p99Ms,
        playerThreadsEventLoopDelayMaxMs: o.players.eventLoopDelay.maxMs,
      },
    },
  };
}

// D37: a node past its intake bound acks place_bet at once with this reason
export const isRefusal = (bet: BetRecord) => bet.ok === false && bet.reason === 'service_busy';

// The bets offered and what became of them: accepted, or refused service_busy at once (D37),
// with the refusing ack's latency; and the session creates refused the same way. Bets neither
// accepted nor refused (other reasons, no ack) are failures, counted there.
export function overloadOf(bets: readonly BetRecord[], sessionCreatesRefused: number, bettingSeconds: number): Report['overload'] {
  const refused = bets.filter(isRefusal);
  return {
    betsOffered: bets.length,
    betsAccepted: bets.filter((bet) => bet.ok).length,
    betsRefused: refused.length,
    refusedPerS: bettingSeconds > 0 ? round(refused.length / bettingSeconds, 1) : 0,
    refusedPercentOfOffered: bets.length > 0 ? round((refused.length / bets.length) * 100, 2) : 0,
    refusalAckMs: summarize(refused.map((bet) => bet.ackAt! - bet.sentAt)),
    sessionCreatesRefused,
  };
}

// Where the box's CPU went while players bet, in percent of one core: the service, Postgres,
// Redis, the load generator (players and the wallet simulator), and everything else; and the
// box's CPU per accepted bet, the figure that bounds throughput on this machine. Two ceilings
// follow from it: the bets/s that would fill every core at this cost per bet, and those
// that would fill them if the service cost nothing (what the rest of the box allows).
function boxDuringBetting(o: Observations, servicePercent: number, loadGeneratorPercent: number, acceptedBets: number): Report['resources']['box'] {
  const { wallSeconds, total, postgres, redis } = boxCpuPercent(o.box.betting);
  const perBet = (busyPercent: number) => (acceptedBets > 0 ? ((busyPercent / 100) * wallSeconds * 1000) / acceptedBets : 0);
  const ceiling = (msPerBet: number) => (msPerBet > 0 ? round((o.box.cpus * 1000) / msPerBet, 0) : 0);
  return {
    cpuPercentBetting: {
      total,
      service: servicePercent,
      postgres,
      redis,
      loadGenerator: loadGeneratorPercent,
      other: round(Math.max(0, total - servicePercent - postgres - redis - loadGeneratorPercent), 1),
    },
    cpuMsPerAcceptedBet: round(perBet(total)),
    postgresCpuMsPerAcceptedBet: round(perBet(postgres)),
    redisCpuMsPerAcceptedBet: round(perBet(redis)),
    ceilingBetsPerS: ceiling(perBet(total)),
    ceilingBetsPerSWithoutService: ceiling(perBet(Math.max(0, total - servicePercent))),
  };
}

// The box's busy time and its shared servers' between two marks, in percent of one core
function boxCpuPercent({ start, end }: BoxWindow): { wallSeconds: number; total: number; postgres: number; redis: number } {
  const wallSeconds = (end.at - start.at) / 1000;
  const percent = (seconds: number) => (wallSeconds > 0 ? round((seconds / wallSeconds) * 100, 1) : 0);
  return {
    wallSeconds,
    total: percent(end.busySeconds - start.busySeconds),
    postgres: percent(end.byServer.postgres - start.byServer.postgres),
    redis: percent(end.byServer.redis - start.byServer.redis),
  };
}

// The idle window: every player connected, none betting. What the service's engines, sockets
// and timers cost with no bets, whole and per operator, the figure the target compares
// against (an engine with connected players and no bets costs at most 0.5 % of a core per
// operator); and what Postgres, Redis and the box spent meanwhile.
export function idleOf(service: { start: Snapshot; end: Snapshot }, box: BoxWindow, operators: number, players: number): Report['resources']['idle'] {
  // unrounded: the per-operator figure is a fraction of one percent
  const servicePercent = cpuPercent(service.start, service.end, undefined, 6);
  const { total, postgres, redis } = boxCpuPercent(box);
  return {
    seconds: round((service.end.at - service.start.at) / 1000, 1),
    operators,
    players,
    serviceCpuPercent: round(servicePercent, 1),
    serviceCpuPercentPerOperator: operators > 0 ? round(servicePercent / operators, 3) : 0,
    postgresCpuPercent: postgres,
    redisCpuPercent: redis,
    boxCpuPercent: total,
  };
}

// CPU time over wall time between two marks, in percent of one core (200 = two cores busy)
function cpuPercent(from: Snapshot, to: Snapshot, name?: string, digits = 1): number {
  const cpu = (snap: Snapshot) => (name === undefined ? totalOf(snap, 'cpuSeconds') : snap.processes[name]!.cpuSeconds);
  const wallSeconds = (to.at - from.at) / 1000;
  return wallSeconds > 0 ? round(((cpu(to) - cpu(from)) / wallSeconds) * 100, digits) : 0;
}

function field(record: RecordedRequest, name: string): string | undefined {
  const body = record.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  return typeof value === 'string' ? value : undefined;
}

const requestUuidOf = (record: RecordedRequest) => field(record, 'requestUuid') ?? '';
const roundIdOf = (record: RecordedRequest) => field(record, 'roundId');

// the steps the samples have (no queue hop where the service has none, skeleton.ts)
function skeletonReport(samples: SkeletonSample[]): { latencyMs: Summary; stepsMs: Partial<Record<SkeletonStep, Summary>> } {
  const steps = SKELETON_STEPS.filter((step) => samples.some((sample) => sample[step] !== undefined));
  return {
    latencyMs: summarize(samples.map((sample) => steps.reduce((sum, step) => sum + sample[step]!, 0))),
    stepsMs: Object.fromEntries(steps.map((step) => [step, summarize(samples.map((sample) => sample[step]!))])),
  };
}
