-- D36: the money tables that grow with play are partitioned by month (UTC), so that old
-- months leave as whole tables (`rgs retention apply`) instead of row by row. A partition is
-- named <table>_YYYY_MM; `rgs partitions ensure` (the scheduler leader, daily) makes the
-- coming months'. Idempotency entries stay one table: they live 24 hours (D17) and their key
-- is the operator's requestUuid, which carries no month.
--
-- Postgres enforces a unique rule on a partitioned table only if it includes the partition
-- key. How each rule the money path relies on is kept (docs/decisions/D36-scale-out.md,
-- "Partitions and uniqueness"):
-- * bets, rounds and pending_round_bets are partitioned by their cycle's start
--   (cycle_created_at, copied from cycles.created_at when the bet is placed): every row of one
--   bet lives in one month, whenever it is settled, and the rules keyed by the cycle
--   (8.2 rule 4: one live bet per session per cycle; one round per session per cycle) carry
--   the partition key because the cycle determines it.
-- * rounds and pending_round_bets reference their bet by (bet_id, cycle_created_at).
-- * wallet_calls, wallet_jobs and webhook_events are partitioned by created_at;
--   webhook_attempts by its event's created_at, so an event and its attempts share a month.
-- * webhook dedupe keys (an event reported once ever) move to webhook_dedupe_keys, a small
--   unpartitioned table: the rule spans months.

-- A month's partition of one of these tables, made if missing: [month, next month) in UTC,
-- with the fill factor the table had (room for HOT updates; a partitioned table keeps
-- none itself). Used by this migration and by `rgs partitions ensure`.
CREATE FUNCTION rgs_ensure_month_partition(parent text, month date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  name text := parent || '_' || to_char(month, 'YYYY_MM');
  fill int := CASE parent WHEN 'rounds' THEN 70 WHEN 'bets' THEN 80 WHEN 'pending_round_bets' THEN 80
                          WHEN 'wallet_calls' THEN 80 WHEN 'wallet_jobs' THEN 80 ELSE 100 END;
BEGIN
  IF date_trunc('month', month) <> month THEN
    RAISE EXCEPTION 'rgs_ensure_month_partition: % is not the first day of a month', month;
  END IF;
  IF to_regclass(quote_ident(name)) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format(
    'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L) WITH (fillfactor = %s)',
    name, parent, month::timestamp AT TIME ZONE 'UTC', (month + interval '1 month')::timestamp AT TIME ZONE 'UTC', fill
  );
  RETURN true;
END $$;

ALTER TABLE "bets" RENAME TO "bets_unpartitioned";
ALTER TABLE "rounds" RENAME TO "rounds_unpartitioned";
ALTER TABLE "pending_round_bets" RENAME TO "pending_round_bets_unpartitioned";
ALTER TABLE "wallet_calls" RENAME TO "wallet_calls_unpartitioned";
ALTER TABLE "wallet_jobs" RENAME TO "wallet_jobs_unpartitioned";
ALTER TABLE "webhook_events" RENAME TO "webhook_events_unpartitioned";
ALTER TABLE "webhook_attempts" RENAME TO "webhook_attempts_unpartitioned";

-- the same columns, defaults and checks, in the same order; the partition key column last
CREATE TABLE "bets" (LIKE "bets_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  "cycle_created_at" TIMESTAMPTZ(3) NOT NULL) PARTITION BY RANGE ("cycle_created_at");
CREATE TABLE "rounds" (LIKE "rounds_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  "cycle_created_at" TIMESTAMPTZ(3) NOT NULL) PARTITION BY RANGE ("cycle_created_at");
CREATE TABLE "pending_round_bets" (LIKE "pending_round_bets_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  "cycle_created_at" TIMESTAMPTZ(3) NOT NULL) PARTITION BY RANGE ("cycle_created_at");
CREATE TABLE "wallet_calls" (LIKE "wallet_calls_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE ("created_at");
CREATE TABLE "wallet_jobs" (LIKE "wallet_jobs_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE ("created_at");
CREATE TABLE "webhook_events" (LIKE "webhook_events_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE ("created_at");
CREATE TABLE "webhook_attempts" (LIKE "webhook_attempts_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  "event_created_at" TIMESTAMPTZ(3) NOT NULL) PARTITION BY RANGE ("event_created_at");

-- every month that holds a row, through three months ahead of now
DO $$
DECLARE
  first date := date_trunc('month', LEAST(
    now(),
    (SELECT min(COALESCE(c.created_at, b.created_at)) FROM "bets_unpartitioned" b LEFT JOIN "cycles" c ON c.id = b.cycle_id),
    (SELECT min(created_at) FROM "wallet_calls_unpartitioned"),
    (SELECT min(created_at) FROM "wallet_jobs_unpartitioned"),
    (SELECT min(created_at) FROM "webhook_events_unpartitioned")
  ) AT TIME ZONE 'UTC')::date;
  last date := (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '3 months')::date;
  month date := first;
  parent text;
BEGIN
  WHILE month <= last LOOP
    FOREACH parent IN ARRAY ARRAY['bets', 'rounds', 'pending_round_bets', 'wallet_calls', 'wallet_jobs', 'webhook_events', 'webhook_attempts'] LOOP
      PERFORM rgs_ensure_month_partition(parent, month);
    END LOOP;
    month := (month + interval '1 month')::date;
  END LOOP;
END $$;

-- the rows, each of a bet in its cycle's month (a bet whose cycle is gone, which no code path
-- leaves, keeps its own time)
INSERT INTO "bets" SELECT b.*, COALESCE(c.created_at, b.created_at) FROM "bets_unpartitioned" b LEFT JOIN "cycles" c ON c.id = b.cycle_id;
INSERT INTO "rounds" SELECT r.*, b.cycle_created_at FROM "rounds_unpartitioned" r JOIN "bets" b ON b.id = r.bet_id;
INSERT INTO "pending_round_bets" SELECT p.*, b.cycle_created_at FROM "pending_round_bets_unpartitioned" p JOIN "bets" b ON b.id = p.bet_id;
INSERT INTO "wallet_calls" SELECT * FROM "wallet_calls_unpartitioned";
INSERT INTO "wallet_jobs" SELECT * FROM "wallet_jobs_unpartitioned";
INSERT INTO "webhook_events" SELECT * FROM "webhook_events_unpartitioned";
INSERT INTO "webhook_attempts" SELECT a.*, e.created_at FROM "webhook_attempts_unpartitioned" a JOIN "webhook_events" e ON e.id = a.event_id;

-- D31: an event with a dedupe key is written once ever; the key, which carries no month,
-- is claimed here in the statement that writes the event
CREATE TABLE "webhook_dedupe_keys" (
  "dedupe_key" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "webhook_dedupe_keys_pkey" PRIMARY KEY ("dedupe_key")
);
INSERT INTO "webhook_dedupe_keys" (dedupe_key, created_at)
  SELECT dedupe_key, min(created_at) FROM "webhook_events" WHERE dedupe_key IS NOT NULL GROUP BY dedupe_key;

DROP TABLE "webhook_attempts_unpartitioned";
DROP TABLE "pending_round_bets_unpartitioned";
DROP TABLE "rounds_unpartitioned";
DROP TABLE "bets_unpartitioned";
DROP TABLE "wallet_calls_unpartitioned";
DROP TABLE "wallet_jobs_unpartitioned";
DROP TABLE "webhook_events_unpartitioned";

-- bets: every unique rule carries cycle_created_at. The cycle determines it (the foreign key
-- below), so the rules keyed by the cycle hold across months; ids and transaction uuids are minted by the
-- statement that writes the row (D36 "Partitions and uniqueness").
ALTER TABLE "bets" ADD CONSTRAINT "bets_pkey" PRIMARY KEY ("id", "cycle_created_at");
CREATE UNIQUE INDEX "bets_round_id_key" ON "bets" ("round_id", "cycle_created_at");
CREATE UNIQUE INDEX "bets_bet_transaction_uuid_key" ON "bets" ("bet_transaction_uuid", "cycle_created_at");
CREATE UNIQUE INDEX "bets_win_transaction_uuid_key" ON "bets" ("win_transaction_uuid", "cycle_created_at") WHERE "win_transaction_uuid" IS NOT NULL;
CREATE UNIQUE INDEX "bets_rollback_transaction_uuid_key" ON "bets" ("rollback_transaction_uuid", "cycle_created_at") WHERE "rollback_transaction_uuid" IS NOT NULL;
-- 8.2 rule 4: one live bet per session per cycle; a rejected attempt does not count
CREATE UNIQUE INDEX "bets_one_live_per_session_cycle" ON "bets" ("session_id", "cycle_id", "cycle_created_at") WHERE "status" <> 'REJECTED';
CREATE INDEX "bets_operator_id_player_ref_currency_created_at_idx" ON "bets" ("operator_id", "player_ref", "currency", "created_at");
CREATE INDEX "bets_pending" ON "bets" ("created_at") WHERE "status" = 'PENDING';
ALTER TABLE "bets" ADD CONSTRAINT "bets_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
-- a bet's cycle_created_at is its cycle's, as the database sees it: so 8.2 rule 4 holds across
-- months (two bets of one session and cycle always meet in one partition's index)
CREATE UNIQUE INDEX "cycles_id_created_at_key" ON "cycles" ("id", "created_at");
ALTER TABLE "bets" ADD CONSTRAINT "bets_cycle_id_cycle_created_at_fkey" FOREIGN KEY ("cycle_id", "cycle_created_at") REFERENCES "cycles"("id", "created_at") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "rounds" ADD CONSTRAINT "rounds_pkey" PRIMARY KEY ("id", "cycle_created_at");
CREATE UNIQUE INDEX "rounds_bet_id_key" ON "rounds" ("bet_id", "cycle_created_at");
CREATE UNIQUE INDEX "rounds_session_id_cycle_id_key" ON "rounds" ("session_id", "cycle_id", "cycle_created_at");
-- a nonce is taken from the seed row (one row, locked by the acceptance), never twice
CREATE UNIQUE INDEX "rounds_seed_id_nonce_key" ON "rounds" ("seed_id", "nonce", "cycle_created_at");
CREATE INDEX "rounds_operator_id_settled_at_idx" ON "rounds" ("operator_id", "settled_at") WHERE "settled_at" IS NOT NULL;
CREATE INDEX "rounds_operator_id_voided_at_idx" ON "rounds" ("operator_id", "voided_at") WHERE "voided_at" IS NOT NULL;
CREATE INDEX "rounds_unsettled" ON "rounds" ("cycle_id") WHERE NOT "settled";
ALTER TABLE "rounds" ADD CONSTRAINT "rounds_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "rounds" ADD CONSTRAINT "rounds_cycle_id_fkey" FOREIGN KEY ("cycle_id") REFERENCES "cycles"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "rounds" ADD CONSTRAINT "rounds_seed_id_fkey" FOREIGN KEY ("seed_id") REFERENCES "seeds"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "rounds" ADD CONSTRAINT "rounds_bet_id_fkey" FOREIGN KEY ("bet_id", "cycle_created_at") REFERENCES "bets"("id", "cycle_created_at") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "pending_round_bets" ADD CONSTRAINT "pending_round_bets_pkey" PRIMARY KEY ("bet_id", "cycle_created_at");
CREATE INDEX "pending_round_bets_round_id_idx" ON "pending_round_bets" ("round_id");
ALTER TABLE "pending_round_bets" ADD CONSTRAINT "pending_round_bets_bet_id_fkey" FOREIGN KEY ("bet_id", "cycle_created_at") REFERENCES "bets"("id", "cycle_created_at") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "wallet_calls" ADD CONSTRAINT "wallet_calls_pkey" PRIMARY KEY ("id", "created_at");
CREATE UNIQUE INDEX "wallet_calls_request_uuid_attempt_key" ON "wallet_calls" ("request_uuid", "attempt", "created_at");
CREATE INDEX "wallet_calls_operator_id_created_at_idx" ON "wallet_calls" ("operator_id", "created_at");
CREATE INDEX "wallet_calls_transaction_uuid_idx" ON "wallet_calls" ("transaction_uuid");

ALTER TABLE "wallet_jobs" ADD CONSTRAINT "wallet_jobs_pkey" PRIMARY KEY ("id", "created_at");
CREATE UNIQUE INDEX "wallet_jobs_transaction_uuid_key" ON "wallet_jobs" ("transaction_uuid", "created_at");
CREATE INDEX "wallet_jobs_bet_id_idx" ON "wallet_jobs" ("bet_id");
CREATE INDEX "wallet_jobs_abandoned_at_idx" ON "wallet_jobs" ("abandoned_at") WHERE "abandoned_at" IS NOT NULL;
CREATE INDEX "wallet_jobs_open" ON "wallet_jobs" ("next_attempt_at") WHERE "completed_at" IS NULL AND "abandoned_at" IS NULL;

ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id", "created_at");
CREATE UNIQUE INDEX "webhook_events_dedupe_key_key" ON "webhook_events" ("dedupe_key", "created_at");
CREATE INDEX "webhook_events_due" ON "webhook_events" ("next_attempt_at") WHERE "status" = 'pending';
CREATE INDEX "webhook_events_operator_id_occurred_at_id_idx" ON "webhook_events" ("operator_id", "occurred_at" DESC, "id" DESC);

ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("event_id", "attempt", "event_created_at");
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_event_id_fkey" FOREIGN KEY ("event_id", "event_created_at") REFERENCES "webhook_events"("id", "created_at") ON DELETE CASCADE ON UPDATE CASCADE;
