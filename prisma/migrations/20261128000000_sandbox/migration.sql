-- D35: a sandbox operator (rgs operator create|update --sandbox true) has ten times the
-- rate limits and may launch with sandboxSeeds. A session remembers whether it was launched
-- as a sandbox session, so that turning the operator's flag off later does not unmark the
-- rounds it played; the reads find the flag through the round's session.
ALTER TABLE "operators" ADD COLUMN "sandbox" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "sessions" ADD COLUMN "sandbox" BOOLEAN NOT NULL DEFAULT false;
