import path from 'node:path';
import type { EngineStarts } from './arrivals.js';
import { CASH_OUT_MAX_BOUNDS, centsWords, crashCycleMs, DEFAULT_CASH_OUT_MAX_CENTS, parseCashOutMax, SMOKE_CASH_OUT_MAX_CENTS } from './crash-play.js';
import { DEFAULT_MIN_ROUND_MS, parseFeatureBuyShare } from './gems-play.js';

// Command-line options of `npm run bench`. Every run must finish in under two
// minutes, so the options that set its length are bounded here rather than discovered
// by a run that overstays.

export type Deployment = 'all-in-one' | 'split';

// the game the players play: dice, or crash (D40), whose players also cash out (crash-play.ts),
// or Gem Vault (D41), an instant game whose players play on their own pace (gems-play.ts)
export type BenchGame = 'dice' | 'crash' | 'gems';

export type BenchOptions = {
  deployment: Deployment;
  game: BenchGame;
  // crash: the highest multiplier a player aims to cash out at, in cents (crash-play.ts)
  cashOutMaxCents: number;
  // gems: the operators' minRoundMs, the least time between two plays of a session (D41)
  minRoundMs: number;
  // gems: the fraction of plays that buy the feature (0 to 1)
  featureBuyShare: number;
  players: number;
  operators: number;
  sessionRate: number; // session creates per second, spread over the operators
  durationS: number; // length of the betting phase
  walletLatencyMs: number; // added to every wallet answer
  bettingWindowMs: number;
  out: string;
  smoke: boolean;
  // node --cpu-prof for every service process, its profiles written here
  cpuProfDir: string | undefined;
  // every service process's output, to <name>.log here
  serviceLogDir: string | undefined;
  // node --trace-gc for every service process, its lines in that log
  traceGc: boolean;
  // every bet's steps through the service (src/shared/platform/bet-steps.ts), written here by
  // trace-subscriber.ts in each service process
  traceBetsDir: string | undefined;
  // run the bet path's skeleton beside the players (skeleton.ts)
  skeleton: boolean;
  // the fraction of the betting window over which each player's bet falls, at random; gems:
  // of minRoundMs, over which each player's first play falls (gems-play.ts)
  betSpread: number;
  // worker threads the players are spread over
  playerThreads: number;
  // whether the operators' engines run in step or at independent phases (arrivals.ts)
  engineStarts: EngineStarts;
  // settled bets of the past twelve months in the database before the run (history.ts);
  // 0: an empty database
  history: number;
  // seed the history's template again even when it exists
  historyRebuild: boolean;
  // --overload: twice the players the run would otherwise have, so that the offered load
  // passes what the box carries and the service refuses the excess (D37)
  overload: boolean;
};

export class UsageError extends Error {
  override name = 'UsageError';
}

// contract 8.1: session creation is limited to 5 per second per operator; a fifth of
// headroom keeps the generator's own timing jitter from tripping the limit
const SESSIONS_PER_OPERATOR_PER_S = 4;
const CONTRACT_SESSIONS_PER_OPERATOR_PER_S = 5;
// the windows around the betting window: short, so that rounds come fast
export const ROLLING_WINDOW_MS = 300;
export const COOLDOWN_MS = 200;
// one cycle of every bench operator's engine: PENDING opens at once, then the three windows;
// a crash cycle's ROLLING is its flight, which lasts until its players' rounds have ended,
// at most until the curve reaches the highest cash-out they aim at (crash-play.ts)
// gems has no cycles of a clock (D41): a player's own cycle is a play every minRoundMs
export const cycleMs = (o: Pick<BenchOptions, 'bettingWindowMs' | 'game' | 'cashOutMaxCents' | 'minRoundMs'>) =>
  o.game === 'crash'
    ? crashCycleMs(o.bettingWindowMs, COOLDOWN_MS, o.cashOutMaxCents)
    : o.game === 'gems'
      ? o.minRoundMs
      : o.bettingWindowMs + ROLLING_WINDOW_MS + COOLDOWN_MS;

// The idle window: every player connected, none betting, for this long, once the connect
// phase's tail has settled. The target it measures: an engine with connected players and no
// bets costs at most 0.5 % of a core per operator. A few cycles of the default window, so
// that every engine's ticks fall in it several times; the same in a smoke run, whose length
// has room for it.
export const IDLE_MEASURE_MS = 5000;

// A run must end within two minutes. Its length, as measured: about 20 s of its own
// (the floors, the service's start, the warm-up's betting, the pauses, teardown) and the idle
// window, the players' arrival (sessions, then connections, each players / rate), the
// betting, and up to three and a half cycles (the warm-up's last rounds, the staggered engine
// starts, the last rounds).
// A crash cycle is mostly its flight, which the warm-up's and the last rounds' drains wait
// for once each; a flight is longer than the players' arrival at the default rate, so the
// staggered starts add the part of a cycle beyond the arrivals, not a cycle of their own.
const FIXED_SECONDS = 20 + IDLE_MEASURE_MS / 1000;
const CYCLES_PER_RUN = 3.5;
const CRASH_CYCLES_PER_RUN = 2.5;
const MAX_RUN_SECONDS = 115;
export const expectedRunSeconds = (
  o: Pick<BenchOptions, 'players' | 'sessionRate' | 'durationS' | 'bettingWindowMs' | 'game' | 'cashOutMaxCents' | 'minRoundMs'>,
) =>
  FIXED_SECONDS + (2 * o.players) / o.sessionRate + o.durationS + ((o.game === 'crash' ? CRASH_CYCLES_PER_RUN : CYCLES_PER_RUN) * cycleMs(o)) / 1000;

// --players, after --overload's doubling: each player is a Socket.IO connection of the
// load generator's, on the same box as the service
const MAX_PLAYERS = 20_000;

// --history: a hundred million bets take hours to seed and hundreds of gigabytes
const MAX_HISTORY_BETS = 100_000_000;

const DEFAULTS = {
  players: 2000,
  sessionRate: 200,
  durationS: 30,
  walletLatencyMs: 0,
  bettingWindowMs: 1000,
  betSpreadPercent: 40,
  playerThreads: 2,
  cashOutMaxCents: DEFAULT_CASH_OUT_MAX_CENTS,
  minRoundMs: DEFAULT_MIN_ROUND_MS,
};
// a crash smoke run aims lower, so that its flights are short, and bets for a whole cycle and
// a second more, so that every engine opens its betting while the players bet
const SMOKE = {
  players: 6,
  sessionRate: 6,
  durationS: 3,
  walletLatencyMs: 0,
  bettingWindowMs: 1000,
  betSpreadPercent: 40,
  playerThreads: 1,
  operators: 2,
  cashOutMaxCents: SMOKE_CASH_OUT_MAX_CENTS,
  minRoundMs: DEFAULT_MIN_ROUND_MS,
};

export const USAGE = `usage: npm run bench -- [options]
  --deployment all-in-one|split   the service as one process, or one process per Procfile role (default all-in-one)
  --game dice|crash|gems          the game the players play (default dice); crash players also cash out (D40); gems
                                  players play Gem Vault (D41), each as often as minRoundMs lets it
  --cash-out-max M.MM             crash: the highest multiplier a player aims to cash out at (default ${centsWords(DEFAULTS.cashOutMaxCents)},
                                  ${centsWords(SMOKE.cashOutMaxCents)} with --smoke)
  --min-round MS                  gems: the operators' minRoundMs, the least time between a session's plays (default ${DEFAULTS.minRoundMs})
  --feature-buy-share F           gems: the fraction of plays, 0 to 1, that buy the feature (default 0)
  --players N                     connected players, each betting every round (default ${DEFAULTS.players})
  --operators N                   operators the players are spread over (default: session rate / ${SESSIONS_PER_OPERATOR_PER_S})
  --session-rate N                players arriving per second: session creates, then connections (default ${DEFAULTS.sessionRate})
  --duration S                    seconds of betting (default ${DEFAULTS.durationS})
  --wallet-latency MS             latency added to every wallet answer (default 0)
  --betting-window MS             the operators' betting window (default ${DEFAULTS.bettingWindowMs})
  --out FILE                      the JSON results (default bench-results/<timestamp>.json)
  --bet-spread PERCENT            each bet falls at random in the first PERCENT of the betting window (default ${DEFAULTS.betSpreadPercent});
                                  gems: each player's first play falls in the first PERCENT of minRoundMs (up to 100)
  --engine-starts aligned|staggered
                                  operators' engines start together and run in step (the worst case), or at
                                  phases spread over one cycle, as independent casinos do (default staggered)
  --player-threads N              worker threads the players are spread over (default ${DEFAULTS.playerThreads})
  --cpu-prof DIR                  profile every service process (node --cpu-prof); .cpuprofile files land in DIR
  --service-log DIR               write every service process's log to DIR/<process>.log
  --trace-gc                      run every service process with node --trace-gc (needs --service-log to keep the lines)
  --trace-bets DIR                every service process records each bet's steps to DIR/<pid>.jsonl; the report
                                  adds the time between the steps of the accepted bets
  --skeleton                      while the players bet, also run the bet path's own steps (statements, queue hop,
                                  wallet call) bare, one at a time on a thread of their own: the least those steps
                                  take at that load; they add load of their own, so not in a run measured for itself
  --history N                     before the run, N settled bets of the past 12 months (sessions, rounds, audit rows,
                                  win jobs) in its database, copied from a template seeded once per N; seeding and
                                  copying come before the run and outside its two minutes (default 0: empty)
  --history-rebuild               seed the --history template again even when it exists
  --overload                      twice the players the other options give (default ${2 * DEFAULTS.players}), everything else
                                  unchanged: more bets than the box carries, which the service refuses service_busy (D37)
  --smoke                         a tiny run of a few seconds (${SMOKE.players} players, ${SMOKE.durationS} s), as CI runs it`;

export function parseOptions(argv: string[], root: string, now: Date = new Date()): BenchOptions {
  const given = new Map<string, string>();
  let smoke = false;
  let traceGc = false;
  let skeleton = false;
  let historyRebuild = false;
  let overload = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--smoke') {
      smoke = true;
      continue;
    }
    if (arg === '--trace-gc') {
      traceGc = true;
      continue;
    }
    if (arg === '--skeleton') {
      skeleton = true;
      continue;
    }
    if (arg === '--history-rebuild') {
      historyRebuild = true;
      continue;
    }
    if (arg === '--overload') {
      overload = true;
      continue;
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new UsageError(`unexpected argument ${arg}`);
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`${arg} needs a value`);
    given.set(match[1]!, value);
  }
  const base = smoke ? SMOKE : DEFAULTS;
  const take = (name: string) => {
    const value = given.get(name);
    given.delete(name);
    return value;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = take(name);
    if (raw === undefined) return fallback;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new UsageError(`--${name} must be an integer from ${min} to ${max} (got ${raw})`);
    }
    return Number(raw);
  };

  const deployment = take('deployment') ?? 'all-in-one';
  if (deployment !== 'all-in-one' && deployment !== 'split') throw new UsageError(`--deployment must be all-in-one or split (got ${deployment})`);
  const game = take('game') ?? 'dice';
  if (game !== 'dice' && game !== 'crash' && game !== 'gems') throw new UsageError(`--game must be dice, crash or gems (got ${game})`);
  const cashOutMaxText = take('cash-out-max');
  if (cashOutMaxText !== undefined && game !== 'crash') throw new UsageError('--cash-out-max is a crash option: add --game crash');
  const cashOutMaxCents = cashOutMaxText === undefined ? base.cashOutMaxCents : parseCashOutMax(cashOutMaxText);
  if (cashOutMaxCents === undefined) throw new UsageError(`--cash-out-max must be a multiplier with two decimals, ${CASH_OUT_MAX_BOUNDS} (got ${cashOutMaxText})`);
  const minRoundText = given.get('min-round');
  if (minRoundText !== undefined && game !== 'gems') throw new UsageError('--min-round is a gems option: add --game gems');
  // D41's bounds are 0 to an hour; a bench player plays at least every few seconds, and 100 ms
  // keeps a run's plays countable
  const minRoundMs = int('min-round', base.minRoundMs, 100, 5000);
  const featureBuyText = take('feature-buy-share');
  if (featureBuyText !== undefined && game !== 'gems') throw new UsageError('--feature-buy-share is a gems option: add --game gems');
  const featureBuyShare = featureBuyText === undefined ? 0 : parseFeatureBuyShare(featureBuyText);
  if (featureBuyShare === undefined) throw new UsageError(`--feature-buy-share must be a number from 0 to 1 (got ${featureBuyText})`);
  const asked = int('players', base.players, 1, MAX_PLAYERS);
  // doubled before anything follows from the count (the operators, the run's length), so
  // that an overloaded run is bounded like any other
  const players = overload ? 2 * asked : asked;
  if (players > MAX_PLAYERS) throw new UsageError(`--overload doubles --players ${asked} to ${players}; at most ${MAX_PLAYERS} players`);
  const sessionRate = int('session-rate', base.sessionRate, 1, 2000);
  const defaultOperators = smoke ? SMOKE.operators : Math.ceil(sessionRate / SESSIONS_PER_OPERATOR_PER_S);
  const operators = int('operators', Math.min(players, defaultOperators), 1, 1000);
  const bettingWindowMs = int('betting-window', base.bettingWindowMs, 500, 15_000);
  // a crash smoke run bets for a cycle whole (SMOKE above)
  const defaultDurationS = smoke && game === 'crash' ? Math.ceil(cycleMs({ game, cashOutMaxCents, bettingWindowMs, minRoundMs }) / 1000) + 1 : base.durationS;
  const durationS = int('duration', defaultDurationS, 1, 60);
  const walletLatencyMs = int('wallet-latency', base.walletLatencyMs, 0, 2000);
  // up to 90 %: a bet sent in the window's last moments arrives after it closed; a gems play
  // has no window to miss (D41)
  const betSpreadPercent = int('bet-spread', base.betSpreadPercent, 1, game === 'gems' ? 100 : 90);
  const playerThreads = int('player-threads', base.playerThreads, 1, 8);
  const history = int('history', 0, 0, MAX_HISTORY_BETS);
  if (historyRebuild && history === 0) throw new UsageError('--history-rebuild needs --history N');
  const engineStarts = take('engine-starts') ?? 'staggered';
  if (engineStarts !== 'aligned' && engineStarts !== 'staggered') throw new UsageError(`--engine-starts must be aligned or staggered (got ${engineStarts})`);
  const out = take('out') ?? path.join(root, 'bench-results', `${now.toISOString().replace(/[:.]/g, '-')}.json`);
  const cpuProf = take('cpu-prof');
  const serviceLog = take('service-log');
  const traceBets = take('trace-bets');
  if (traceGc && serviceLog === undefined) throw new UsageError('--trace-gc needs --service-log DIR: the lines are written to the service log');
  const unknown = [...given.keys()];
  if (unknown.length > 0) throw new UsageError(`unknown option(s): ${unknown.map((name) => `--${name}`).join(', ')}`);

  if (operators * CONTRACT_SESSIONS_PER_OPERATOR_PER_S < sessionRate) {
    throw new UsageError(
      `${sessionRate} sessions/s needs at least ${Math.ceil(sessionRate / CONTRACT_SESSIONS_PER_OPERATOR_PER_S)} operators ` +
        `(contract 8.1: ${CONTRACT_SESSIONS_PER_OPERATOR_PER_S} per second each)`,
    );
  }
  const runSeconds = expectedRunSeconds({ players, sessionRate, durationS, bettingWindowMs, game, cashOutMaxCents, minRoundMs });
  if (runSeconds > MAX_RUN_SECONDS) {
    const cycle =
      game === 'crash'
        ? `${CRASH_CYCLES_PER_RUN} cycles of betting window + the flight to ${centsWords(cashOutMaxCents)} + ${COOLDOWN_MS} ms`
        : game === 'gems'
          ? `${CYCLES_PER_RUN} x minRoundMs`
          : `${CYCLES_PER_RUN} cycles of betting window + ${ROLLING_WINDOW_MS + COOLDOWN_MS} ms`;
    throw new UsageError(
      `this run would take about ${Math.ceil(runSeconds)} s (${FIXED_SECONDS} s + 2 x players / session rate + duration + ` +
        `${cycle}); keep it within ${MAX_RUN_SECONDS} s so that it ends within 2 minutes`,
    );
  }
  return {
    deployment,
    game,
    cashOutMaxCents,
    minRoundMs,
    featureBuyShare,
    players,
    operators,
    sessionRate,
    durationS,
    walletLatencyMs,
    bettingWindowMs,
    out: path.resolve(out),
    smoke,
    cpuProfDir: cpuProf === undefined ? undefined : path.resolve(cpuProf),
    serviceLogDir: serviceLog === undefined ? undefined : path.resolve(serviceLog),
    traceGc,
    skeleton,
    traceBetsDir: traceBets === undefined ? undefined : path.resolve(traceBets),
    betSpread: betSpreadPercent / 100,
    playerThreads,
    engineStarts,
    history,
    historyRebuild,
    overload,
  };
}
