-- D39, D41: instant rounds (the multi-event game) and the progressive jackpot.

-- An instant play is a cycle of its own: one round, no clock. Its cycle keeps the snapshot of
-- the configuration the play is priced under (contract 8.6) and is the month of its bet and
-- round (D36), as every cycle is; it has no number in its engine's sequence (the clock's
-- cycles do) and goes ROLLING (its debit in flight or its outcome being derived), RESULT,
-- FINISHED without a scheduler; its id is its bet's. `instant` keeps such cycles apart from the clock's: recovery
-- on election interrupts the clock's cycles, never these (their own sweep resolves them).
ALTER TABLE "cycles" ALTER COLUMN "number" DROP NOT NULL;
ALTER TABLE "cycles" ADD COLUMN "instant" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "cycles" ADD CONSTRAINT "cycles_number_unless_instant" CHECK ("instant" OR "number" IS NOT NULL);
-- the sweep's read: the instant cycles not yet finished, oldest first
CREATE INDEX "cycles_instant_open_idx" ON "cycles"("created_at") WHERE "instant" AND "phase" <> 'FINISHED';

-- D41: a play may buy the feature; its amount_micro is then what it debits, featureBuyCost
-- times the stake
ALTER TABLE "bets" ADD COLUMN "feature_buy" BOOLEAN NOT NULL DEFAULT false;

-- D41: a multi-event round's outcome (contract 2.11 MULTI: baseGame, events, ...) as its
-- game's module writes it, amounts as decimal strings (D18); null for the other games, whose
-- outcomes have columns of their own
ALTER TABLE "rounds" ADD COLUMN "outcome" JSONB;

-- D41: one round at a time per session, and minRoundMs between two plays: the session's last
-- play (its bet and that bet's month) and when it was placed, on the session's row, which a
-- play locks
ALTER TABLE "sessions" ADD COLUMN "last_play_at" TIMESTAMPTZ(3);
ALTER TABLE "sessions" ADD COLUMN "last_play_bet_id" UUID;
ALTER TABLE "sessions" ADD COLUMN "last_play_cycle_created_at" TIMESTAMPTZ(3);

-- D41: the progressive jackpot, one pool per (operator, currency). Conservation is a
-- constraint of the row: everything put in (seeds and contributions) less everything paid is
-- the pool, at every commit; a play's contribution and a hit's payout change the row under
-- its lock, so two hits at the same moment are one after the other.
CREATE TABLE "jackpot_pools" (
    "operator_id" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "pool_micro" BIGINT NOT NULL,
    "seed_micro" BIGINT NOT NULL,
    "seeded_micro" BIGINT NOT NULL,
    "contributed_micro" BIGINT NOT NULL DEFAULT 0,
    "paid_micro" BIGINT NOT NULL DEFAULT 0,
    "hits" INTEGER NOT NULL DEFAULT 0,
    "last_hit_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "jackpot_pools_pkey" PRIMARY KEY ("operator_id", "currency"),
    CONSTRAINT "jackpot_pools_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "jackpot_pools_conserved" CHECK ("pool_micro" = "seeded_micro" + "contributed_micro" - "paid_micro"),
    CONSTRAINT "jackpot_pools_amounts" CHECK ("pool_micro" >= 0 AND "seed_micro" >= 0 AND "contributed_micro" >= 0 AND "paid_micro" >= 0)
);
