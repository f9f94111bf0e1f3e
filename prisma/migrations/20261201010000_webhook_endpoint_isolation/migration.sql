-- D24, D31: one operator's webhook endpoint must not hold up another's deliveries.

-- An endpoint whose circuit is open is held until this time (the circuit's open period,
-- jittered): its events are not claimed, and once it passes a single attempt probes it.
ALTER TABLE "webhook_endpoints" ADD COLUMN "held_until" TIMESTAMPTZ(3);

-- The due events of one operator, oldest due first: the sweep takes a few of each operator's
-- at a time, and a finished attempt queues its endpoint's next.
CREATE INDEX "webhook_events_due_by_operator" ON "webhook_events" ("operator_id", "next_attempt_at") WHERE "status" = 'pending';

-- The events an attempt holds (a lease), counted per operator: at most a few in flight per
-- endpoint. A recorded attempt clears its lease, so the index holds only attempts in flight
-- and those of a process that died mid-attempt.
CREATE INDEX "webhook_events_in_flight" ON "webhook_events" ("operator_id", "locked_until") WHERE "locked_until" IS NOT NULL;
