import { mkdir, rm } from 'node:fs/promises';
import { constants, cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig, type BetHandoff } from '../src/shared/platform/config.js';
import { createDb } from '../src/shared/platform/db/client.js';
import { migrate } from '../src/shared/platform/db/migrate.js';
import { WALLET_ENDPOINTS } from '../src/simulator/ledger.js';
import { WalletSimulator } from '../src/simulator/wallet-simulator.js';
import { analyse } from './analysis.js';
import { LoopDelayMonitor, scrapeServiceLoopDelay } from './event-loop.js';
import { readBetPaths } from './bet-path.js';
import { readBetSteps } from './bet-steps.js';
import { measureFloors, sampleUnderLoad } from './floors.js';
import { sampleSkeletonUnderLoad } from './skeleton.js';
import { cycleMs, IDLE_MEASURE_MS, parseOptions, USAGE, UsageError, type BenchOptions } from './options.js';
import { PlayerPool } from './player-pool.js';
import { STAKE_MICRO, type PlayerSetup } from './players.js';
import { readCrashRounds } from './crash-rounds.js';
import { formatTable, writeReport, type Report } from './report.js';
import { historyDatabase } from './history.js';
import { createSessions } from './sessions.js';
import { startService } from './service.js';
import { dropDatabase } from '../src/shared/platform/db/migrate.js';
import { analyzeDatabase, benchDatabaseUrl, onboardOperators, type BenchOperator } from './setup.js';
import { boxUsage, snapshot } from './usage.js';
import { epochMs } from '../src/shared/platform/clock.js';
import { clearRedisPrefix } from '../src/shared/platform/redis.js';
import { WalletAnswerTimes } from './wallet-timing.js';

// `npm run bench`: a load generator outside the service processes. It measures
// the machine's floors, starts the service (all-in-one or split) on a database and Redis
// prefix of its own, launches sessions at a fixed rate through many operators, connects a
// Socket.IO player per session, lets them bet every round for a while, and reports. The
// wallet simulator runs here, in the load generator, as every operator's wallet.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// the warm-up: players arriving at the target rate for this long, then betting for this long
const WARM_UP_SECONDS = 2;
const WARM_UP_BETTING_MS = 2500;
// contract 8.1: an operator's burst of 10 session creates refills at 5 per second
const RATE_LIMIT_REFILL_MS = 2000;
// quiet time before the service's memory is read and before the idle window opens: the
// previous phase's work has finished
const SETTLE_MS = 2000;
// after betting stops: time for the last acks, results and wins to arrive, beyond the rest of
// the cycle of a bet placed in betting's last moment
const DRAIN_TIMEOUT_MS = 15_000;
const PROGRESS_EVERY_MS = 5000;

const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(options: BenchOptions, cleanup: (() => Promise<void> | void)[]): Promise<Report> {
  const startedAt = new Date();
  const databaseUrl = benchDatabaseUrl(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/rgs', `rgs_bench_${process.pid}`);
  const redisKeyPrefix = `rgs-bench-${process.pid}`;
  const env = { ...process.env, DATABASE_URL: databaseUrl, REDIS_KEY_PREFIX: redisKeyPrefix, LOG_LEVEL: 'info' };
  // the service reads the same environment, so it shares the master key that seals the
  // credentials onboarded here
  const config = loadConfig(env);

  progress(`database ${new URL(databaseUrl).pathname.slice(1)}, Redis prefix ${redisKeyPrefix}`);
  cleanup.push(() => dropDatabase(databaseUrl), () => clearRedisPrefix(config.redisUrl, redisKeyPrefix));
  // a database left by an earlier run that had this pid and was killed is not reused
  await dropDatabase(databaseUrl);
  // with --history, a copy of the history's template (seeded first if need be), before
  // anything is measured
  const history =
    options.history > 0 ? await historyDatabase(databaseUrl, options.history, { rebuild: options.historyRebuild, progress, cleanup }) : null;
  if (!history) await migrate(databaseUrl);

  const floors = await measureFloors(databaseUrl, config.redisUrl, options.smoke ? 100 : 300);
  progress(
    `floors p50: postgres commit ${floors.postgresCommitMs.p50} ms, redis ping ${floors.redisPingMs.p50} ms, loopback http ${floors.loopbackHttpMs.p50} ms`,
  );

  // the analysis reads every wallet call of the run (a run is finite, and signed only by
  // the service), so the simulator keeps them all rather than the latest ones
  const wallet = await WalletSimulator.start({ requestLog: { maxEntries: Number.POSITIVE_INFINITY, maxBytes: Number.POSITIVE_INFINITY } });
  const answers = new WalletAnswerTimes();
  cleanup.push(() => wallet.close(), () => answers.close());
  // a delay fault without `times` stays on: every answer of every endpoint comes that late
  if (options.walletLatencyMs > 0) {
    for (const endpoint of WALLET_ENDPOINTS) wallet.setFault(endpoint, { kind: 'delay', ms: options.walletLatencyMs });
  }
  const db = createDb(databaseUrl, 2);
  const operators = await onboardOperators(db, config.masterKey, wallet, options.operators, options.bettingWindowMs, options.game, options.minRoundMs).finally(() =>
    db.$disconnect(),
  );

  if (options.serviceLogDir) await mkdir(options.serviceLogDir, { recursive: true });
  // a fresh trace: readBetSteps reads every file in the directory
  if (options.traceBetsDir) {
    await rm(options.traceBetsDir, { recursive: true, force: true });
    await mkdir(options.traceBetsDir, { recursive: true });
  }
  // where the service debits the bets: the split deployment's realtime nodes have no bet
  // role, so theirs go through the bet queue (roles.ts)
  const handoff: BetHandoff = options.deployment === 'split' ? 'queue' : config.betHandoff;
  const service = await startService(ROOT, options.deployment, env, {
    cpuProfDir: options.cpuProfDir,
    traceGc: options.traceGc,
    logDir: options.serviceLogDir,
    traceBetsDir: options.traceBetsDir,
  });
  cleanup.push(() => service.stop());
  const pids = Object.fromEntries(service.processes.map((p) => [p.name, p.pid]));
  const self = { loadGenerator: process.pid };
  progress(`service up: ${service.processes.map((p) => `${p.name} (${p.roles}, pid ${p.pid})`).join(', ')} at ${service.url}`);

  const warmUpFailures = await warmUp(service.url, wallet, operators, options);
  await analyzeDatabase(databaseUrl);
  progress(`warmed up${warmUpFailures.length > 0 ? `; failed: ${warmUpFailures.join(', ')}` : ''}`);

  const sessionsStart = snapshot(pids);
  const sessions = await createSessions(service.url, wallet, operators, options.players, options.sessionRate, undefined, options.game);
  const sessionsEnd = snapshot(pids);
  progress(`${sessions.sessions.length} sessions in ${((sessionsEnd.at - sessionsStart.at) / 1000).toFixed(1)} s, ${sessions.failures.length} failed`);

  // memory is read once the work of the previous phase is done, before and after connecting
  await sleep(SETTLE_MS);
  const players = await PlayerPool.start(playerSetup(service.url, options), options.playerThreads);
  cleanup.push(() => players.close());
  const beforeConnect = snapshot(pids);
  const connectedPlayers = await players.connectAll(sessions.sessions, options.sessionRate);
  const connected = snapshot(pids);
  progress(`${connectedPlayers} players connected in ${((connected.at - beforeConnect.at) / 1000).toFixed(1)} s`);
  await sleep(SETTLE_MS);

  // the idle window: every player connected, none betting, the connect phase's tail over
  // (IDLE_MEASURE_MS says why). Its first mark is also where the idle memory is read.
  const idle = snapshot(pids);
  const boxAtIdle = boxUsage();
  progress(`${connectedPlayers} players idle for ${IDLE_MEASURE_MS / 1000} s`);
  await sleep(IDLE_MEASURE_MS);
  // these marks end the idle window and start the betting phase, which is measured from
  // here, not from the idle window's start: its CPU is the betting's alone
  const serviceBettingStart = snapshot(pids);
  const bettingStart = snapshot(self);
  const boxAtStart = boxUsage();
  const eventLoop = new LoopDelayMonitor();
  eventLoop.start();
  // the scrape restarts the service's own histogram
  await scrapeServiceLoopDelay(service.url);
  const sampler = await sampleUnderLoad(databaseUrl, config.redisUrl);
  const skeleton = options.skeleton ? await sampleSkeletonUnderLoad(databaseUrl, config.redisUrl, redisKeyPrefix, handoff === 'queue') : null;
  const start = epochMs();
  await players.setBetting(true);
  // a gems player plays rather than bets (D41)
  const bets = options.game === 'gems' ? 'plays' : 'bets';
  progress(`${options.game === 'gems' ? 'playing' : 'betting'} for ${options.durationS} s`);
  const ticker = setInterval(() => {
    void players.status().then(({ sent, accepted }) => progress(`  ${Math.round((epochMs() - start) / 1000)} s: ${sent} ${bets} sent, ${accepted} accepted`));
  }, PROGRESS_EVERY_MS);
  await sleep(options.durationS * 1000);
  await players.setBetting(false);
  clearInterval(ticker);
  const end = epochMs();
  const bettingEnd = snapshot(pids);
  const bettingEndSelf = snapshot(self);
  const boxAtEnd = boxUsage();
  const loadGeneratorLoop = eventLoop.stop();
  const serviceLoop = await scrapeServiceLoopDelay(service.url);
  const loadedSteps = await sampler.stop();
  const skeletonSamples = skeleton ? await skeleton.stop() : null;

  const drainMs = drainTimeoutMs(options);
  const drained = await drain(players, wallet, drainMs);
  progress(drained ? 'drained: every bet answered, settled and paid' : `drain incomplete after ${drainMs / 1000} s`);
  const final = snapshot(pids);
  const crashed = service.crashed();
  if (crashed.length > 0) throw new Error(`the service failed during the run: ${crashed.join('; ')}`);
  const seen = await players.collect();
  await players.close();
  await service.stop();
  const betPaths = await readBetPaths(databaseUrl, startedAt);
  const crashRounds = options.game === 'crash' ? await readCrashRounds(databaseUrl, startedAt) : null;
  // the service wrote its last steps when it stopped
  const betStepTimes = options.traceBetsDir ? await readBetSteps(options.traceBetsDir) : null;

  const measurements = analyse({
    planned: { players: options.players, operators: options.operators, sessionRate: options.sessionRate },
    crash: crashRounds && { cashOutMaxCents: options.cashOutMaxCents, rounds: crashRounds, stakeMicro: BigInt(STAKE_MICRO) },
    gems:
      options.game === 'gems'
        ? { minRoundMs: options.minRoundMs, featureBuyShare: options.featureBuyShare, stakeMicro: BigInt(STAKE_MICRO), ledger: wallet.transactions }
        : null,
    sessions,
    players: seen,
    walletRequests: wallet.requests,
    walletViolations: wallet.violations,
    answers,
    betPaths,
    betStepTimes,
    loadedSteps,
    skeleton: skeletonSamples,
    betting: { start, end },
    service: { sessionsStart, sessionsEnd, beforeConnect, connected, idle, bettingStart: serviceBettingStart, bettingEnd, final },
    box: { idle: { start: boxAtIdle, end: boxAtStart }, betting: { start: boxAtStart, end: boxAtEnd }, cpus: cpus().length },
    loadGenerator: {
      bettingStart,
      bettingEnd: bettingEndSelf,
      eventLoopDelay: loadGeneratorLoop,
    },
    serviceEventLoopDelay: serviceLoop,
  });
  const { out: _out, ...shown } = options;
  return {
    run: {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      options: shown,
      machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', loadAverage: loadavg() },
      service: service.processes.map(({ name, roles }) => ({ name, roles })),
      betHandoff: handoff,
      history,
    },
    floors,
    ...measurements,
  };
}

const playerSetup = (baseUrl: string, options: BenchOptions): PlayerSetup => ({
  baseUrl,
  game: options.game,
  cashOutMaxCents: options.cashOutMaxCents,
  minRoundMs: options.minRoundMs,
  featureBuyShare: options.featureBuyShare,
  operators: options.operators,
  bettingWindowMs: options.bettingWindowMs,
  betSpread: options.betSpread,
  engineStarts: options.engineStarts,
  cycleMs: cycleMs(options),
});

// A steady state rather than a cold start: before anything is measured, players arrive at
// the target rate for a couple of seconds, bet for a round or two and leave, so that the
// service's code is compiled, its pools have their connections, every engine runs and
// every operator's wallet credential is open. Then the operators' session buckets refill
// (contract 8.1) before the measured players arrive.
async function warmUp(baseUrl: string, wallet: WalletSimulator, operators: BenchOperator[], options: BenchOptions): Promise<string[]> {
  const count = Math.max(operators.length, Math.min(options.players, Math.ceil(options.sessionRate * WARM_UP_SECONDS)));
  const sessions = await createSessions(baseUrl, wallet, operators, count, options.sessionRate, 'bench-warm-up', options.game);
  const players = await PlayerPool.start(playerSetup(baseUrl, options), options.playerThreads);
  try {
    await players.connectAll(sessions.sessions, options.sessionRate);
    await players.setBetting(true);
    await sleep(WARM_UP_BETTING_MS);
    await players.setBetting(false);
    // the warm-up's acks, results and wins are all in before anything is measured
    await drain(players, wallet, drainTimeoutMs(options));
    return [...sessions.failures, ...(await players.collect()).failures];
  } finally {
    await players.close();
    await sleep(RATE_LIMIT_REFILL_MS);
  }
}

const drainTimeoutMs = (options: BenchOptions) => DRAIN_TIMEOUT_MS + cycleMs(options);

// Waits until every bet has its ack, every accepted bet its round_result and every win its
// /wallet/win, or timeoutMs is up; whatever is still missing counts as a failure.
async function drain(players: PlayerPool, wallet: WalletSimulator, timeoutMs: number): Promise<boolean> {
  const deadline = epochMs() + timeoutMs;
  const won = new Set<string>();
  for (;;) {
    const status = await players.status();
    for (const roundId of status.wonRoundIds) won.add(roundId);
    const paid = new Set(wallet.requests.filter((r) => r.endpoint === 'win').map((r) => (r.body as { roundId?: string }).roundId));
    if (status.unacked === 0 && status.unresolved === 0 && [...won].every((roundId) => paid.has(roundId))) return true;
    if (epochMs() > deadline) return false;
    await sleep(100);
  }
}

async function main(): Promise<void> {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2), ROOT);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const cleanup: (() => Promise<void> | void)[] = [];
  const tidy = async () => {
    for (const step of cleanup.splice(0).reverse()) {
      await Promise.resolve()
        .then(step)
        .catch((err: unknown) => progress(`cleanup: ${(err as Error).message}`));
    }
  };
  // stopped early (Ctrl-C, a timeout's SIGTERM): the service processes, the database and the
  // Redis keys of this run are removed all the same
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => void tidy().then(() => process.exit(128 + constants.signals[signal])));
  }
  try {
    const report = await run(options, cleanup);
    await writeReport(options.out, report);
    process.stdout.write(formatTable(report, options.out));
  } finally {
    await tidy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
