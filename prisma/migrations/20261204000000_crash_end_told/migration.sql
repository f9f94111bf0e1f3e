-- D40: a crash round whose own end (its crash, or its automatic cash-out) a refused cash-out
-- has told its player. The end is recorded as RESULT only once the flight's grace has passed
-- (a cash-out stamped before it may still be on its way), but from the refusal on it is the
-- round's result: crash recovery records it instead of voiding the round, and no void takes it.
ALTER TABLE "rounds" ADD COLUMN "end_told" BOOLEAN NOT NULL DEFAULT false;
