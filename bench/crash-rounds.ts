import pg from 'pg';

// A crash run's rounds as the service decided them (D40), read from Postgres after the run: the
// flight's start, the ms of the flight at which each round ends by itself (its crash, or its
// auto cash-out), and for a cash-out the ms it was stamped at on arrival and the multiplier
// granted there.

export type CrashRoundRow = {
  roundId: string;
  cycleId: string;
  flightStartedAt: number;
  endsAtMs: number;
  crashCents: number;
  cashOutMs: number | null;
  cashOutCents: number | null;
};

// since: the run's start (bet-path.ts says why)
export async function readCrashRounds(databaseUrl: string, since: Date): Promise<CrashRoundRow[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{
      id: string;
      cycle_id: string;
      flight_started_at: Date;
      ends_at_ms: number;
      crash_cents: string;
      cash_out_ms: number | null;
      cash_out_cents: string | null;
    }>(
      `SELECT r.id, r.cycle_id, c.flight_started_at, r.ends_at_ms, r.crash_cents, r.cash_out_ms, r.cash_out_cents
       FROM rounds r JOIN cycles c ON c.id = r.cycle_id AND c.created_at = r.cycle_created_at
       WHERE r.cycle_created_at >= $1 AND r.crash_cents IS NOT NULL AND c.flight_started_at IS NOT NULL`,
      [since],
    );
    return rows.map((row) => ({
      roundId: row.id,
      cycleId: row.cycle_id,
      flightStartedAt: row.flight_started_at.getTime(),
      endsAtMs: row.ends_at_ms,
      crashCents: Number(row.crash_cents),
      cashOutMs: row.cash_out_ms,
      cashOutCents: row.cash_out_cents === null ? null : Number(row.cash_out_cents),
    }));
  } finally {
    await client.end();
  }
}
