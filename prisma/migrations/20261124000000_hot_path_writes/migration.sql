-- issue 6: every bet writes and rewrites rows in bets, rounds, pending_round_bets, seeds,
-- wallet_calls and wallet_jobs, and every new row version is entered in every index of its
-- table unless the update is HOT. Postgres spent more CPU per bet than the service did, most
-- of it in index maintenance, so:

-- indexes that only ever matter for some rows cover only those rows: a transaction id is
-- unique once set (contract 2.13), listings read settled or voided rounds by their time, the
-- abandoned wallet jobs are the few a human looks at
DROP INDEX "bets_win_transaction_uuid_key";
CREATE UNIQUE INDEX "bets_win_transaction_uuid_key" ON "bets" ("win_transaction_uuid") WHERE "win_transaction_uuid" IS NOT NULL;
DROP INDEX "bets_rollback_transaction_uuid_key";
CREATE UNIQUE INDEX "bets_rollback_transaction_uuid_key" ON "bets" ("rollback_transaction_uuid") WHERE "rollback_transaction_uuid" IS NOT NULL;
DROP INDEX "rounds_operator_id_settled_at_idx";
CREATE INDEX "rounds_operator_id_settled_at_idx" ON "rounds" ("operator_id", "settled_at") WHERE "settled_at" IS NOT NULL;
DROP INDEX "rounds_operator_id_voided_at_idx";
CREATE INDEX "rounds_operator_id_voided_at_idx" ON "rounds" ("operator_id", "voided_at") WHERE "voided_at" IS NOT NULL;
DROP INDEX "wallet_jobs_abandoned_at_idx";
CREATE INDEX "wallet_jobs_abandoned_at_idx" ON "wallet_jobs" ("abandoned_at") WHERE "abandoned_at" IS NOT NULL;

-- indexes that other (partial) indexes already serve: bets_pending finds the bets in flight,
-- rounds_unsettled the rounds a tick moves, wallet_jobs_open the jobs still to run. Without
-- rounds_cycle_id_state_idx a round's state is in no index, so its ROLLING and RESULT
-- updates can stay on their page (HOT) and touch no index at all.
DROP INDEX "bets_status_idx";
DROP INDEX "rounds_cycle_id_state_idx";
DROP INDEX "wallet_jobs_next_attempt_at_idx";

-- room on every page for the updates that follow an insert shortly after (HOT needs it)
ALTER TABLE "bets" SET (fillfactor = 80);
ALTER TABLE "rounds" SET (fillfactor = 70);
ALTER TABLE "pending_round_bets" SET (fillfactor = 80);
ALTER TABLE "seeds" SET (fillfactor = 70);
ALTER TABLE "sessions" SET (fillfactor = 80);
ALTER TABLE "wallet_calls" SET (fillfactor = 80);
ALTER TABLE "wallet_jobs" SET (fillfactor = 80);
ALTER TABLE "cycles" SET (fillfactor = 70);
ALTER TABLE "engines" SET (fillfactor = 50);
