import pg from 'pg';

// The service's own timestamps of each accepted bet, read from Postgres after the run
// rather than added as instrumentation: the bet row (written by the realtime node just
// before it queues the bet job), the audit row of the /wallet/bet call (written before the
// HTTP request, completed after the answer, contract 2.13) and the acceptance.

export type BetPathRow = {
  betId: string;
  requestUuid: string;
  betRowAt: number;
  auditRowAt: number;
  auditUpdatedAt: number;
  acceptedAt: number;
};

// since: the run's start; with --history the database also holds millions of earlier bets,
// which are not this run's (every cycle of the run began after it, so the months before are
// pruned: D36)
export async function readBetPaths(databaseUrl: string, since: Date): Promise<BetPathRow[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{
      bet_id: string;
      request_uuid: string;
      created_at: Date;
      audit_at: Date;
      responded_at: Date;
      accepted_at: Date;
    }>(
      `SELECT b.id AS bet_id, w.request_uuid, b.created_at, w.created_at AS audit_at, w.responded_at, b.accepted_at
       FROM bets b
       JOIN wallet_calls w ON w.transaction_uuid = b.bet_transaction_uuid AND w.endpoint = 'bet' AND w.attempt = 1
       WHERE b.cycle_created_at >= $1 AND w.created_at >= $1 AND b.accepted_at IS NOT NULL AND w.responded_at IS NOT NULL`,
      [since],
    );
    return rows.map((row) => ({
      betId: row.bet_id,
      requestUuid: row.request_uuid,
      betRowAt: row.created_at.getTime(),
      auditRowAt: row.audit_at.getTime(),
      auditUpdatedAt: row.responded_at.getTime(),
      acceptedAt: row.accepted_at.getTime(),
    }));
  } finally {
    await client.end();
  }
}
