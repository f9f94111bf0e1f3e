-- Contract 1.1: signed webhooks (D31), the dispute pack (D32) and game recall (D33).

-- D32, D33: the wallet's answer as received (at most the 64 KiB the client reads, D24), so a
-- dispute pack carries every call with both bodies and recall shows the balances the wallet
-- reported. NULL: no answer (a timeout, a refusal before sending, a row older than this).
ALTER TABLE "wallet_calls" ADD COLUMN "response_body" TEXT;

-- D31: an operator's webhook endpoint (one per operator), set with `rgs webhook set`.
CREATE TABLE "webhook_endpoints" (
  "operator_id" TEXT NOT NULL,
  "url" TEXT NOT NULL,
  -- D25, as for wallet URLs: in production the URL may resolve to a non-public address only when set
  "url_private_allowed" BOOLEAN NOT NULL DEFAULT false,
  -- the event types delivered (D31: every type unless the operator chose some)
  "events" TEXT[] NOT NULL,
  "enabled" BOOLEAN NOT NULL DEFAULT true,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("operator_id"),
  CONSTRAINT "webhook_endpoints_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- D31: the transactional outbox. A row is written by the statement (or transaction) that
-- makes the change it reports, only for operators whose enabled endpoint takes its type; it
-- is the event (id = eventId, the body is rebuilt from it byte for byte) and its delivery
-- state. Redis only carries the delivery jobs: the webhooks role re-derives them from here.
CREATE TABLE "webhook_events" (
  "id" UUID NOT NULL,
  "operator_id" TEXT NOT NULL,
  "event_type" TEXT NOT NULL,
  "occurred_at" TIMESTAMPTZ(3) NOT NULL,
  "data" JSONB NOT NULL,
  -- an event that must be reported once only (an RG limit tripping, per session and limit)
  "dedupe_key" TEXT,
  "status" TEXT NOT NULL DEFAULT 'pending',
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "last_attempt_at" TIMESTAMPTZ(3),
  "last_status_code" INTEGER,
  "last_error" TEXT,
  -- when the next attempt is due (pending only)
  "next_attempt_at" TIMESTAMPTZ(3),
  -- an attempt in flight holds the row until then; a crashed deliverer's hold lapses
  "locked_until" TIMESTAMPTZ(3),
  "delivered_at" TIMESTAMPTZ(3),
  "failed_at" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "webhook_events_status_check" CHECK ("status" IN ('pending', 'delivered', 'failed'))
);
CREATE UNIQUE INDEX "webhook_events_dedupe_key_key" ON "webhook_events"("dedupe_key");
-- the deliveries due (the webhooks role's sweep)
CREATE INDEX "webhook_events_due" ON "webhook_events"("next_attempt_at") WHERE "status" = 'pending';
-- GET /v1/webhooks/deliveries, newest first
CREATE INDEX "webhook_events_operator_id_occurred_at_id_idx" ON "webhook_events"("operator_id", "occurred_at" DESC, "id" DESC);

-- D31: every delivery attempt, as it went.
CREATE TABLE "webhook_attempts" (
  "event_id" UUID NOT NULL,
  "attempt" INTEGER NOT NULL,
  "url" TEXT NOT NULL,
  "started_at" TIMESTAMPTZ(3) NOT NULL,
  "status_code" INTEGER,
  "error" TEXT,
  "latency_ms" INTEGER,
  CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("event_id", "attempt"),
  CONSTRAINT "webhook_attempts_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- D32, D34: the service's own signing keys (purpose 'pack': dispute packs, Ed25519). The
-- private key is sealed like a credential's secret (contract 5.3): encrypted under a data key
-- that MASTER_KEY wraps. The newest unretired key of a purpose signs; retired keys stay
-- published so that older packs still verify.
CREATE TABLE "signing_keys" (
  "kid" TEXT NOT NULL,
  "purpose" TEXT NOT NULL,
  "algorithm" TEXT NOT NULL,
  -- the raw public key, base64url (the JWK "x")
  "public_key" TEXT NOT NULL,
  "encrypted_private_key" BYTEA NOT NULL,
  "wrapped_data_key" BYTEA NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "retired_at" TIMESTAMPTZ(3),
  CONSTRAINT "signing_keys_pkey" PRIMARY KEY ("kid")
);
-- at most one signing key of a purpose is current
CREATE UNIQUE INDEX "signing_keys_one_current_per_purpose" ON "signing_keys"("purpose") WHERE "retired_at" IS NULL;
