-- D40: the crash game's bets, rounds and flights.

-- A crash bet names no side; it may name an auto cash-out, in cents of a multiplier (2.00x is
-- 200), 1.01x to 1000.00x.
ALTER TABLE "bets" ALTER COLUMN "side" DROP NOT NULL;
ALTER TABLE "bets" ADD COLUMN "auto_cash_out_cents" BIGINT CHECK ("auto_cash_out_cents" BETWEEN 101 AND 100000);

-- A crash round's crash point (cents), derived when its flight starts and stored before any
-- cash-out can be judged; `ends_at_ms`, the ms of the flight at which the round ends by itself
-- (its crash, or its automatic cash-out when that comes first); and its cash-out, when it had
-- one: the multiplier (cents) and the ms of the flight it was decided at (D40).
ALTER TABLE "rounds" ADD COLUMN "crash_cents" BIGINT CHECK ("crash_cents" BETWEEN 100 AND 100000);
ALTER TABLE "rounds" ADD COLUMN "ends_at_ms" INTEGER CHECK ("ends_at_ms" >= 0);
ALTER TABLE "rounds" ADD COLUMN "cash_out_cents" BIGINT CHECK ("cash_out_cents" BETWEEN 100 AND 100000);
ALTER TABLE "rounds" ADD COLUMN "cash_out_ms" INTEGER CHECK ("cash_out_ms" >= 0);

-- D40: every flight of a cycle starts at this instant; NULL until the crash points are stored
ALTER TABLE "cycles" ADD COLUMN "flight_started_at" TIMESTAMPTZ(3);
