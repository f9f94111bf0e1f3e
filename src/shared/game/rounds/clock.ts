import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import type { ServiceContext } from '../context.js';
import type { Cycle, CyclePhase } from '../../platform/db/client.js';
import { statement } from '../../platform/db/sql.js';
import { SNAPSHOT_COLUMNS_SQL, configSnapshot, snapshotValues } from '../operators/game-config.js';
import type { PayoutRounding } from '../../domain/games/config.js';
import type { EngineJob } from '../../platform/queues.js';
import { countPresent } from '../players/presence.js';
import { engineKeyOf, type EngineKey } from '../../domain/engine-key.js';
import { rollRounds, settleRounds } from './settle.js';
import { flightConfig, resolveDue, storeCrashPoints } from './flight.js';
import { curveTime } from '../../domain/games/crash-curve.js';
import { gameModule } from '../../domain/games/index.js';
import { voidRound } from './voids.js';
import { tellFreeBetSessions } from '../freebets/usable.js';
import { keepCycleConfig } from './cycle-config.js';

// The engine clock (D1, contract 3.1): PENDING, BETTING_OPEN, ROLLING, RESULT, COOLDOWN,
// then the next cycle while a player is connected or a round is unsettled. Every phase
// change is an UPDATE fenced on the expected phase, so a duplicated, late or stalled tick
// cannot move a cycle twice; only the transaction that moved it goes on to broadcast and
// schedule the next tick. Ticks run for every engine every few seconds, so each is a
// handful of raw statements.
//
// D29: a tick runs under the scheduler term (epoch) of the leader that runs it, and each
// move is also fenced, in its own statement, on that term: the epoch is still the one
// Postgres records (scheduler_leader: a later leader has not registered), the cycle is its
// engine's current cycle, and the cycle runs under this term (leader_epoch, set when its
// betting opens; a successor adopts a cycle handed over, D30, and interrupts one left by a
// crash, recovery.ts). So a tick left in Redis by a dead leader moves nothing its successor
// has not adopted, whenever it runs, and a deposed leader's tick moves nothing once its
// successor registered (one under way at that moment is waited for by recovery's own
// fenced statements, recovery.ts).

export type RoundStatePayload = {
  cycleId: string;
  phase: CyclePhase | 'COOLDOWN';
  phaseEndsAt: string | null;
  // D40: a flight's start, and the service's clock as the message leaves
  flightStartedAt?: string | null;
  serverTime?: string;
};

// what a tick needs of a cycle
export type ClockCycle = EngineKey & {
  id: string;
  phase: CyclePhase;
  phaseEndsAt: Date | null;
  bettingWindowMs: number;
  rollingWindowMs: number;
  cooldownMs: number;
  payoutMultiplierScaled: bigint;
  commissionMicro: bigint;
  // D46
  payoutRounding: PayoutRounding;
  // D40: when the cycle's flights started (a crash cycle's ROLLING)
  flightStartedAt: Date | null;
  // D36: its rounds' and bets' month (their partition key)
  createdAt: Date;
};

const CYCLE_COLUMNS = `id, operator_id, game_code, currency, phase, phase_ends_at, betting_window_ms, rolling_window_ms, cooldown_ms,
  payout_multiplier_scaled, commission_micro, payout_rounding, flight_started_at, created_at`;

// D29: the term $n is current, and the cycle runs under it and is its engine's current cycle
const inTerm = (n: number) => `cycles.leader_epoch = $${n}::bigint AND ${termIsCurrent(n)} AND ${isEngineCycle}`;
const termIsCurrent = (n: number) => `$${n}::bigint = (SELECT epoch FROM scheduler_leader WHERE id = 1)`;
const isEngineCycle = `EXISTS (SELECT 1 FROM engines e WHERE e.operator_id = cycles.operator_id AND e.game_code = cycles.game_code
     AND e.currency = cycles.currency AND e.current_cycle_id = cycles.id)`;

// Thrown by a tick whose term is over (a later leader registered): the job fails and is
// retried, so that the current leader's worker runs it. Thrown too by an election that
// cannot take its term (recovery.ts).
export class SupersededError extends Error {
  override name = 'SupersededError';
  constructor(
    readonly epoch: bigint,
    readonly current: bigint,
  ) {
    super(`scheduler term ${epoch} is over: term ${current} is current`);
  }
}

const CURRENT_TERM = statement('scheduler_term', 'SELECT epoch FROM scheduler_leader WHERE id = 1');

export async function currentTerm(svc: Pick<ServiceContext, 'sql'>): Promise<bigint> {
  const [row] = await svc.sql.query<{ epoch: bigint }>(CURRENT_TERM);
  return row!.epoch;
}

// A move was refused: a no-op when the cycle had moved on or is not this term's (a stale
// tick), an error when the term itself is over.
async function refused(svc: ServiceContext, epoch: bigint): Promise<null> {
  const current = await currentTerm(svc);
  if (current !== epoch) throw new SupersededError(epoch, current);
  return null;
}

type CycleRow = {
  id: string;
  operator_id: string;
  game_code: string;
  currency: string;
  phase: CyclePhase;
  phase_ends_at: Date | null;
  betting_window_ms: number;
  rolling_window_ms: number;
  cooldown_ms: number;
  payout_multiplier_scaled: bigint;
  commission_micro: bigint;
  payout_rounding: PayoutRounding;
  flight_started_at: Date | null;
  created_at: Date;
};

const clockCycle = (row: CycleRow): ClockCycle => ({
  id: row.id,
  operatorId: row.operator_id,
  gameCode: row.game_code,
  currency: row.currency,
  phase: row.phase,
  phaseEndsAt: row.phase_ends_at,
  bettingWindowMs: row.betting_window_ms,
  rollingWindowMs: row.rolling_window_ms,
  cooldownMs: row.cooldown_ms,
  payoutMultiplierScaled: row.payout_multiplier_scaled,
  commissionMicro: row.commission_micro,
  payoutRounding: row.payout_rounding,
  flightStartedAt: row.flight_started_at,
  createdAt: row.created_at,
});

export const roundState = (
  cycle: Pick<ClockCycle, 'id' | 'phase' | 'phaseEndsAt'> & Partial<Pick<ClockCycle, 'flightStartedAt'>>,
  serverTime?: Date,
): RoundStatePayload => ({
  cycleId: cycle.id,
  phase: cycle.phase,
  phaseEndsAt: cycle.phaseEndsAt?.toISOString() ?? null,
  ...(cycle.flightStartedAt && cycle.phase === 'ROLLING'
    ? { flightStartedAt: cycle.flightStartedAt.toISOString(), serverTime: (serverTime ?? new Date()).toISOString() }
    : {}),
});

export async function currentCycle(svc: Pick<ServiceContext, 'db'>, of: EngineKey): Promise<Cycle | null> {
  const engine = await svc.db.engine.findUnique({
    where: { operatorId_gameCode_currency: engineKeyOf(of) },
    select: { currentCycleId: true },
  });
  if (!engine?.currentCycleId) return null;
  return svc.db.cycle.findUnique({ where: { id: engine.currentCycleId } });
}

const ENGINE_RUNNING = statement(
  'engine_running',
  'SELECT running FROM engines WHERE operator_id = $1 AND game_code = $2 AND currency = $3',
);
// ON CONFLICT: players who connect at the same moment to an engine that does not exist
// yet must not fail each other
const CREATE_ENGINE = statement(
  'engine_create',
  `INSERT INTO engines (operator_id, game_code, currency, running, updated_at) VALUES ($1, $2, $3, false, now())
   ON CONFLICT DO NOTHING`,
);
// A stopped engine's next cycle, in PENDING, and the engine running it. The engine row is
// locked and re-read: of callers racing to start it, one creates the cycle, the others find
// it running and do nothing. contract 8.6: config and weights are snapshotted when the
// cycle is created (PENDING), as the game's module reads them (game-config.ts; an engine
// without a config row plays the defaults, 2.12, D9, D46).
const START_CLOCK = statement(
  'engine_start_clock',
  `WITH engine AS (
     SELECT operator_id, game_code, currency FROM engines
     WHERE operator_id = $2 AND game_code = $3 AND currency = $4 AND NOT running
     FOR UPDATE
   ),
   cycle AS (
     INSERT INTO cycles (id, operator_id, game_code, currency, number, phase, ${SNAPSHOT_COLUMNS_SQL})
     SELECT $1, engine.operator_id, engine.game_code, engine.currency,
            COALESCE((SELECT max(number) FROM cycles WHERE operator_id = $2 AND game_code = $3 AND currency = $4), 0) + 1,
            'PENDING', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::payout_rounding, $16::jsonb
     FROM engine
     RETURNING ${CYCLE_COLUMNS}
   ),
   started AS (
     UPDATE engines SET running = true, current_cycle_id = cycle.id, updated_at = now()
     FROM cycle WHERE engines.operator_id = cycle.operator_id AND engines.game_code = cycle.game_code AND engines.currency = cycle.currency
   )
   SELECT * FROM cycle`,
);

// Starts the clock unless it runs (a shared game's). Safe from any process at any moment.
export async function ensureEngine(svc: ServiceContext, of: EngineKey): Promise<void> {
  // D41: an instant game's plays have no clock
  if (gameModule(of.gameCode)?.kind === 'instant') return;
  const key = [of.operatorId, of.gameCode, of.currency];
  const [known] = await svc.sql.query<{ running: boolean }>(ENGINE_RUNNING, key);
  if (known?.running) return;
  if (!known) await svc.sql.query(CREATE_ENGINE, key);
  await startClock(svc, of, 'by_tick');
}

// How a new cycle's betting opens (3.1: PENDING -> BETTING_OPEN): by the scheduler's next
// tick, or at once under the term of the scheduler that starts the cycle.
type Opening = 'by_tick' | { nowUnder: bigint };

// A new cycle's PENDING is announced; betting opens (3.1: PENDING -> BETTING_OPEN once the
// cycle exists) by the scheduler's next tick, or at once when the scheduler itself starts
// the next cycle of a clock it runs.
async function startClock(svc: ServiceContext, of: EngineKey, open: Opening): Promise<void> {
  const snapshot = await configSnapshot(svc.db, of.operatorId, of.gameCode, of.currency);
  const { config } = snapshot;
  const [row] = await svc.sql.query<CycleRow>(START_CLOCK, [randomUUID(), of.operatorId, of.gameCode, of.currency, ...snapshotValues(snapshot)]);
  if (!row) return;
  keepCycleConfig(row.id, config);
  const cycle = clockCycle(row);
  // the scheduler opening betting at once announces PENDING with BETTING_OPEN (one write
  // per player, realtime/write-coalescing.ts)
  if (open !== 'by_tick') {
    return openBetting(svc, cycle.id, open.nowUnder, cycle).catch(async (err: unknown) => {
      // a term that is over opens nothing: the current one opens the cycle with its tick
      if (err instanceof SupersededError) await schedule(svc, cycle.id, 'PENDING', 0);
      throw err;
    });
  }
  broadcast(svc, cycle);
  await schedule(svc, cycle.id, 'PENDING', 0);
}

// One tick, run under the scheduler term `epoch` (D29): move the cycle out of `from`.
// Returns without effect when another tick (or another process) already did, or when the
// cycle is not this term's; throws SupersededError when the term is over.
export async function advanceCycle(svc: ServiceContext, job: EngineJob, epoch: bigint): Promise<void> {
  switch (job.from) {
    case 'PENDING':
      return openBetting(svc, job.cycleId, epoch);
    case 'BETTING_OPEN':
      return closeBetting(svc, job.cycleId, epoch);
    case 'ROLLING':
      return (job.flight ?? (await isFlight(svc, job.cycleId))) ? fly(svc, job.cycleId, epoch) : roll(svc, job.cycleId, epoch);
    case 'RESULT':
      return settleAndCool(svc, job.cycleId, epoch);
    case 'COOLDOWN':
      return finish(svc, job.cycleId, epoch);
  }
}

// the phase's end follows from the cycle's own windows; a PENDING cycle, which no term runs
// yet, is opened by the current term and runs under it from then on (D29)
const MOVE_SQL = `UPDATE cycles SET
     phase = $3::cycle_phase,
     phase_ends_at = $4::timestamptz + (CASE $3::cycle_phase
       WHEN 'BETTING_OPEN' THEN betting_window_ms WHEN 'ROLLING' THEN rolling_window_ms WHEN 'COOLDOWN' THEN cooldown_ms END)
       * interval '1 millisecond',
     leader_epoch = $5::bigint
   WHERE id = $1 AND phase = $2::cycle_phase
     AND (CASE WHEN $2::cycle_phase = 'PENDING' THEN ${termIsCurrent(5)} AND ${isEngineCycle} ELSE ${inTerm(5)} END)
   RETURNING ${CYCLE_COLUMNS}`;
const MOVE = statement('cycle_move', MOVE_SQL);
// The cycle's rounds follow it into ROLLING (D1) in the statement that moves it: one
// statement and one commit. rgs_rounds_follow_rolling (a migration's function) updates them
// under a snapshot of its own, taken once the move holds the cycle, so it sees every round
// that an acceptance holding the cycle FOR SHARE committed while the move waited for it,
// which this statement's own snapshot does not.
const MOVE_TO_ROLLING = statement(
  'cycle_move_rolling',
  `WITH moved AS (${MOVE_SQL}) SELECT moved.*, rgs_rounds_follow_rolling(moved.id, moved.created_at) AS rounds_rolling FROM moved`,
);

// `announce`: round_state of the new phase at once (the default), or left to the caller;
// `after` is a phase not yet announced, announced just before the new one
type Announcement = { announce?: boolean; after?: ClockCycle };

async function move(
  svc: ServiceContext,
  epoch: bigint,
  cycleId: string,
  from: CyclePhase,
  to: CyclePhase,
  announcement: Announcement = {},
): Promise<ClockCycle | null> {
  const [row] = await svc.sql.query<CycleRow>(to === 'ROLLING' ? MOVE_TO_ROLLING : MOVE, [cycleId, from, to, svc.now(), epoch]);
  if (announcement.after) broadcast(svc, announcement.after);
  if (!row) return refused(svc, epoch);
  const moved = clockCycle(row);
  if (announcement.announce !== false) broadcast(svc, moved);
  return moved;
}

async function openBetting(svc: ServiceContext, cycleId: string, epoch: bigint, pending?: ClockCycle): Promise<void> {
  const cycle = await move(svc, epoch, cycleId, 'PENDING', 'BETTING_OPEN', { after: pending });
  if (cycle) await scheduleEnd(svc, cycle);
}

async function closeBetting(svc: ServiceContext, cycleId: string, epoch: bigint): Promise<void> {
  const cycle = await move(svc, epoch, cycleId, 'BETTING_OPEN', 'ROLLING', { announce: false });
  if (!cycle) return;
  if (gameModule(cycle.gameCode)?.flight) {
    // a tick to pick the flight up should its start fail half-way (the move is committed)
    await schedule(svc, cycleId, 'ROLLING', FLIGHT_TICK_MS, { at: 'start', flight: true });
    return startFlight(svc, cycle, epoch);
  }
  broadcast(svc, cycle);
  await scheduleEnd(svc, cycle);
}

// ---- a flight (D40): a crash cycle's ROLLING -----------------------------------------------

const GAME_OF_CYCLE = statement('cycle_game', 'SELECT game_code FROM cycles WHERE id = $1');

async function isFlight(svc: ServiceContext, cycleId: string): Promise<boolean> {
  const [row] = await svc.sql.query<{ game_code: string }>(GAME_OF_CYCLE, [cycleId]);
  return row !== undefined && gameModule(row.game_code)?.flight === true;
}

// The flight starts once every round of the cycle has its crash point stored (flight.ts), at
// one instant for all; ROLLING then lasts at most until the curve reaches maxMultiplier.
const START_FLIGHT = statement(
  'cycle_start_flight',
  `UPDATE cycles SET flight_started_at = $2, phase_ends_at = $2::timestamptz + $3::int * interval '1 millisecond'
   WHERE id = $1 AND phase = 'ROLLING' AND flight_started_at IS NULL AND ${inTerm(4)}
   RETURNING ${CYCLE_COLUMNS}`,
);
const READ_FLYING_CYCLE = statement('cycle_read_flying', `SELECT ${CYCLE_COLUMNS} FROM cycles WHERE id = $1 AND phase = 'ROLLING' AND ${inTerm(2)}`);

async function startFlight(svc: ServiceContext, cycle: ClockCycle, epoch: bigint): Promise<void> {
  const config = await flightConfig(svc, cycle.id);
  await storeCrashPoints(svc, cycle, config);
  const [row] = await svc.sql.query<CycleRow>(START_FLIGHT, [cycle.id, svc.now(), curveTime(config.maxMultiplierCents), epoch]);
  if (!row) return void (await refused(svc, epoch));
  const flying = clockCycle(row);
  broadcast(svc, flying);
  await fly(svc, cycle.id, epoch, flying);
}

// A flight's tick, due when the next round's own end is to be recorded (flight.ts
// FLIGHT_GRACE_MS; or sooner, see FLIGHT_TICK_MS): the rounds whose end has come are
// resolved; ROLLING ends once none is left flying. A tick that finds the flight not yet
// started (its start failed half-way) starts it.
async function fly(svc: ServiceContext, cycleId: string, epoch: bigint, started?: ClockCycle): Promise<void> {
  const cycle = started ?? (await svc.sql.query<CycleRow>(READ_FLYING_CYCLE, [cycleId, epoch]).then(([row]) => row && clockCycle(row)));
  if (!cycle) return void (await refused(svc, epoch));
  if (!cycle.flightStartedAt) return startFlight(svc, cycle, epoch);
  const config = await flightConfig(svc, cycle.id);
  const elapsedMs = svc.now().getTime() - cycle.flightStartedAt.getTime();
  const progress = await resolveDue(svc, cycle, config, elapsedMs);
  if (progress.flying === 0) return roll(svc, cycleId, epoch);
  const nextMs = Math.min(progress.nextEndMs ?? Infinity, elapsedMs + FLIGHT_TICK_MS);
  await schedule(svc, cycleId, 'ROLLING', Math.max(0, cycle.flightStartedAt.getTime() + nextMs - svc.now().getTime()), { at: `${Math.max(0, nextMs)}`, flight: true });
}

const STILL_FLYING = statement(
  'flight_stragglers',
  `SELECT id FROM rounds WHERE cycle_id = $1 AND cycle_created_at = $2 AND NOT settled AND state = 'ROLLING'`,
);

async function voidFlying(svc: ServiceContext, cycle: ClockCycle): Promise<[]> {
  const rounds = await svc.sql.query<{ id: string }>(STILL_FLYING, [cycle.id, cycle.createdAt]);
  // D42: the sessions whose free bets these voids gave back, told once each
  const freeSessions = new Set<string>();
  for (const round of rounds) await voidRound(svc, round.id, 'flight_ended', freeSessions);
  await tellFreeBetSessions(svc, freeSessions);
  return [];
}

// A flight's ticks come at least this often, so that a round accepted after the flight started
// (a slow debit) gets its crash point, and can be cashed out, soon after.
const FLIGHT_TICK_MS = 1000;

// contract 3.1: ROLLING -> RESULT when the outcome is derived; the outcome is persisted
// before anything is announced.
async function roll(svc: ServiceContext, cycleId: string, epoch: bigint): Promise<void> {
  const cycle = await move(svc, epoch, cycleId, 'ROLLING', 'RESULT', { announce: false });
  if (cycle) await settleAndCool(svc, cycleId, epoch, cycle);
}

// a cycle in RESULT that this term runs
const READ_RESULT_CYCLE = statement('cycle_read_result', `SELECT ${CYCLE_COLUMNS} FROM cycles WHERE id = $1 AND phase = 'RESULT' AND ${inTerm(2)}`);

// RESULT: derive and settle every round still waiting (both steps skip what is done, so a
// tick resumed after a crash finishes the job), then cool down. `moved`: this tick moved the
// cycle to RESULT and announces it: with the results, or, in a cycle without results
// (nobody bet), with COOLDOWN, so that each player gets the two in one write
// (realtime/write-coalescing.ts) a statement after RESULT began.
async function settleAndCool(svc: ServiceContext, cycleId: string, epoch: bigint, moved?: ClockCycle): Promise<void> {
  const cycle = moved ?? (await svc.sql.query<CycleRow>(READ_RESULT_CYCLE, [cycleId, epoch]).then(([row]) => row && clockCycle(row)));
  if (!cycle) return void (await refused(svc, epoch));
  let announced = !moved;
  const announce = () => {
    if (announced) return;
    announced = true;
    broadcast(svc, moved!);
  };
  let cooling: ClockCycle | null;
  try {
    // a flight's rounds were resolved one by one (D40): one still flying here was accepted
    // after the last tick, and has had no flight of its own, so it is voided and refunded
    const rolled = gameModule(cycle.gameCode)?.flight ? await voidFlying(svc, cycle) : await rollRounds(svc, cycle, announce);
    // a tick that moved the cycle to RESULT rolled every one of its rounds itself (no round
    // reaches RESULT before its cycle, and none joins it after); a resumed tick reads them,
    // since an earlier attempt may have rolled some
    await settleRounds(svc, cycle, moved ? rolled : undefined);
    cooling = await move(svc, epoch, cycleId, 'RESULT', 'COOLDOWN', { announce: false });
  } finally {
    // a tick that fails still announces the phase it reached
    announce();
  }
  if (!cooling) return;
  broadcast(svc, cooling);
  await scheduleEnd(svc, cooling);
}

// D1: after the cooldown the clock goes on while the engine has a connected player or an
// unsettled round; otherwise it stops until the next connection.
async function finish(svc: ServiceContext, cycleId: string, epoch: bigint): Promise<void> {
  const [row] = await svc.sql.query<CycleRow & { stopped: boolean }>(FINISH, [cycleId, svc.now(), epoch]);
  if (!row) return void (await refused(svc, epoch));
  if (row.stopped) await continueClock(svc, clockCycle(row), { nowUnder: epoch });
}

// the cycle is FINISHED (fenced on COOLDOWN and on the term) and its engine stops, in one
// statement
const FINISH = statement(
  'cycle_finish',
  `WITH finished AS (
     UPDATE cycles SET phase = 'FINISHED', phase_ends_at = NULL, finished_at = $2
     WHERE id = $1 AND phase = 'COOLDOWN' AND ${inTerm(3)}
     RETURNING ${CYCLE_COLUMNS}
   ),
   stopped AS (
     UPDATE engines SET running = false, current_cycle_id = NULL, updated_at = now()
     FROM finished
     WHERE engines.operator_id = finished.operator_id AND engines.game_code = finished.game_code
       AND engines.currency = finished.currency AND engines.current_cycle_id = finished.id
     RETURNING 1
   )
   SELECT finished.*, EXISTS (SELECT 1 FROM stopped) AS stopped FROM finished`,
);

const STOP_ENGINE = statement(
  'engine_stop',
  `UPDATE engines SET running = false, current_cycle_id = NULL, updated_at = now()
   WHERE operator_id = $1 AND game_code = $2 AND currency = $3 AND current_cycle_id = $4
   RETURNING 1`,
);
const HAS_UNSETTLED_ROUNDS = statement(
  'engine_unsettled',
  'SELECT EXISTS (SELECT 1 FROM rounds WHERE operator_id = $1 AND game_code = $2 AND currency = $3 AND NOT settled) AS unsettled',
);

// The engine whose current cycle this was stops, and starts again at once with a new
// cycle if it still has a reason to run (an interrupted cycle, recovery.ts); the new
// cycle's betting opens with the next tick, after recovery.
export async function stopClock(svc: ServiceContext, cycle: EngineKey & { id: string }): Promise<void> {
  const key = engineKeyOf(cycle);
  const stopped = await svc.sql.query(STOP_ENGINE, [key.operatorId, key.gameCode, key.currency, cycle.id]);
  if (stopped.length > 0) await continueClock(svc, key, 'by_tick');
}

// A player who connects while the clock stops either sees it stopped and starts it, or is
// seen here (presence is written before a connection asks for the clock), so the engine
// has been stopped before presence is counted.
async function continueClock(svc: ServiceContext, key: EngineKey, open: Opening): Promise<void> {
  if ((await countPresent(svc.redis, key)) > 0 || (await hasUnsettledRounds(svc, key))) await startClock(svc, engineKeyOf(key), open);
}

const hasUnsettledRounds = async (svc: ServiceContext, key: EngineKey) =>
  (await svc.sql.query<{ unsettled: boolean }>(HAS_UNSETTLED_ROUNDS, [key.operatorId, key.gameCode, key.currency]))[0]!.unsettled;

function broadcast(svc: ServiceContext, cycle: ClockCycle) {
  if (cycle.phase === 'FINISHED') return;
  // contract 3.1: each phase change emits round_state, once per engine room (D1); a flight's
  // carries its start and the service's clock (D40)
  svc.emitter.toEngine(engineKeyOf(cycle), 'round_state', roundState(cycle, svc.now()));
}

// The tick that ends the phase the cycle just entered is due at the phaseEndsAt the players
// were told. The move reads the clock before its statement, which can wait for acceptances
// holding the cycle (FOR SHARE) and is then committed and announced; a window counted from
// here would end the phase that much later than announced, and the rounds of a busy engine
// would drift. Never more than the phase's window: a clock set back does not stall it.
function scheduleEnd(svc: ServiceContext, cycle: ClockCycle): Promise<void> {
  const windows: Partial<Record<CyclePhase, number>> = { BETTING_OPEN: cycle.bettingWindowMs, ROLLING: cycle.rollingWindowMs, COOLDOWN: cycle.cooldownMs };
  const windowMs = windows[cycle.phase] ?? 0;
  const dueInMs = (cycle.phaseEndsAt?.getTime() ?? 0) - svc.now().getTime();
  return schedule(svc, cycle.id, cycle.phase as EngineJob['from'], Math.min(windowMs, Math.max(0, dueInMs)), { flight: false });
}

// The tick is a delayed queue job, which survives this process; Redis hands delayed jobs out
// only as often as its server cron runs (up to 100 ms late at Redis's default hz 10), so the
// process that scheduled the tick also promotes it at its due time (a late tick
// lengthens the cycle and delays every result). A job promoted or run meanwhile refuses the
// promotion, which changes nothing.
// `at`: one of several ticks of the same phase (a flight's), named by its due ms
// `at`: a flight's ticks are several per phase, each its own job; `flight`: EngineJob's
async function schedule(
  svc: ServiceContext,
  cycleId: string,
  from: EngineJob['from'],
  delayMs: number,
  { at, flight }: { at?: string; flight?: boolean } = {},
): Promise<void> {
  const data: EngineJob = flight === undefined ? { cycleId, from } : { cycleId, from, flight };
  const job = await svc.queues.engine.add('tick', data, { delay: delayMs, jobId: at === undefined ? `${cycleId}-${from}` : `${cycleId}-${from}-${at}` });
  if (delayMs <= 0) return;
  setTimeout(() => void job.promote().catch(() => undefined), delayMs).unref();
}

// A tick is a delayed queue job, and Redis is only the transport (D29): a job lost with Redis
// (emptied after the leader's recovery had run, or an add that never reached it) would leave
// its engine's clock stopped for good, its players waiting for a phase that never comes. The
// leader's sweep finds the engines whose current cycle, under this term, is past its phase's
// end by OVERDUE_TICK_MS (a PENDING cycle: past its creation; a flight: past its latest end)
// and runs the tick itself. A tick is fenced on the cycle's phase and the term, so one whose
// job was only late moves nothing twice.
const OVERDUE_TICK_MS = 5000;
const OVERDUE_CYCLES = statement(
  'clock_overdue',
  `SELECT c.id, c.game_code, c.phase
   FROM engines e JOIN cycles c ON c.id = e.current_cycle_id
   WHERE e.running AND $1::bigint = (SELECT epoch FROM scheduler_leader WHERE id = 1)
     AND ((c.phase = 'PENDING' AND c.leader_epoch IS NULL AND c.created_at < $2)
       OR (c.phase IN ('BETTING_OPEN', 'ROLLING', 'COOLDOWN') AND c.leader_epoch = $1::bigint AND c.phase_ends_at < $2))`,
);

export async function runOverdueTicks(svc: ServiceContext, epoch: bigint): Promise<number> {
  const overdue = await svc.sql.query<{ id: string; game_code: string; phase: EngineJob['from'] }>(OVERDUE_CYCLES, [
    epoch,
    new Date(svc.now().getTime() - OVERDUE_TICK_MS),
  ]);
  for (const cycle of overdue) {
    svc.logger.warn({ cycleId: cycle.id, phase: cycle.phase }, 'an overdue tick is run by the recovery sweep');
    const flight = cycle.phase === 'ROLLING' ? gameModule(cycle.game_code)?.flight === true : undefined;
    await advanceCycle(svc, flight === undefined ? { cycleId: cycle.id, from: cycle.phase } : { cycleId: cycle.id, from: cycle.phase, flight }, epoch);
  }
  return overdue.length;
}

// Re-derives every running clock from Postgres (a new leader, or Redis that lost its
// queues): each unfinished cycle gets its next tick at its phase's end. An instant play's cycle
// (D41) has no clock: the plays' sweep finishes it (plays/sweep.ts).
export async function resumeClocks(svc: ServiceContext): Promise<number> {
  const cycles = await svc.db.cycle.findMany({ where: { phase: { not: 'FINISHED' }, instant: false } });
  for (const cycle of cycles) await scheduleTick(svc, cycle);
  return cycles.length;
}

// the next tick of an unfinished cycle, at its phase's end; a flight's at once (D40: its ticks
// come at its rounds' own ends, which the tick itself finds, not at the phase's latest end)
export function scheduleTick(
  svc: ServiceContext,
  cycle: { id: string; gameCode: string; phase: CyclePhase; phaseEndsAt: Date | null; flightStartedAt?: Date | null },
): Promise<void> {
  const flying = cycle.phase === 'ROLLING' && cycle.flightStartedAt;
  const delay = cycle.phaseEndsAt && !flying ? Math.max(0, cycle.phaseEndsAt.getTime() - svc.now().getTime()) : 0;
  const flight = cycle.phase === 'ROLLING' ? gameModule(cycle.gameCode)?.flight === true : undefined;
  return schedule(svc, cycle.id, cycle.phase as EngineJob['from'], delay, { flight });
}

// The engine pool's job handler (workers/registry.ts binds it to rgs-engine "tick"): what its
// handlers share is the service and the term of the scheduler that runs them (D29).
export type EngineScope = { svc: ServiceContext; epoch: bigint };

// One tick of an engine clock, under the term of the scheduler that runs it (D1, D29).
export function runTick({ svc, epoch }: EngineScope, job: Job<EngineJob>): Promise<unknown> {
  return advanceCycle(svc, job.data, epoch);
}
