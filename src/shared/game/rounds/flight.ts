import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import { roundHash } from '../../domain/seeds.js';
import {
  automaticCashOutCents,
  centsText,
  crashFromHash,
  crashPayout,
  type CrashConfig,
} from '../../domain/games/crash.js';
import { CURVE_MAX_MS, curveCents, curveTime } from '../../domain/games/crash-curve.js';
import { bookedPayout } from '../../domain/payout.js';
import { roundedPayout } from '../../domain/currency.js';
import type { CashOutAck } from '../../domain/player-channel.js';
import { openServerSeed } from '../fairness/seed-vault.js';
import { cycleConfigOf } from './cycle-config.js';
import type { PayoutRounding } from '../../domain/games/config.js';
import { voidRound } from './voids.js';
import { standingRefusal } from '../sessions/standing.js';
import type { EngineKey } from '../../domain/engine-key.js';
import { settleRounds, type PricedCycle } from './settle.js';

// The flight of a crash cycle (D40): its ROLLING phase. Every round has its own crash point
// (D1, D2: outcomes stay per session) and all the cycle's flights start at one instant. A
// round ends at its player's cash-out, or by itself at `ends_at_ms`, the ms of the flight at
// which the curve reaches its automatic cash-out (autoCashOut, maxMultiplier or the payout
// cap, whichever is lowest) when that is at most its crash point, else its crash point. The
// clock (clock.ts) starts the flight, runs its ticks, and ends ROLLING once no round is left
// flying. A round's own end is recorded by the tick due at it; a cash-out that arrives after
// it marks it told first, so that a refusal is as durable as a win (D40, TELL_END).
//
// Every decision is made where the crash point is stored, by one statement fenced on the
// round's state: a cash-out (decided by the arrival stamp of the node that received it) and a
// round's own end cannot both win, and whichever commits first is the round's result, durable
// before its player hears of it. Settlement follows as for any round in RESULT (settle.ts):
// the win job is written with the round's SETTLED, so a win is paid once.

// a cycle as the flight needs it: the clock's, with its snapshot (contract 8.6)
export type FlightCycle = PricedCycle & { gameCode: string; currency: string };

// the crash configuration a cycle plays, from its snapshot
export const flightConfig = async (svc: Pick<ServiceContext, 'db'>, cycleId: string): Promise<CrashConfig> =>
  (await cycleConfigOf(svc, cycleId)) as unknown as CrashConfig;

// The rounds of the cycle still flying without a crash point: all of them when the flight
// starts, and after that a round whose debit was accepted once the flight had started.
const WITHOUT_CRASH_POINT = statement(
  'flight_rounds',
  `SELECT r.id, r.nonce, sd.id AS seed_id, sd.encrypted_server_seed, sd.client_seed, b.amount_micro, b.auto_cash_out_cents
   FROM rounds r JOIN seeds sd ON sd.id = r.seed_id JOIN bets b ON b.id = r.bet_id AND b.cycle_created_at = $2
   WHERE r.cycle_id = $1 AND r.cycle_created_at = $2 AND NOT r.settled AND r.state = 'ROLLING' AND r.crash_cents IS NULL`,
);

const STORE_CRASH_POINTS = statement(
  'flight_store',
  `UPDATE rounds r SET crash_cents = u.crash, ends_at_ms = u.ends
   FROM unnest($1::uuid[], $2::bigint[], $3::int[]) AS u(id, crash, ends)
   WHERE r.id = u.id AND r.cycle_created_at = $4 AND r.state = 'ROLLING' AND r.crash_cents IS NULL`,
);

// Derives and stores the crash point and own end of each flying round that has none. Before
// the flight starts, every round of the cycle gets one; so no cash-out is ever judged against a
// crash point not yet stored (a round without one is `not_flying`).
export async function storeCrashPoints(svc: ServiceContext, cycle: FlightCycle, config: CrashConfig): Promise<number> {
  const rounds = await svc.sql.query<{
    id: string;
    nonce: number;
    seed_id: string;
    encrypted_server_seed: Buffer;
    client_seed: string;
    amount_micro: bigint;
    auto_cash_out_cents: bigint | null;
  }>(WITHOUT_CRASH_POINT, [cycle.id, cycle.createdAt]);
  const stored: { id: string; crash: bigint; ends: number }[] = [];
  for (const round of rounds) {
    try {
      const serverSeed = openServerSeed(svc.config.masterKey, round.seed_id, round.encrypted_server_seed);
      const { crashCents } = crashFromHash(roundHash({ serverSeed, clientSeed: round.client_seed, nonce: round.nonce }), config.commissionMicro);
      const automatic = automaticCashOutCents(round.amount_micro, { autoCashOutCents: round.auto_cash_out_cents }, config);
      // the first ms at which the round ends by itself: its automatic cash-out if the curve
      // reaches it no later than the crash point, else its crash (D40)
      stored.push({ id: round.id, crash: crashCents, ends: curveTime(automatic <= crashCents ? automatic : crashCents) });
    } catch (err) {
      // contract 3.1: an unrecoverable RNG error voids the round
      svc.logger.error({ err, roundId: round.id }, 'crash point derivation failed; voiding the round');
      await voidRound(svc, round.id, 'rng_error');
    }
  }
  if (stored.length === 0) return 0;
  await svc.sql.query(STORE_CRASH_POINTS, [stored.map((s) => s.id), stored.map((s) => s.crash), stored.map((s) => s.ends), cycle.createdAt]);
  return stored.length;
}

// The rounds whose own end has come, `elapsedMs` into the flight: each moves to RESULT with its
// automatic cash-out when that won (its cents and time), or lost at its crash. Fenced on
// ROLLING: a cash-out that committed first is left as it decided.
const RESOLVE_DUE = statement(
  'flight_resolve',
  `UPDATE rounds r
   SET state = 'RESULT', result_at = $4,
       cash_out_cents = CASE WHEN u.won THEN u.cents END, cash_out_ms = CASE WHEN u.won THEN r.ends_at_ms END
   FROM unnest($1::uuid[], $2::bool[], $3::bigint[]) AS u(id, won, cents)
   WHERE r.id = u.id AND r.cycle_created_at = $5 AND r.state = 'ROLLING'
   RETURNING r.id, r.session_id, r.nonce, r.bet_id, r.crash_cents, r.cash_out_cents`,
);

// the cycle's rounds not yet settled: those still flying, and those in RESULT whose settlement
// has not run or did not finish (a cash-out's runs right after its ack)
const UNSETTLED = statement(
  'flight_flying',
  `SELECT r.id, r.state, r.ends_at_ms, r.crash_cents, b.amount_micro, b.is_free, b.auto_cash_out_cents
   FROM rounds r JOIN bets b ON b.id = r.bet_id AND b.cycle_created_at = $2
   WHERE r.cycle_id = $1 AND r.cycle_created_at = $2 AND NOT r.settled AND r.state IN ('ROLLING', 'RESULT')`,
);

type UnsettledRound = EndingRound & { state: 'ROLLING' | 'RESULT'; ends_at_ms: number | null };

export type FlightProgress = { flying: number; nextEndMs: number | null };

// D40 judges a cash-out at its arrival stamp, whatever the order in which the stamps reach the
// record. A round's own end is therefore recorded this long after it, so that a cash-out
// stamped before the end, still on its way from the node that stamped it, finds the round
// flying: one that takes longer than this to be decided finds the round ended, and is too
// late. The price is that a player hears of a crash this much after the curve reached it.
export const FLIGHT_GRACE_MS = 200;

// Resolves every round whose own end is at least FLIGHT_GRACE_MS behind `elapsedMs` into the
// flight, tells each player the result, and settles every round of the cycle in RESULT (these,
// and any cash-out whose own settlement did not finish). A round accepted after the flight
// started (a slow debit) gets its crash point first, on the same clock. Answers how many still
// fly and when the next one ends. A tick with nothing to do costs this one read.
export async function resolveDue(svc: ServiceContext, cycle: FlightCycle, config: CrashConfig, elapsedMs: number): Promise<FlightProgress> {
  let rounds = await svc.sql.query<UnsettledRound>(UNSETTLED, [cycle.id, cycle.createdAt]);
  if (rounds.some((round) => round.state === 'ROLLING' && round.crash_cents === null) && (await storeCrashPoints(svc, cycle, config)) > 0) {
    rounds = await svc.sql.query<UnsettledRound>(UNSETTLED, [cycle.id, cycle.createdAt]);
  }
  const flying = rounds.filter((round) => round.state === 'ROLLING');
  const due = flying.filter((round) => round.ends_at_ms !== null && round.crash_cents !== null && round.ends_at_ms + FLIGHT_GRACE_MS <= elapsedMs);
  const resolved = await recordEnds(svc, cycle, config, due);
  if (resolved.length > 0 || flying.length < rounds.length) await settleRounds(svc, cycle);
  const left = flying.filter((round) => !due.includes(round));
  const ends = left.flatMap((round) => (round.ends_at_ms === null ? [] : [round.ends_at_ms]));
  return { flying: left.length, nextEndMs: ends.length > 0 ? Math.min(...ends) + FLIGHT_GRACE_MS : null };
}

// a flying round as recording its own end needs it
type EndingRound = Stake & { id: string; crash_cents: bigint | null; auto_cash_out_cents: bigint | null };

// a bet's stake, and whether it is free (D42: its win is then net of the stake)
type Stake = { amount_micro: bigint; is_free: boolean };

// Records the own end of rounds whose end has come (each to RESULT: won at its automatic
// cash-out, or lost at its crash) and tells each player whose round this call moved; a round
// that a cash-out or another call moved first is left as it is. Answers the rounds moved.
async function recordEnds(svc: ServiceContext, cycle: FlightCycle, config: CrashConfig, due: EndingRound[]): Promise<ResolvedRow[]> {
  if (due.length === 0) return [];
  const verdicts = due.map((round) => {
    const automatic = automaticCashOutCents(round.amount_micro, { autoCashOutCents: round.auto_cash_out_cents }, config);
    const won = automatic <= round.crash_cents!;
    return { id: round.id, won, cents: won ? automatic : null };
  });
  const resolved = await svc.sql.query<ResolvedRow>(RESOLVE_DUE, [
    verdicts.map((v) => v.id),
    verdicts.map((v) => v.won),
    verdicts.map((v) => v.cents),
    svc.now(),
    cycle.createdAt,
  ]);
  const stakeOf = new Map(due.map((round) => [round.id, round]));
  for (const row of resolved) tellResult(svc, cycle, config, row, stakeOf.get(row.id)!);
  return resolved;
}

// D40 crash recovery: the rounds of flights that no longer run whose own end a refused cash-out
// told (TELL_END) before it was recorded. Their end is durable: it is recorded here as the
// flight's tick would have, and they are settled with the other rounds in RESULT. Answers how
// many this moved.
const TOLD_ENDS = statement(
  'flight_told_ends',
  `SELECT r.id, r.cycle_id, r.crash_cents, b.amount_micro, b.is_free, b.auto_cash_out_cents
   FROM rounds r JOIN bets b ON b.id = r.bet_id AND b.cycle_created_at = r.cycle_created_at JOIN cycles c ON c.id = r.cycle_id
   WHERE NOT r.settled AND r.state = 'ROLLING' AND r.end_told AND c.phase IN ('COOLDOWN', 'FINISHED')`,
);

export async function recordToldEnds(svc: ServiceContext): Promise<number> {
  const told = await svc.sql.query<EndingRound & { cycle_id: string }>(TOLD_ENDS);
  let recorded = 0;
  for (const cycleId of new Set(told.map((round) => round.cycle_id))) {
    const cycle = await svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } });
    const rounds = told.filter((round) => round.cycle_id === cycleId);
    recorded += (await recordEnds(svc, cycle, await flightConfig(svc, cycleId), rounds)).length;
  }
  return recorded;
}

type ResolvedRow = { id: string; session_id: string; nonce: number; bet_id: string; crash_cents: bigint; cash_out_cents: bigint | null };

// D40 round_result: at the round's resolution, the crash point revealed to its player
function tellResult(svc: ServiceContext, cycle: FlightCycle, config: CrashConfig, row: ResolvedRow, stake: Stake): void {
  const won = row.cash_out_cents !== null;
  svc.emitter.toSession(row.session_id, 'round_result', {
    roundId: row.id,
    cycleId: cycle.id,
    nonce: row.nonce,
    betId: row.bet_id,
    crashMultiplier: centsText(row.crash_cents),
    cashOutMultiplier: won ? centsText(row.cash_out_cents!) : null,
    won,
    payoutMicro: (won ? flightPayout(cycle, config, stake, row.cash_out_cents!) : 0n).toString(),
  });
}

// D40: a win pays floor(stake * cents / 100), at most maxPayoutMicro, booked as the cycle's
// payoutRounding says (D46); a free bet's, that less its stake (D42, 8.4), as settlement books it
export const flightPayout = (cycle: Pick<FlightCycle, 'payoutRounding' | 'currency'>, config: CrashConfig, stake: Stake, cents: bigint): bigint =>
  bookedPayout(roundedPayout(crashPayout(stake.amount_micro, cents, config.maxPayoutMicro), cycle.payoutRounding, cycle.currency), stake.amount_micro, stake.is_free);

// ---- the cash-out ------------------------------------------------------------------------

// The session's standing (D4: every message checks it; this read is the cash-out's check) and
// its round in its engine's current cycle, with what judging a cash-out needs.
const CASH_OUT_FACTS = statement(
  'cash_out_facts',
  `SELECT s.state AS session_state, s.expires_at, r.id, r.state, r.nonce, r.bet_id, r.crash_cents, r.ends_at_ms, r.cash_out_cents,
          r.cycle_created_at, c.id AS cycle_id, c.phase, c.flight_started_at, c.game_code, c.currency, c.payout_rounding,
          b.amount_micro, b.is_free, b.auto_cash_out_cents
   FROM sessions s
   LEFT JOIN engines e ON e.operator_id = s.operator_id AND e.game_code = s.game_code AND e.currency = s.currency
   LEFT JOIN cycles c ON c.id = e.current_cycle_id
   LEFT JOIN rounds r ON r.session_id = s.id AND r.cycle_id = c.id AND r.cycle_created_at = c.created_at
   LEFT JOIN bets b ON b.id = r.bet_id AND b.cycle_created_at = r.cycle_created_at
   WHERE s.id = $1`,
);

// The decision (D40): the round wins at m(t) iff it is still flying and `t` is before its own
// end. One statement, where the crash point is stored: of two cash-outs of the same round, or a
// cash-out and the round's own end, the first to commit decides and the other finds the round
// no longer ROLLING.
const CASH_OUT = statement(
  'cash_out_decide',
  `UPDATE rounds SET state = 'RESULT', result_at = $5, cash_out_cents = $3, cash_out_ms = $4
   WHERE id = $1 AND cycle_created_at = $2 AND state = 'ROLLING' AND crash_cents IS NOT NULL AND $4 < ends_at_ms
   RETURNING id, session_id, nonce, bet_id, crash_cents, cash_out_cents`,
);

const ROUND_AFTER = statement('cash_out_after', 'SELECT state, cash_out_cents FROM rounds WHERE id = $1 AND cycle_created_at = $2');

// A cash-out stamped at or after the round's own end: the round ended by itself (its automatic
// cash-out won, or it crashed) and the refusal tells its player so. D40 wants that answer
// durable before the ack, yet the end is recorded as RESULT only once FLIGHT_GRACE_MS has
// passed since it, so that a cash-out of the same round stamped before the end (another socket
// of the session) still finds it flying. The refusal marks the end told instead, at once: from
// then on no void takes the round (voids.ts), and crash recovery records the end as the tick
// would (recordToldEnds), so a player told "too late" is never refunded as if the round had
// been interrupted, and the answer waits for nothing.
const TELL_END = statement(
  'cash_out_tell_end',
  `UPDATE rounds SET end_told = true
   WHERE id = $1 AND cycle_created_at = $2 AND state = 'ROLLING' AND crash_cents IS NOT NULL AND $3 >= ends_at_ms
   RETURNING crash_cents`,
);

// what a cash-out is answered here: every refusal but those of the channel itself (D28)
type CashOutAnswer = Exclude<CashOutAck, { reason: 'rate_limited' | 'service_unavailable' }>;

// The flights this process has judged a cash-out in, by engine. A flight's start and its
// cycle's terms never change once it has started, so a later cash-out of the same engine's
// flight is decided at once (DECIDE_IN_FLIGHT), one statement where the facts' read and the
// decision take two. Whatever it finds otherwise (another cycle, a round no longer flying, a
// session that may no longer play) is left to the read of the facts, which answers it.
const KEPT_FLIGHTS = 1024;
type KnownFlight = FlightCycle & { flightStartedAt: Date };
const knownFlights = new Map<string, KnownFlight>();
const engineOf = (engine: EngineKey) => `${engine.operatorId}:${engine.gameCode}:${engine.currency}`;

function keepFlight(engine: EngineKey, flight: KnownFlight): void {
  const key = engineOf(engine);
  if (!knownFlights.has(key) && knownFlights.size >= KEPT_FLIGHTS) knownFlights.delete(knownFlights.keys().next().value!);
  knownFlights.set(key, flight);
}

// CASH_OUT for the session's round in a known flight, with the session's standing (D4) in the
// same statement: one that may not play decides nothing here
const DECIDE_IN_FLIGHT = statement(
  'cash_out_decide_known',
  `UPDATE rounds r SET state = 'RESULT', result_at = $6, cash_out_cents = $4, cash_out_ms = $5
   FROM sessions s, bets b
   WHERE r.session_id = $1 AND r.cycle_id = $2 AND r.cycle_created_at = $3 AND r.state = 'ROLLING' AND r.crash_cents IS NOT NULL
     AND $5 < r.ends_at_ms
     AND s.id = r.session_id AND s.state = 'ACTIVE' AND s.expires_at > $6
     AND b.id = r.bet_id AND b.cycle_created_at = r.cycle_created_at
   RETURNING r.id, r.session_id, r.nonce, r.bet_id, r.crash_cents, r.cash_out_cents, b.amount_micro, b.is_free`,
);

// a cash-out's win: its result to the player at once, its settlement after, the ack's terms
function won(svc: ServiceContext, cycle: FlightCycle, config: CrashConfig, decided: ResolvedRow, stake: Stake): CashOutAnswer {
  tellResult(svc, cycle, config, decided, stake);
  settleInBackground(svc, cycle, decided.id);
  const cents = decided.cash_out_cents!;
  return { ok: true, cashOutMultiplier: centsText(cents), payoutMicro: flightPayout(cycle, config, stake, cents).toString() };
}

// A cash_out of the session's bet, stamped `arrivedAt` by the node that received it (D40:
// t = arrival - flightStartedAt). The decision is committed before this answers; the round's
// result goes to its player at once and its settlement (the win job) follows. `engine`: the
// session's, when the caller knows it (the player channel does), so that a flight this process
// knows is decided in one statement.
export async function cashOut(
  svc: ServiceContext,
  sessionId: string,
  arrivedAt: Date,
  engine?: EngineKey,
): Promise<CashOutAnswer> {
  const known = engine && knownFlights.get(engineOf(engine));
  if (known) {
    const t = Math.max(0, arrivedAt.getTime() - known.flightStartedAt.getTime());
    const [decided] = await svc.sql.query<ResolvedRow & Stake>(DECIDE_IN_FLIGHT, [
      sessionId,
      known.id,
      known.createdAt,
      curveCents(Math.min(t, CURVE_MAX_MS)),
      t,
      svc.now(),
    ]);
    if (decided) return won(svc, known, await flightConfig(svc, known.id), decided, decided);
  }
  const [facts] = await svc.sql.query<{
    session_state: string;
    expires_at: Date;
    id: string | null;
    state: string | null;
    nonce: number;
    bet_id: string;
    crash_cents: bigint | null;
    ends_at_ms: number | null;
    cash_out_cents: bigint | null;
    cycle_created_at: Date;
    cycle_id: string;
    phase: string;
    flight_started_at: Date | null;
    game_code: string;
    currency: string;
    payout_rounding: PayoutRounding;
    amount_micro: bigint;
    is_free: boolean;
    auto_cash_out_cents: bigint | null;
  }>(CASH_OUT_FACTS, [sessionId]);
  const refusal = standingRefusal(svc, facts && { state: facts.session_state, expires_at: facts.expires_at });
  if (refusal) return { ok: false, reason: refusal };
  if (!facts || facts.id === null) return { ok: false, reason: 'no_active_bet' };
  if (facts.state === 'BETTING_OPEN' || facts.phase !== 'ROLLING' || facts.flight_started_at === null || facts.crash_cents === null) {
    return finished(facts.state, facts.cash_out_cents) ?? { ok: false, reason: 'not_flying' };
  }
  const config = await flightConfig(svc, facts.cycle_id);
  const cycle: KnownFlight = {
    id: facts.cycle_id,
    gameCode: facts.game_code,
    currency: facts.currency,
    payoutRounding: facts.payout_rounding,
    createdAt: facts.cycle_created_at,
    flightStartedAt: facts.flight_started_at,
  };
  if (engine) keepFlight(engine, cycle);
  // a cash-out stamped before the flight started (clocks apart) is judged at its start
  const t = Math.max(0, arrivedAt.getTime() - facts.flight_started_at.getTime());
  if (facts.ends_at_ms !== null && t >= facts.ends_at_ms) {
    const [told] = await svc.sql.query<{ crash_cents: bigint }>(TELL_END, [facts.id, facts.cycle_created_at, t]);
    if (told) {
      const automatic = automaticCashOutCents(facts.amount_micro, { autoCashOutCents: facts.auto_cash_out_cents }, config);
      return { ok: false, reason: automatic <= told.crash_cents ? 'already_cashed_out' : 'too_late' };
    }
  } else {
    const [decided] = await svc.sql.query<ResolvedRow>(CASH_OUT, [facts.id, facts.cycle_created_at, curveCents(t), t, svc.now()]);
    if (decided) return won(svc, cycle, config, decided, facts);
  }
  // the round moved meanwhile: a cash-out of another socket, its end recorded, or voided
  const [after] = await svc.sql.query<{ state: string; cash_out_cents: bigint | null }>(ROUND_AFTER, [facts.id, facts.cycle_created_at]);
  return finished(after?.state ?? null, after?.cash_out_cents ?? null) ?? { ok: false, reason: 'not_flying' };
}

// the win job of a round a cash-out moved to RESULT: a settlement that fails here is finished
// by the flight's next tick, or by crash recovery (D40)
function settleInBackground(svc: ServiceContext, cycle: FlightCycle, roundId: string): void {
  void settleRounds(svc, cycle, undefined, roundId).catch((err: unknown) => svc.logger.warn({ err: (err as Error).message, roundId }, 'cash-out settlement deferred'));
}

// the refusal for a round that is no longer flying: cashed out already, or lost
function finished(state: string | null, cashOutCents: bigint | null): CashOutAck | undefined {
  if (state === 'RESULT' || state === 'SETTLED') return { ok: false, reason: cashOutCents !== null ? 'already_cashed_out' : 'too_late' };
  if (state === 'VOIDED') return { ok: false, reason: 'no_active_bet' };
  return undefined;
}
