import type { ServiceContext } from '../context.js';
import { statement, type Queryable } from '../../platform/db/sql.js';
import type { EngineKey } from '../../domain/engine-key.js';

// D41: what players and operators see of the jackpot's pools. A pool per (operator, currency)
// is kept by the plays (resolve.ts); here it is read, and told to the players of its game in
// `jackpot` messages: at once after a hit, and otherwise at most once a JACKPOT_TELL_MS per pool
// and process while plays feed it (a message per play to every player would cost more than
// the plays).

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

export type JackpotPool = { currency: string; poolMicro: bigint; seedMicro: bigint; contributedMicro: bigint; paidMicro: bigint; hits: number; lastHitAt: Date | null };

const POOLS = statement(
  'jackpot_pools',
  `SELECT currency, pool_micro, seed_micro, contributed_micro, paid_micro, hits, last_hit_at FROM jackpot_pools
   WHERE operator_id = $1 AND ($2::text IS NULL OR currency = $2) ORDER BY currency`,
);

// an operator's pools (of one currency, or all)
export async function jackpotPools(sql: Queryable, operatorId: string, currency?: string): Promise<JackpotPool[]> {
  const rows = await sql.query<{
    currency: string;
    pool_micro: bigint;
    seed_micro: bigint;
    contributed_micro: bigint;
    paid_micro: bigint;
    hits: number;
    last_hit_at: Date | null;
  }>(POOLS, [operatorId, currency ?? null]);
  return rows.map((row) => ({
    currency: row.currency,
    poolMicro: row.pool_micro,
    seedMicro: row.seed_micro,
    contributedMicro: row.contributed_micro,
    paidMicro: row.paid_micro,
    hits: row.hits,
    lastHitAt: row.last_hit_at,
  }));
}
