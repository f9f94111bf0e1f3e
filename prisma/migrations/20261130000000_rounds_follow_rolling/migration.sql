-- contract 3.1, D1: a cycle's rounds follow it into ROLLING, called by the statement that
-- moves the cycle (src/game/rounds/clock.ts), so that the move and its rounds are one
-- statement and one commit. The move can wait for acceptances holding the cycle FOR SHARE;
-- the rounds they inserted are committed by then, but invisible to the snapshot the move's
-- statement took before its wait. A VOLATILE function's statements take a snapshot each
-- (READ COMMITTED), so this UPDATE sees them. `NOT settled` lets the partial index
-- rounds_unsettled find the cycle's rounds; cycle_created_at names their month (D36).
CREATE FUNCTION rgs_rounds_follow_rolling(cycle uuid, cycle_month timestamptz) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  moved integer;
BEGIN
  UPDATE rounds SET state = 'ROLLING'
  WHERE cycle_id = cycle AND cycle_created_at = cycle_month AND NOT settled AND state = 'BETTING_OPEN';
  GET DIAGNOSTICS moved = ROW_COUNT;
  RETURN moved;
END $$;
