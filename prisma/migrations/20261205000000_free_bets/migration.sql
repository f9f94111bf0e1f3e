-- D42: free-bet campaigns and their grants, the operator's side (contract 2.6 isFree, 8.4).

CREATE TYPE "free_bet_campaign_state" AS ENUM ('ACTIVE', 'CANCELLED', 'FINISHED');

-- A campaign is the operator's, named by its campaignRef (the key of the create's
-- idempotency); terms_digest is the SHA-256 of its canonical terms, the sorted playerRefs
-- included, so that the same ref with other terms is told apart from a retry.
CREATE TABLE "free_bet_campaigns" (
    "id" UUID NOT NULL,
    "operator_id" TEXT NOT NULL,
    "campaign_ref" TEXT NOT NULL,
    "game_code" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "stake_micro" BIGINT NOT NULL CHECK ("stake_micro" > 0),
    "rounds" INTEGER NOT NULL CHECK ("rounds" BETWEEN 1 AND 1000),
    "valid_from" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "feature_buy" BOOLEAN NOT NULL DEFAULT false,
    "terms_digest" TEXT NOT NULL CHECK ("terms_digest" ~ '^[0-9a-f]{64}$'),
    "state" "free_bet_campaign_state" NOT NULL DEFAULT 'ACTIVE',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "cancelled_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "free_bet_campaigns_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "free_bet_campaigns_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "free_bet_campaigns_window" CHECK ("expires_at" > "valid_from")
);

CREATE UNIQUE INDEX "free_bet_campaigns_operator_id_campaign_ref_key" ON "free_bet_campaigns"("operator_id", "campaign_ref");

-- A grant holds a player's rounds of a campaign. What was played is not stored: it is
-- counted from the bets that name the grant (bets.free_bet_grant_id, below), so a free bet
-- the wallet refuses or that is rolled back gives its round back by construction. `cancelled`
-- is the rounds a cancellation took away (those not played at that moment).
CREATE TABLE "free_bet_grants" (
    "id" UUID NOT NULL,
    "campaign_id" UUID NOT NULL,
    "operator_id" TEXT NOT NULL,
    "player_ref" TEXT NOT NULL,
    "rounds" INTEGER NOT NULL CHECK ("rounds" BETWEEN 1 AND 1000),
    "cancelled" INTEGER NOT NULL DEFAULT 0 CHECK ("cancelled" >= 0 AND "cancelled" <= "rounds"),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "free_bet_grants_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "free_bet_grants_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "free_bet_campaigns"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

CREATE UNIQUE INDEX "free_bet_grants_campaign_id_player_ref_key" ON "free_bet_grants"("campaign_id", "player_ref");
-- GET /v1/freebets?playerRef= and the player's grants at a launch, newest first (D10 keyset)
CREATE INDEX "free_bet_grants_operator_id_player_ref_idx" ON "free_bet_grants"("operator_id", "player_ref");
-- GET /v1/freebets without a player: the operator's grants in keyset order (D10)
CREATE INDEX "free_bet_grants_operator_id_created_at_id_idx" ON "free_bet_grants"("operator_id", "created_at", "id");

-- D42: the grant a free bet spends a round of; NULL for every other bet. D36: added to the
-- partitioned table, so every month's partition has it; the partial index (created on each
-- partition too) serves the count of a grant's live bets and holds no row of a paid bet.
ALTER TABLE "bets" ADD COLUMN "free_bet_grant_id" UUID;
CREATE INDEX "bets_free_bet_grant_id_idx" ON "bets"("free_bet_grant_id", "status") WHERE "free_bet_grant_id" IS NOT NULL;
