-- D42, D31: a campaign's finish, stored. finished_at is set once, when the campaign's totals
-- are final (every round played, cancelled or past its end, and no bet of it PENDING or
-- ACCEPTED), by the statement that writes its freebet.campaign_finished event: the
-- conditional update (finished_at IS NULL) is what makes the event exactly once.
-- finished_reason says why: 'cancelled' from the cancellation on (a cancelled campaign whose
-- bets are still undecided has it before its finished_at), 'played' or 'expired' from the
-- sweep that finishes it. swept_at is when the leader's sweep last looked at the campaign: the
-- sweep looks at the unfinished ones least recently looked at first, a bounded number a run.

ALTER TABLE "free_bet_campaigns" ADD COLUMN "finished_reason" TEXT;
ALTER TABLE "free_bet_campaigns" ADD COLUMN "swept_at" TIMESTAMPTZ(3);
ALTER TABLE "free_bet_campaigns" ADD CONSTRAINT "free_bet_campaigns_finished_reason"
    CHECK ("finished_reason" IN ('played', 'expired', 'cancelled'));
-- a finished campaign says why; a stored FINISHED state is a finished campaign
ALTER TABLE "free_bet_campaigns" ADD CONSTRAINT "free_bet_campaigns_finished"
    CHECK (("finished_at" IS NULL OR "finished_reason" IS NOT NULL) AND ("state" <> 'FINISHED' OR "finished_at" IS NOT NULL));

-- the sweep's order over the unfinished campaigns (D42): never looked at first, then the
-- least recently looked at
CREATE INDEX "free_bet_campaigns_unfinished_idx" ON "free_bet_campaigns"("swept_at" ASC NULLS FIRST, "id") WHERE "finished_at" IS NULL;

-- D31: an endpoint set without --events takes every event type; one that took every type
-- before freebet.campaign_finished existed takes it too (in the order rgs webhook set writes)
UPDATE "webhook_endpoints"
SET "events" = ARRAY['round.settled', 'round.voided', 'session.terminated', 'session.rg_limit_tripped', 'reconciliation.discrepancy',
                     'credential.rotated', 'credential.revoked', 'freebet.campaign_finished', 'webhook.test']
WHERE "events" @> ARRAY['round.settled', 'round.voided', 'session.terminated', 'session.rg_limit_tripped', 'reconciliation.discrepancy',
                        'credential.rotated', 'credential.revoked', 'webhook.test']
  AND NOT ('freebet.campaign_finished' = ANY("events"));
