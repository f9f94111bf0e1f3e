-- D29, D30: the scheduler's terms of leadership, as Postgres sees them. Each election in Redis
-- grants an epoch (a counter that only grows); the elected scheduler records it here before it
-- recovers anything, and every move of an engine clock checks, in its own statement, that its
-- epoch is still the one recorded here and that the cycle is one its term runs. A cycle runs
-- under the term that opened its betting (leader_epoch); a successor adopts the cycles of a
-- predecessor that handed over and interrupts (contract 3.1) those of one that did not.
CREATE TABLE "scheduler_leader" (
  "id" SMALLINT NOT NULL DEFAULT 1,
  "epoch" BIGINT NOT NULL,
  -- the election that took the epoch: its recovery may take it again (a retry), no other
  -- election may (an epoch issued twice, by a Redis that lost its counter)
  "election_id" UUID,
  CONSTRAINT "scheduler_leader_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "scheduler_leader_one_row" CHECK ("id" = 1)
);
INSERT INTO "scheduler_leader" ("id", "epoch") VALUES (1, 0);

-- NULL while PENDING (any current leader may open its betting), and for cycles older than
-- this migration
ALTER TABLE "cycles" ADD COLUMN "leader_epoch" BIGINT;
