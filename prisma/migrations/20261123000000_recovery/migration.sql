-- Crash recovery (contract 3.1) scans rounds with settled = false at every scheduler
-- election; unsettled rounds are few at any moment, so a partial index keeps that scan
-- small however many rounds the table holds.
CREATE INDEX "rounds_unsettled" ON "rounds" ("cycle_id") WHERE NOT "settled";

-- The recovery sweep looks for debits still in flight (PENDING) and wallet jobs neither
-- completed nor abandoned; both are few among many.
CREATE INDEX "bets_pending" ON "bets" ("created_at") WHERE "status" = 'PENDING';
CREATE INDEX "wallet_jobs_open" ON "wallet_jobs" ("next_attempt_at") WHERE "completed_at" IS NULL AND "abandoned_at" IS NULL;
