-- D44: jurisdiction profiles.

-- An operator's stricter values per jurisdiction code (`rgs jurisdiction set`), over the
-- built-in profiles: { "<CODE>": { "minRoundMs": 10000, "maxStakeMicro": { "EUR": "50000" }, ... } }
ALTER TABLE "operators" ADD COLUMN "jurisdiction_overrides" JSONB NOT NULL DEFAULT '{}';

-- The rules a session plays under, fixed at its launch: the profile's name and its rules for
-- the session's currency (every read of a round names them). `jurisdiction_binds`: the rules
-- refuse some bets, so placement reads them (a session of `default` is placed by the common
-- case). `play_started_at`: when the player's play began (a session launched soon after the
-- player's previous one under a reality check carries its start on); `reality_check_due_at`:
-- when bets stop until the player acknowledges a reality check (none without one).
ALTER TABLE "sessions" ADD COLUMN "jurisdiction_profile" JSONB NOT NULL
  DEFAULT '{"profile":"default","minRoundMs":0,"autoplay":true,"realityCheckMinutes":null,"showElapsedTime":false,"showNetPosition":false,"maxStakeMicro":null}';
ALTER TABLE "sessions" ADD COLUMN "jurisdiction_binds" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "sessions" ADD COLUMN "play_started_at" TIMESTAMPTZ(3);
ALTER TABLE "sessions" ADD COLUMN "reality_check_due_at" TIMESTAMPTZ(3);
