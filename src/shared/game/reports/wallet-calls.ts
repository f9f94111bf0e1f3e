import type { Db } from '../../platform/db/client.js';
import type { WalletEndpoint } from '../../domain/wallet-status.js';
import { timestamptz } from './finished-rounds.js';
import { callAggregates } from '../../wallet/audit.js';

// GET /v1/reports/wallet-calls (D10): per wallet endpoint, the outbound calls whose audit row
// was written (wallet_calls.created_at) in [from, to):
// - ok: RS_OK or RS_ERROR_DUPLICATE_TRANSACTION (contract 7.1 success); failed: every other
//   call, including one with no response recorded.
// - p50LatencyMs, p99LatencyMs: percentile_disc over latency_ms, so always a latency that
//   was observed; null when no call has one.
// - openCircuitRejections: rows whose `error` is exactly 'circuit_open'. This is the
//   agreement with the circuit breaker (contract 3.4): a call it fails at once, without
//   sending it, is recorded as an audit row with that error text.
// - abandonedJobs: wallet jobs for the endpoint given up (abandoned_at) in the same range.

// every endpoint is listed, with zeros when it had no calls
const ENDPOINTS: readonly WalletEndpoint[] = ['balance', 'bet', 'win', 'rollback'];

export type WalletCallsRow = {
  endpoint: WalletEndpoint;
  calls: number;
  ok: number;
  failed: number;
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
  openCircuitRejections: number;
  abandonedJobs: number;
};

export async function walletCallsReport(db: Db, operatorId: string, range: { from: Date; to: Date }): Promise<WalletCallsRow[]> {
  const [calls, abandoned] = await Promise.all([
    callAggregates(db, operatorId, range),
    db.$queryRaw<{ endpoint: string; jobs: bigint }[]>`
      SELECT endpoint, count(*) AS jobs
      FROM wallet_jobs
      WHERE operator_id = ${operatorId} AND abandoned_at >= ${timestamptz(range.from)} AND abandoned_at < ${timestamptz(range.to)}
      GROUP BY endpoint`,
  ]);
  return ENDPOINTS.map((endpoint) => {
    const row = calls.find((c) => c.endpoint === endpoint);
    const total = Number(row?.calls ?? 0n);
    const ok = Number(row?.ok ?? 0n);
    return {
      endpoint,
      calls: total,
      ok,
      failed: total - ok,
      p50LatencyMs: row?.p50 ?? null,
      p99LatencyMs: row?.p99 ?? null,
      openCircuitRejections: Number(row?.openCircuit ?? 0n),
      abandonedJobs: Number(abandoned.find((a) => a.endpoint === endpoint)?.jobs ?? 0n),
    };
  });
}
