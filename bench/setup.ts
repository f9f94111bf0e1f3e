import pg from 'pg';
import type { Db } from '../src/shared/platform/db/client.js';
import { setGameConfig } from '../src/shared/game/operators/game-config.js';
import { createOperator, updateOperator, type OnboardedOperator } from '../src/shared/game/operators/operators.js';
import { sealedCredential } from '../src/shared/wallet/credentials.js';
import type { WalletSimulator } from '../src/simulator/wallet-simulator.js';
import { COOLDOWN_MS, ROLLING_WINDOW_MS, type BenchGame } from './options.js';
import { DEFAULT_MIN_ROUND_MS } from './gems-play.js';

// What a run owns and removes again: a database of its own, a Redis key prefix of its own,
// and the operators it onboards there, all sharing one wallet simulator.

export type BenchOperator = { operatorId: string; key: { kid: string; secret: string } };

export const CURRENCY = 'EUR';

// the same server as DATABASE_URL, another database name
export function benchDatabaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

// A database in service has statistics: autovacuum analyzes a table once a tenth of it has
// changed, and each analysis makes every connection plan its statements afresh. A new one
// has none, and Postgres keeps the plans it made for the empty tables (a sequential scan of
// wallet_calls for every audit completion, its cost growing with the table) until the first
// autovacuum round, up to a minute in. Measured runs start from the state in service.
export async function analyzeDatabase(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

export async function onboardOperators(
  db: Db,
  masterKey: Buffer,
  wallet: WalletSimulator,
  count: number,
  bettingWindowMs: number,
  game: BenchGame = 'dice',
  // gems: the operators' minRoundMs (D41)
  minRoundMs = DEFAULT_MIN_ROUND_MS,
): Promise<BenchOperator[]> {
  const operators: BenchOperator[] = [];
  const seeded = new Set((await db.operator.findMany({ select: { id: true } })).map(({ id }) => id));
  for (let i = 0; i < count; i++) {
    const id = `bench-op-${i}`;
    const created = seeded.has(id)
      ? await adoptOperator(db, masterKey, id, wallet.url)
      : await createOperator(db, masterKey, id, { walletUrl: wallet.url, currencies: [CURRENCY] });
    wallet.addCredential(created.walletKeyId, created.walletSignatureSecret);
    if (game === 'dice') {
      await setGameConfig(db, created.operatorId, 'dice', CURRENCY, {
        bettingWindowMs,
        rollingWindowMs: ROLLING_WINDOW_MS,
        cooldownMs: COOLDOWN_MS,
      });
    } else if (game === 'gems') {
      // D41: Gem Vault is launchable for an operator that configured it; it has no clock, only
      // the least time between a session's plays
      await setGameConfig(db, created.operatorId, 'gems', CURRENCY, {}, { minRoundMs });
    } else {
      // D40: crash is launchable for an operator that configured it; its ROLLING is the
      // flight, as long as its rounds last, so it has no rolling window
      await setGameConfig(db, created.operatorId, 'crash', CURRENCY, {}, { bettingWindowMs, cooldownMs: COOLDOWN_MS });
    }
    operators.push({ operatorId: created.operatorId, key: { kid: created.apiKeyId, secret: created.apiSecret } });
  }
  return operators;
}

// An operator the history (history.ts) already holds, with its past but without credentials:
// it gets this run's wallet and a pair of credentials minted as createOperator mints them.
async function adoptOperator(db: Db, masterKey: Buffer, id: string, walletUrl: string): Promise<OnboardedOperator> {
  await updateOperator(db, id, { walletUrl, currencies: [CURRENCY] });
  const now = new Date();
  const api = sealedCredential(masterKey, 'API', now);
  const wallet = sealedCredential(masterKey, 'WALLET', now);
  await db.credential.createMany({ data: [api.data, wallet.data].map((data) => ({ ...data, operatorId: id })) });
  return { operatorId: id, apiKeyId: api.minted.kid, apiSecret: api.minted.secret, walletKeyId: wallet.minted.kid, walletSignatureSecret: wallet.minted.secret };
}
