import type { ServiceContext } from '../context.js';
import { cycleConfig, type AnyGameConfig } from '../operators/game-config.js';

// A cycle's configuration, as its game's module reads its snapshot (contract 8.6). A snapshot
// never changes, so each process keeps the last few it read: a flight asks for it at every
// cash-out and tick (D40).
const KEPT = 1024;
const kept = new Map<string, AnyGameConfig>();

export async function cycleConfigOf(svc: Pick<ServiceContext, 'db'>, cycleId: string): Promise<AnyGameConfig> {
  const known = kept.get(cycleId);
  if (known) return known;
  const config = cycleConfig(await svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } }));
  if (kept.size >= KEPT) kept.delete(kept.keys().next().value!);
  kept.set(cycleId, config);
  return config;
}
