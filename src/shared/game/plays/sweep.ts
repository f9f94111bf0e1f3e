import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import type { PayoutRounding } from '../../domain/games/config.js';
import { finishPlayCycle, resolvePlay, settlePlay } from './resolve.js';

// D41, contract 3.1: the instant plays a stopped process left unfinished, found by the leader's
// recovery (rounds/recovery.ts) in their cycles that are not FINISHED, oldest first, a bounded
// number a run. A play whose debit was accepted is derived and paid (resolve.ts); one whose
// outcome is stored is settled; one already settled or voided, or whose bet was refused, has its
// cycle finished. A play whose debit is still PENDING is the orphan sweep's (recovery.ts
// resolveOrphanBets: rolled back as uncertain), and its cycle is finished by a later run. A play
// is left to the process that placed it for SETTLE_AFTER_MS after its debit was accepted. A
// play's cycle has its bet's id (place.ts).
const SETTLE_AFTER_MS = 5000;
const PER_RUN = 500;

const OPEN_PLAYS = statement(
  'plays_open',
  `SELECT c.id AS cycle_id, c.created_at AS cycle_created_at, c.game_code, c.payout_rounding, b.status AS bet_status,
          r.id AS round_id, r.state AS round_state, r.created_at AS accepted_at
   FROM cycles c
   -- one bet and at most one round per play, each looked up by its key (LIMIT keeps the lookups
   -- per cycle, not a join that reads every month's index whole)
   LEFT JOIN LATERAL (SELECT b.id, b.status FROM bets b WHERE b.id = c.id AND b.cycle_created_at = c.created_at LIMIT 1) b ON true
   LEFT JOIN LATERAL (SELECT r.id, r.state, r.created_at FROM rounds r WHERE r.bet_id = b.id AND r.cycle_created_at = c.created_at LIMIT 1) r ON true
   WHERE c.instant AND c.phase <> 'FINISHED' AND c.created_at < $1
   ORDER BY c.created_at
   LIMIT ${PER_RUN}`,
);

type OpenPlay = {
  cycle_id: string;
  cycle_created_at: Date;
  game_code: string;
  payout_rounding: PayoutRounding;
  bet_status: string | null;
  round_id: string | null;
  round_state: string | null;
  accepted_at: Date | null;
};

export async function finishInstantPlays(svc: ServiceContext): Promise<{ instantPlaysResolved: number; instantPlaysSettled: number }> {
  const now = svc.now().getTime();
  const open = await svc.sql.query<OpenPlay>(OPEN_PLAYS, [new Date(now - SETTLE_AFTER_MS)]);
  let resolved = 0;
  let settled = 0;
  for (const play of open) {
    if (play.round_state === 'ROLLING') {
      if (play.accepted_at!.getTime() > now - SETTLE_AFTER_MS) continue;
      if (await resolvePlay(svc, { roundId: play.round_id!, cycleCreatedAt: play.cycle_created_at })) resolved += 1;
    } else if (play.round_state === 'RESULT') {
      await settlePlay(svc, { cycle_id: play.cycle_id, cycle_created_at: play.cycle_created_at, game_code: play.game_code, payout_rounding: play.payout_rounding });
      settled += 1;
    } else if (play.round_state !== null || (play.bet_status !== 'PENDING' && play.bet_status !== 'ACCEPTED')) {
      await finishPlayCycle(svc, play.cycle_id);
    }
  }
  if (resolved + settled > 0) svc.logger.warn({ resolved, settled }, 'instant plays left unfinished were played and settled');
  return { instantPlaysResolved: resolved, instantPlaysSettled: settled };
}
