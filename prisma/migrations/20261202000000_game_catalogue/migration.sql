-- D39, D46: a game's configuration is its module's. The keys every shared-clock game has
-- (windows, stake bounds, commission) and dice's own keep their columns; D46 adds the stake
-- step and the payout rounding to every game; a game's keys without a column of their own
-- (crash's maxMultiplier and maxPayoutMicro) are held as written, in `params`.

CREATE TYPE "payout_rounding" AS ENUM ('exact', 'minor_unit');

-- NULL: the currency's minor unit, which a configuration written before D46 did not name
ALTER TABLE "game_configs" ADD COLUMN "stake_step_micro" BIGINT CHECK ("stake_step_micro" > 0);
ALTER TABLE "game_configs" ADD COLUMN "payout_rounding" "payout_rounding" NOT NULL DEFAULT 'exact';
ALTER TABLE "game_configs" ADD COLUMN "params" JSONB NOT NULL DEFAULT '{}'::jsonb;

-- contract 8.6: a cycle plays the configuration snapshotted when it was created. A cycle
-- created before D46 had no stake step (1 micro-unit) and paid exact amounts.
ALTER TABLE "cycles" ADD COLUMN "stake_step_micro" BIGINT NOT NULL DEFAULT 1 CHECK ("stake_step_micro" > 0);
ALTER TABLE "cycles" ADD COLUMN "payout_rounding" "payout_rounding" NOT NULL DEFAULT 'exact';
ALTER TABLE "cycles" ADD COLUMN "params" JSONB NOT NULL DEFAULT '{}'::jsonb;
