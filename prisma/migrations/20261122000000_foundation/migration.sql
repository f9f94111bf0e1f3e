-- CreateEnum
CREATE TYPE "credential_kind" AS ENUM ('API', 'WALLET');

-- CreateEnum
CREATE TYPE "session_mode" AS ENUM ('REAL', 'DEMO');

-- CreateEnum
CREATE TYPE "session_state" AS ENUM ('ACTIVE', 'TERMINATED', 'EXPIRED');

-- CreateEnum
CREATE TYPE "idempotency_state" AS ENUM ('IN_PROGRESS', 'COMPLETED');

-- CreateTable
CREATE TABLE "operators" (
    "id" TEXT NOT NULL,
    "wallet_url" TEXT NOT NULL,
    "currencies" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "ip_allow_list" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "jurisdictions_blocked" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "frame_ancestors" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "rg_maxima" JSONB NOT NULL DEFAULT '{}',
    "signature_window_seconds" INTEGER NOT NULL DEFAULT 30,
    "suspended" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "operators_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operators_signature_window_check" CHECK ("signature_window_seconds" BETWEEN 1 AND 300)
);

-- CreateTable
CREATE TABLE "credentials" (
    "kid" TEXT NOT NULL,
    "operator_id" TEXT NOT NULL,
    "kind" "credential_kind" NOT NULL,
    "encrypted_secret" BYTEA NOT NULL,
    "wrapped_data_key" BYTEA NOT NULL,
    "not_before" TIMESTAMPTZ(3) NOT NULL,
    "not_after" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "credentials_pkey" PRIMARY KEY ("kid")
);

-- CreateTable
CREATE TABLE "game_configs" (
    "operator_id" TEXT NOT NULL,
    "game_code" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "betting_window_ms" INTEGER NOT NULL DEFAULT 15000,
    "rolling_window_ms" INTEGER NOT NULL DEFAULT 4000,
    "cooldown_ms" INTEGER NOT NULL DEFAULT 3000,
    "min_bet_micro" BIGINT NOT NULL DEFAULT 10000,
    "max_bet_micro" BIGINT NOT NULL DEFAULT 100000000,
    "commission_micro" BIGINT NOT NULL DEFAULT 3000,
    "payout_multiplier_scaled" BIGINT NOT NULL DEFAULT 200000,
    "low_weight" BIGINT NOT NULL DEFAULT 1,
    "high_weight" BIGINT NOT NULL DEFAULT 1,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "game_configs_pkey" PRIMARY KEY ("operator_id","game_code","currency"),
    CONSTRAINT "game_configs_windows_check" CHECK ("betting_window_ms" > 0 AND "rolling_window_ms" > 0 AND "cooldown_ms" >= 0),
    CONSTRAINT "game_configs_bet_range_check" CHECK ("min_bet_micro" > 0 AND "max_bet_micro" >= "min_bet_micro"),
    CONSTRAINT "game_configs_commission_check" CHECK ("commission_micro" BETWEEN 0 AND 100000),
    CONSTRAINT "game_configs_multiplier_check" CHECK ("payout_multiplier_scaled" > 0),
    CONSTRAINT "game_configs_weights_check" CHECK ("low_weight" >= 0 AND "high_weight" >= 0 AND "low_weight" + "high_weight" > 0)
);

-- CreateTable
CREATE TABLE "sessions" (
    "id" UUID NOT NULL,
    "operator_id" TEXT NOT NULL,
    "player_ref" TEXT NOT NULL,
    "game_code" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "lang" TEXT NOT NULL,
    "jurisdiction" TEXT NOT NULL,
    "mode" "session_mode" NOT NULL,
    "return_url" TEXT,
    "daily_loss_micro" BIGINT,
    "daily_wager_micro" BIGINT,
    "session_time_seconds" INTEGER,
    "demo_balance_micro" BIGINT,
    "state" "session_state" NOT NULL DEFAULT 'ACTIVE',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "terminated_at" TIMESTAMPTZ(3),
    "end_reason" TEXT,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "sessions_demo_balance_check" CHECK ("demo_balance_micro" IS NULL OR "demo_balance_micro" >= 0)
);

-- CreateTable
CREATE TABLE "seeds" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "encrypted_server_seed" BYTEA NOT NULL,
    "server_seed_hash" TEXT NOT NULL,
    "client_seed" TEXT NOT NULL,
    "next_nonce" INTEGER NOT NULL DEFAULT 0,
    "current" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retired_at" TIMESTAMPTZ(3),

    CONSTRAINT "seeds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "seeds_next_nonce_check" CHECK ("next_nonce" >= 0)
);

-- CreateTable
CREATE TABLE "idempotency_entries" (
    "operator_id" TEXT NOT NULL,
    "request_uuid" UUID NOT NULL,
    "endpoint" TEXT NOT NULL,
    "body_hash" TEXT NOT NULL,
    "state" "idempotency_state" NOT NULL DEFAULT 'IN_PROGRESS',
    "locked_until" TIMESTAMPTZ(3) NOT NULL,
    "response_status" INTEGER,
    "response_body" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_entries_pkey" PRIMARY KEY ("operator_id","request_uuid","endpoint")
);

-- CreateTable
CREATE TABLE "wallet_calls" (
    "id" UUID NOT NULL,
    "operator_id" TEXT NOT NULL,
    "session_id" UUID,
    "direction" TEXT NOT NULL DEFAULT 'OUT',
    "endpoint" TEXT NOT NULL,
    "request_uuid" UUID NOT NULL,
    "transaction_uuid" UUID,
    "attempt" INTEGER NOT NULL,
    "request_body" TEXT NOT NULL,
    "http_status" INTEGER,
    "status" TEXT,
    "latency_ms" INTEGER,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "responded_at" TIMESTAMPTZ(3),

    CONSTRAINT "wallet_calls_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_jobs" (
    "id" UUID NOT NULL,
    "operator_id" TEXT NOT NULL,
    "session_id" UUID,
    "endpoint" TEXT NOT NULL,
    "transaction_uuid" UUID NOT NULL,
    "payload" JSONB NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "abandoned_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "credentials_operator_id_kind_idx" ON "credentials"("operator_id", "kind");

-- CreateIndex
CREATE INDEX "sessions_operator_id_player_ref_currency_idx" ON "sessions"("operator_id", "player_ref", "currency");

-- CreateIndex
CREATE INDEX "seeds_session_id_idx" ON "seeds"("session_id");

-- CreateIndex (D5: exactly one current seed per session; not expressible in schema.prisma)
CREATE UNIQUE INDEX "seeds_one_current_per_session" ON "seeds"("session_id") WHERE "current";

-- CreateIndex
CREATE INDEX "idempotency_entries_expires_at_idx" ON "idempotency_entries"("expires_at");

-- CreateIndex
CREATE INDEX "wallet_calls_operator_id_created_at_idx" ON "wallet_calls"("operator_id", "created_at");

-- CreateIndex
CREATE INDEX "wallet_calls_transaction_uuid_idx" ON "wallet_calls"("transaction_uuid");

-- CreateIndex
CREATE UNIQUE INDEX "wallet_calls_request_uuid_attempt_key" ON "wallet_calls"("request_uuid", "attempt");

-- AddForeignKey
ALTER TABLE "credentials" ADD CONSTRAINT "credentials_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "game_configs" ADD CONSTRAINT "game_configs_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "seeds" ADD CONSTRAINT "seeds_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- CreateIndex
CREATE UNIQUE INDEX "wallet_jobs_transaction_uuid_key" ON "wallet_jobs"("transaction_uuid");

-- CreateIndex
CREATE INDEX "wallet_jobs_abandoned_at_idx" ON "wallet_jobs"("abandoned_at");

-- CreateIndex
CREATE INDEX "wallet_jobs_next_attempt_at_idx" ON "wallet_jobs"("next_attempt_at");
