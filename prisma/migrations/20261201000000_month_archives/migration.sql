-- D36: retention drops a month only after an archive of it was written and verified. Each
-- archive `rgs archive` writes, and reads back, is recorded here: the file, the sha256 of
-- its bytes, its rows per table and the money work still open in its snapshot (retention
-- refuses an archive taken while any was). Unpartitioned: the record outlives its month.
CREATE TABLE "month_archives" (
    "id" UUID NOT NULL,
    "month" TEXT NOT NULL,
    "file" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "counts" JSONB NOT NULL,
    "open_work" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "verified_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "month_archives_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "month_archives_month" CHECK ("month" ~ '^[0-9]{4}-(0[1-9]|1[0-2])$')
);

CREATE INDEX "month_archives_month_created_at_idx" ON "month_archives" ("month", "created_at");

-- contract 3.4, D23: a wallet job abandoned after 24 hours is a ticket for a human; once that
-- human has settled it with the wallet, `rgs jobs reconcile` records who, when and why. Until
-- then the job's month is not dropped (D36).
ALTER TABLE "wallet_jobs" ADD COLUMN "reconciled_at" TIMESTAMPTZ(3),
    ADD COLUMN "reconciled_by" TEXT,
    ADD COLUMN "reconciliation_note" TEXT;
