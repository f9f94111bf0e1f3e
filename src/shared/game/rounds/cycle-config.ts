import type { ServiceContext } from '../context.js';
import { cycleConfig, type AnyGameConfig } from '../operators/game-config.js';

// A cycle's configuration, as its game's module reads its snapshot (contract 8.6). A snapshot
// never changes, so each process keeps the last few it read or wrote: a flight asks for it at
// every cash-out and tick (D40), and a rolled cycle's rounds are derived and priced with it
// (settle.ts, D39).
const KEPT = 1024;
const kept = new Map<string, AnyGameConfig>();

export async function cycleConfigOf(svc: Pick<ServiceContext, 'db'>, cycleId: string): Promise<AnyGameConfig> {
  const known = kept.get(cycleId);
  if (known) return known;
  const config = cycleConfig(await svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } }));
  keepCycleConfig(cycleId, config);
  return config;
}

// The configuration a new cycle's snapshot was written from (clock.ts; game-config.ts
// configSnapshot), kept by the process that wrote it. The next cycle of a clock that goes on
// is started by the tick that finished the last (clock.ts finish), so the process running the
// engine's ticks rolls and settles it without reading the snapshot back (P12); any other
// process reads it once.
export function keepCycleConfig(cycleId: string, config: AnyGameConfig): void {
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value!);
  kept.set(cycleId, config);
}
