-- CreateEnum
CREATE TYPE "cycle_phase" AS ENUM ('PENDING', 'BETTING_OPEN', 'ROLLING', 'RESULT', 'COOLDOWN', 'FINISHED');

-- CreateEnum
CREATE TYPE "round_state" AS ENUM ('BETTING_OPEN', 'ROLLING', 'RESULT', 'SETTLED', 'VOIDED');

-- CreateEnum
CREATE TYPE "bet_status" AS ENUM ('PENDING', 'ACCEPTED', 'SETTLED', 'VOIDED', 'REJECTED');

-- CreateEnum
CREATE TYPE "pending_round_bet_state" AS ENUM ('HELD', 'RESOLVED', 'REFUNDED');

-- AlterTable
ALTER TABLE "wallet_jobs" ADD COLUMN "bet_id" UUID,
ADD COLUMN "purpose" TEXT NOT NULL,
ADD COLUMN "last_request_uuid" UUID,
ADD COLUMN "last_bytes" TEXT,
ADD COLUMN "last_timed_out" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "engines" (
    "operator_id" TEXT NOT NULL,
    "game_code" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "current_cycle_id" UUID,
    "running" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "engines_pkey" PRIMARY KEY ("operator_id","game_code","currency")
);

-- CreateTable
CREATE TABLE "cycles" (
    "id" UUID NOT NULL,
    "operator_id" TEXT NOT NULL,
    "game_code" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "phase" "cycle_phase" NOT NULL,
    "phase_ends_at" TIMESTAMPTZ(3),
    "betting_window_ms" INTEGER NOT NULL,
    "rolling_window_ms" INTEGER NOT NULL,
    "cooldown_ms" INTEGER NOT NULL,
    "min_bet_micro" BIGINT NOT NULL,
    "max_bet_micro" BIGINT NOT NULL,
    "commission_micro" BIGINT NOT NULL,
    "payout_multiplier_scaled" BIGINT NOT NULL,
    "low_weight" BIGINT NOT NULL,
    "high_weight" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "cycles_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "rounds" (
    "id" UUID NOT NULL,
    "operator_id" TEXT NOT NULL,
    "session_id" UUID NOT NULL,
    "cycle_id" UUID NOT NULL,
    "seed_id" UUID NOT NULL,
    "bet_id" UUID NOT NULL,
    "game_code" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "nonce" INTEGER NOT NULL,
    "state" "round_state" NOT NULL,
    "settled" BOOLEAN NOT NULL DEFAULT false,
    "low_weight" BIGINT NOT NULL,
    "high_weight" BIGINT NOT NULL,
    "outcome_side" TEXT,
    "outcome_sum" INTEGER,
    "dice_values" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "demo" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "result_at" TIMESTAMPTZ(3),
    "settled_at" TIMESTAMPTZ(3),
    "voided_at" TIMESTAMPTZ(3),
    "void_reason" TEXT,

    CONSTRAINT "rounds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "rounds_nonce_check" CHECK ("nonce" >= 0),
    CONSTRAINT "rounds_outcome_side_check" CHECK ("outcome_side" IS NULL OR "outcome_side" IN ('LOW', 'HIGH'))
);

-- CreateTable
CREATE TABLE "bets" (
    "id" UUID NOT NULL,
    "operator_id" TEXT NOT NULL,
    "session_id" UUID NOT NULL,
    "cycle_id" UUID NOT NULL,
    "round_id" UUID NOT NULL,
    "player_ref" TEXT NOT NULL,
    "game_code" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "side" TEXT NOT NULL,
    "amount_micro" BIGINT NOT NULL,
    "is_free" BOOLEAN NOT NULL DEFAULT false,
    "status" "bet_status" NOT NULL,
    "bet_transaction_uuid" UUID NOT NULL,
    "win_transaction_uuid" UUID,
    "rollback_transaction_uuid" UUID,
    "payout_micro" BIGINT,
    "reject_reason" TEXT,
    "client_bet_id" TEXT,
    "demo" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "accepted_at" TIMESTAMPTZ(3),
    "settled_at" TIMESTAMPTZ(3),
    "voided_at" TIMESTAMPTZ(3),

    CONSTRAINT "bets_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "bets_amount_check" CHECK ("amount_micro" > 0),
    CONSTRAINT "bets_side_check" CHECK ("side" IN ('LOW', 'HIGH')),
    CONSTRAINT "bets_payout_check" CHECK ("payout_micro" IS NULL OR "payout_micro" >= 0)
);

-- CreateTable
CREATE TABLE "pending_round_bets" (
    "bet_id" UUID NOT NULL,
    "round_id" UUID NOT NULL,
    "state" "pending_round_bet_state" NOT NULL,
    "resolution_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "pending_round_bets_pkey" PRIMARY KEY ("bet_id")
);

-- CreateIndex
CREATE INDEX "cycles_phase_idx" ON "cycles"("phase");

-- CreateIndex
CREATE UNIQUE INDEX "cycles_operator_id_game_code_currency_number_key" ON "cycles"("operator_id", "game_code", "currency", "number");

-- CreateIndex
CREATE INDEX "rounds_operator_id_settled_at_idx" ON "rounds"("operator_id", "settled_at");

-- CreateIndex
CREATE INDEX "rounds_operator_id_voided_at_idx" ON "rounds"("operator_id", "voided_at");

-- CreateIndex
CREATE INDEX "rounds_cycle_id_state_idx" ON "rounds"("cycle_id", "state");

-- CreateIndex
CREATE UNIQUE INDEX "rounds_session_id_cycle_id_key" ON "rounds"("session_id", "cycle_id");

-- CreateIndex
CREATE UNIQUE INDEX "rounds_bet_id_key" ON "rounds"("bet_id");

-- CreateIndex
CREATE UNIQUE INDEX "rounds_seed_id_nonce_key" ON "rounds"("seed_id", "nonce");

-- CreateIndex
CREATE UNIQUE INDEX "bets_round_id_key" ON "bets"("round_id");

-- CreateIndex
CREATE UNIQUE INDEX "bets_bet_transaction_uuid_key" ON "bets"("bet_transaction_uuid");

-- CreateIndex
CREATE UNIQUE INDEX "bets_win_transaction_uuid_key" ON "bets"("win_transaction_uuid");

-- CreateIndex
CREATE UNIQUE INDEX "bets_rollback_transaction_uuid_key" ON "bets"("rollback_transaction_uuid");

-- CreateIndex
CREATE INDEX "bets_operator_id_player_ref_currency_created_at_idx" ON "bets"("operator_id", "player_ref", "currency", "created_at");

-- CreateIndex
CREATE INDEX "bets_status_idx" ON "bets"("status");

-- CreateIndex (8.2 rule 4: one live bet per session per cycle; a rejected attempt does not count)
CREATE UNIQUE INDEX "bets_one_live_per_session_cycle" ON "bets"("session_id", "cycle_id") WHERE "status" <> 'REJECTED';

-- CreateIndex
CREATE INDEX "pending_round_bets_round_id_idx" ON "pending_round_bets"("round_id");

-- CreateIndex
CREATE INDEX "wallet_jobs_bet_id_idx" ON "wallet_jobs"("bet_id");

-- AddForeignKey
ALTER TABLE "engines" ADD CONSTRAINT "engines_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "cycles" ADD CONSTRAINT "cycles_operator_id_game_code_currency_fkey" FOREIGN KEY ("operator_id", "game_code", "currency") REFERENCES "engines"("operator_id", "game_code", "currency") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rounds" ADD CONSTRAINT "rounds_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rounds" ADD CONSTRAINT "rounds_cycle_id_fkey" FOREIGN KEY ("cycle_id") REFERENCES "cycles"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rounds" ADD CONSTRAINT "rounds_seed_id_fkey" FOREIGN KEY ("seed_id") REFERENCES "seeds"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bets" ADD CONSTRAINT "bets_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rounds" ADD CONSTRAINT "rounds_bet_id_fkey" FOREIGN KEY ("bet_id") REFERENCES "bets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pending_round_bets" ADD CONSTRAINT "pending_round_bets_bet_id_fkey" FOREIGN KEY ("bet_id") REFERENCES "bets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
