-- D36: a wallet job carries its bet's month (the bet's partition key, cycle_created_at), so
-- that completing the job updates the bet and its held stake in that month's partition alone
-- instead of probing every month's index. Filled for the jobs already written.
ALTER TABLE "wallet_jobs" ADD COLUMN "bet_cycle_created_at" TIMESTAMPTZ(3);

UPDATE "wallet_jobs" j SET "bet_cycle_created_at" = b."cycle_created_at"
FROM "bets" b WHERE b."id" = j."bet_id";
