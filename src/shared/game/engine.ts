import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import type { Cycle, CyclePhase } from '../db/client.js';
import { loadGameConfig } from '../operators/game-config.js';
import type { EngineJob } from '../queues.js';
import { countPresent } from '../realtime/presence.js';
import { engineKeyOf, type EngineKey } from './engine-key.js';
import { rollRounds } from './outcome.js';
import { settleRounds } from './settlement.js';

// The engine clock (D1, contract 3.1): PENDING, BETTING_OPEN, ROLLING, RESULT, COOLDOWN,
// then the next cycle while a player is connected or a round is unsettled. Every phase
// change is an UPDATE fenced on the expected phase, so a duplicated, late or stalled tick,
// or a deposed leader, cannot move a cycle twice; only the transaction that moved it goes
// on to broadcast and schedule the next tick.

export type RoundStatePayload = { cycleId: string; phase: CyclePhase | 'COOLDOWN'; phaseEndsAt: string | null };

export const roundState = (cycle: Pick<Cycle, 'id' | 'phase' | 'phaseEndsAt'>): RoundStatePayload => ({
  cycleId: cycle.id,
  phase: cycle.phase,
  phaseEndsAt: cycle.phaseEndsAt?.toISOString() ?? null,
});

export async function currentCycle(svc: Pick<ServiceContext, 'db'>, of: EngineKey): Promise<Cycle | null> {
  const engine = await svc.db.engine.findUnique({
    where: { operatorId_gameCode_currency: engineKeyOf(of) },
    select: { currentCycleId: true },
  });
  if (!engine?.currentCycleId) return null;
  return svc.db.cycle.findUnique({ where: { id: engine.currentCycleId } });
}

// Starts the clock unless it runs. Safe from any process: the engine row lock makes one
// caller create the cycle.
export async function ensureEngine(svc: ServiceContext, of: EngineKey): Promise<void> {
  const key = engineKeyOf(of);
  // ON CONFLICT, not Prisma's upsert (a read then an insert): players who connect at the
  // same moment to an engine that does not exist yet must not fail each other
  await svc.db.$executeRaw`
    INSERT INTO engines (operator_id, game_code, currency, running, updated_at)
    VALUES (${key.operatorId}, ${key.gameCode}, ${key.currency}, false, now())
    ON CONFLICT DO NOTHING`;
  const cycle = await svc.db.$transaction(async (tx) => {
    const [engine] = await tx.$queryRaw<{ running: boolean }[]>`
      SELECT running FROM engines
      WHERE operator_id = ${key.operatorId} AND game_code = ${key.gameCode} AND currency = ${key.currency}
      FOR UPDATE`;
    if (!engine || engine.running) return null;
    // contract 8.6: config and weights are snapshotted when the cycle is created (PENDING)
    const config = await loadGameConfig(tx, key.operatorId, key.gameCode, key.currency);
    const last = await tx.cycle.aggregate({ where: key, _max: { number: true } });
    const created = await tx.cycle.create({
      data: { id: randomUUID(), ...key, number: (last._max.number ?? 0) + 1, phase: 'PENDING', ...config },
    });
    await tx.engine.update({
      where: { operatorId_gameCode_currency: key },
      data: { running: true, currentCycleId: created.id },
    });
    return created;
  });
  if (cycle) {
    broadcast(svc, cycle);
    await schedule(svc, cycle.id, 'PENDING', 0);
  }
}

// One tick: move the cycle out of `from`. Returns without effect when another tick (or
// another process) already did.
export async function advanceCycle(svc: ServiceContext, job: EngineJob): Promise<void> {
  switch (job.from) {
    case 'PENDING':
      return openBetting(svc, job.cycleId);
    case 'BETTING_OPEN':
      return closeBetting(svc, job.cycleId);
    case 'ROLLING':
      return roll(svc, job.cycleId);
    case 'RESULT':
      return settleAndCool(svc, job.cycleId);
    case 'COOLDOWN':
      return finish(svc, job.cycleId);
  }
}

async function move(
  svc: ServiceContext,
  cycleId: string,
  from: CyclePhase,
  to: CyclePhase,
  durationMs: (cycle: Cycle) => number | null,
): Promise<Cycle | null> {
  const cycle = await svc.db.cycle.findUnique({ where: { id: cycleId } });
  if (!cycle || cycle.phase !== from) return null;
  const duration = durationMs(cycle);
  const phaseEndsAt = duration === null ? null : new Date(svc.now().getTime() + duration);
  const moved = await svc.db.$transaction(async (tx) => {
    const { count } = await tx.cycle.updateMany({
      where: { id: cycleId, phase: from },
      data: { phase: to, phaseEndsAt, ...(to === 'FINISHED' ? { finishedAt: svc.now() } : {}) },
    });
    if (count === 0) return false;
    // the cycle's rounds follow it (D1)
    if (to === 'ROLLING') {
      await tx.round.updateMany({ where: { cycleId, state: 'BETTING_OPEN' }, data: { state: 'ROLLING' } });
    }
    return true;
  });
  if (!moved) return null;
  const updated = { ...cycle, phase: to, phaseEndsAt };
  broadcast(svc, updated);
  return updated;
}

async function openBetting(svc: ServiceContext, cycleId: string): Promise<void> {
  const cycle = await move(svc, cycleId, 'PENDING', 'BETTING_OPEN', (c) => c.bettingWindowMs);
  if (cycle) await schedule(svc, cycleId, 'BETTING_OPEN', cycle.bettingWindowMs);
}

async function closeBetting(svc: ServiceContext, cycleId: string): Promise<void> {
  const cycle = await move(svc, cycleId, 'BETTING_OPEN', 'ROLLING', (c) => c.rollingWindowMs);
  if (cycle) await schedule(svc, cycleId, 'ROLLING', cycle.rollingWindowMs);
}

// contract 3.1: ROLLING -> RESULT when the outcome is derived; the outcome is persisted
// before anything is announced.
async function roll(svc: ServiceContext, cycleId: string): Promise<void> {
  if (await move(svc, cycleId, 'ROLLING', 'RESULT', () => null)) await settleAndCool(svc, cycleId);
}

// RESULT: derive and settle every round still waiting (both steps skip what is done, so a
// tick resumed after a crash finishes the job), then cool down.
async function settleAndCool(svc: ServiceContext, cycleId: string): Promise<void> {
  const cycle = await svc.db.cycle.findUnique({ where: { id: cycleId } });
  if (!cycle || cycle.phase !== 'RESULT') return;
  await rollRounds(svc, cycle);
  await settleRounds(svc, cycle);
  const cooling = await move(svc, cycleId, 'RESULT', 'COOLDOWN', (c) => c.cooldownMs);
  if (cooling) await schedule(svc, cycleId, 'COOLDOWN', cooling.cooldownMs);
}

// D1: after the cooldown the clock goes on while the engine has a connected player or an
// unsettled round; otherwise it stops until the next connection.
async function finish(svc: ServiceContext, cycleId: string): Promise<void> {
  const cycle = await move(svc, cycleId, 'COOLDOWN', 'FINISHED', () => null);
  if (cycle) await stopClock(svc, cycle);
}

// The engine whose current cycle this was stops, and starts again at once with a new
// cycle if it still has a reason to run (a finished or an interrupted cycle alike).
export async function stopClock(svc: ServiceContext, cycle: Pick<Cycle, 'id' | 'operatorId' | 'gameCode' | 'currency'>): Promise<void> {
  const cycleId = cycle.id;
  const key = engineKeyOf(cycle);
  const stopped = await svc.db.engine.updateMany({
    where: { ...key, currentCycleId: cycleId },
    data: { running: false, currentCycleId: null },
  });
  if (stopped.count === 0) return;
  // a player who connects while the clock stops either sees it stopped and starts it, or is
  // seen here (presence is written before a connection asks for the clock)
  if ((await countPresent(svc.redis, key)) > 0 || (await hasUnsettledRounds(svc, key))) await ensureEngine(svc, key);
}

const hasUnsettledRounds = async (svc: ServiceContext, key: EngineKey) =>
  (await svc.db.round.count({ where: { ...key, settled: false } })) > 0;

function broadcast(svc: ServiceContext, cycle: Pick<Cycle, 'id' | 'phase' | 'phaseEndsAt' | 'operatorId' | 'gameCode' | 'currency'>) {
  if (cycle.phase === 'FINISHED') return;
  // contract 3.1: each phase change emits round_state, once per engine room (D1)
  svc.emitter.toEngine(engineKeyOf(cycle), 'round_state', roundState(cycle));
}

async function schedule(svc: ServiceContext, cycleId: string, from: EngineJob['from'], delayMs: number): Promise<void> {
  await svc.queues.engine.add('tick', { cycleId, from }, { delay: delayMs, jobId: `${cycleId}-${from}` });
}

// Re-derives every running clock from Postgres (a new leader, or Redis that lost its
// queues): each unfinished cycle gets its next tick at its phase's end.
export async function resumeClocks(svc: ServiceContext): Promise<number> {
  const cycles = await svc.db.cycle.findMany({ where: { phase: { not: 'FINISHED' } } });
  const now = svc.now().getTime();
  for (const cycle of cycles) {
    const delay = cycle.phaseEndsAt ? Math.max(0, cycle.phaseEndsAt.getTime() - now) : 0;
    await schedule(svc, cycle.id, cycle.phase as EngineJob['from'], delay);
  }
  return cycles.length;
}
