import type { ServiceContext } from '../context.js';
import type { EngineKey } from '../../domain/engine-key.js';

// D41: what players see of the jackpot's pools. A pool per (operator, currency) is kept by the
// plays (resolve.ts) and told to the players of its game in `jackpot` messages: at once after a
// hit, and otherwise at most once a JACKPOT_TELL_MS per pool and process while plays feed it
// (a message per play to every player would cost more than the plays).

export const JACKPOT_TELL_MS = 1000;

const told = new Map<string, number>();

export function tellJackpot(
  svc: Pick<ServiceContext, 'emitter'>,
  engine: EngineKey,
  poolMicro: bigint,
  hit?: { roundId: string; payoutMicro: bigint },
): void {
  const key = `${engine.operatorId}\u0000${engine.gameCode}\u0000${engine.currency}`;
  const now = Date.now();
  if (!hit && now - (told.get(key) ?? 0) < JACKPOT_TELL_MS) return;
  told.set(key, now);
  if (told.size > 10_000) told.delete(told.keys().next().value!);
  svc.emitter.toEngine(engine, 'jackpot', {
    currency: engine.currency,
    poolMicro: poolMicro.toString(),
    ...(hit ? { hit: { roundId: hit.roundId, payoutMicro: hit.payoutMicro.toString() } } : {}),
  });
}
