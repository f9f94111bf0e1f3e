import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/db/client.js';
import { isUniqueViolation, type Queryable, type Sql } from '../../platform/db/sql.js';
import type { FreeBetCampaignFinishedData, FreeBetFinishReason } from '../../domain/events.js';
import { outboxInsertSql } from '../../platform/outbox.js';
import { AppError, betOutOfRange, conflict, featureBuyNotAvailable, gameNotAvailable, invalidRequest, notFound } from '../../platform/errors.js';
import { gameModule } from '../../domain/games/index.js';
import { CredentialError } from '../../wallet/credentials.js';
import { encodeCursor, type ListingPosition } from '../reports/cursor.js';
import { gameAvailable, loadGameConfig } from '../operators/game-config.js';
import { readCampaignTerms, termsDigest, windowProblems, type CampaignTerms, type CampaignTermsInput } from './terms.js';
import { GRANT_PLAYED, LIVE_BET_STATUSES } from './usable.js';

// D42: free-bet campaigns, the operator's side: create (idempotent on campaignRef), list the
// grants, a campaign's totals, cancel. The routes (src/api/routes/freebets.ts) and `rgs
// freebets` (src/cli/commands/freebets.ts) both call these, so the rules live here once.
//
// What a grant has played is never stored: it is the count of its live bets (bets naming it
// in free_bet_grant_id whose status is PENDING, ACCEPTED or SETTLED), so a free bet the wallet
// refuses or that is rolled back gives its round back exactly once, by construction. remaining
// = rounds - cancelled - played, never below 0, and 0 once the campaign is cancelled. A
// cancelled campaign's grant has cancelled every round it has not played, then and later
// (`cancelled` as stored is what it had not played at the cancellation): a bet in flight at
// the cancellation that is refused or voided afterwards gives its round to the cancelled ones,
// so played + remaining + cancelled is always the rounds granted.
//
// A campaign is finished once its totals are final: every round played, the campaign
// cancelled, or past its end, and no bet of it undecided (PENDING or ACCEPTED: such a bet may
// yet give its round back, or be paid). Then, once, its finish is stored (finished_at,
// finished_reason, the state FINISHED unless CANCELLED) and its freebet.campaign_finished event
// written (D31), in one transaction: by the cancellation when its totals are final at once,
// else by the leader's sweep (finishCampaigns, src/workers/scheduler.ts).

export type FreeBetsContext = { db: Db; sql: Sql; now: Date };

export type GrantStatus = 'active' | 'expired' | 'cancelled' | 'used';
export const GRANT_STATUSES: GrantStatus[] = ['active', 'expired', 'cancelled', 'used'];
// a campaign's state as read: its stored state (a stored finish says why: played or expired),
// and for an active one not yet swept, `finished` once every round is played, `expired` past
// its end
export type CampaignState = 'active' | 'expired' | 'cancelled' | 'finished';
export const CAMPAIGN_STATES: CampaignState[] = ['active', 'expired', 'cancelled', 'finished'];

export type CreatedCampaign = { campaignId: string; grants: number };

// a bet whose fate is not yet known: it may still give its round back (refused, voided) or be paid
const UNDECIDED_STATUSES = `('PENDING', 'ACCEPTED')`;

const FIND_BY_REF = `
  SELECT id, terms_digest, (SELECT count(*) FROM free_bet_grants g WHERE g.campaign_id = c.id) AS grants
  FROM free_bet_campaigns c WHERE operator_id = $1 AND campaign_ref = $2`;

const INSERT_CAMPAIGN = `
  INSERT INTO free_bet_campaigns (id, operator_id, campaign_ref, game_code, currency, stake_micro, rounds, valid_from, expires_at, feature_buy, terms_digest, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`;

// every grant in one statement (D42: set-based, not a statement per player)
const INSERT_GRANTS = `
  INSERT INTO free_bet_grants (id, campaign_id, operator_id, player_ref, rounds, created_at)
  SELECT gen_random_uuid(), $1, $2, player_ref, $3, $4 FROM unnest($5::text[]) AS player_ref`;

type Existing = { id: string; terms_digest: string; grants: bigint };

// the campaign a create of these terms names: the existing one when the digest matches (a
// retry), 409 campaign_conflict when it does not
function sameCampaign(existing: Existing, digest: string): CreatedCampaign {
  if (existing.terms_digest !== digest) throw conflict('campaign_conflict', 'a campaign with this campaignRef exists with other terms');
  return { campaignId: existing.id, grants: Number(existing.grants) };
}

// POST /v1/freebets: a campaign and a grant per player, in one transaction. Answers
// { campaignId, grants, created }: created false when the campaignRef already named a
// campaign with the same terms (D42: idempotent on campaignRef, whatever the time).
export async function createCampaign(ctx: FreeBetsContext, operatorId: string, input: CampaignTermsInput): Promise<CreatedCampaign & { created: boolean }> {
  const read = readCampaignTerms(input);
  if (!read.terms) throw invalidRequest('RS_ERROR_WRONG_TYPES', 'a field has the wrong type or format', read.problems);
  const terms = read.terms;
  const digest = termsDigest(terms);
  const [existing] = await ctx.sql.query<Existing>(FIND_BY_REF, [operatorId, terms.campaignRef]);
  if (existing) return { ...sameCampaign(existing, digest), created: false };

  const window = windowProblems(terms, ctx.now);
  if (window.length > 0) throw invalidRequest('RS_ERROR_WRONG_TYPES', 'the campaign\'s window is out of bounds', window);
  await checkGameTerms(ctx.db, operatorId, terms);

  const campaignId = randomUUID();
  try {
    await ctx.sql.transaction(async (tx) => {
      await tx.query(INSERT_CAMPAIGN, [
        campaignId,
        operatorId,
        terms.campaignRef,
        terms.gameCode,
        terms.currency,
        terms.stakeMicro,
        terms.rounds,
        terms.validFrom ?? ctx.now,
        terms.expiresAt,
        terms.featureBuy,
        digest,
        ctx.now,
      ]);
      await tx.query(INSERT_GRANTS, [campaignId, operatorId, terms.rounds, ctx.now, terms.playerRefs]);
    });
  } catch (err) {
    // a concurrent create of the same campaignRef committed first: answered as a retry
    if (!isUniqueViolation(err)) throw err;
    const [winner] = await ctx.sql.query<Existing>(FIND_BY_REF, [operatorId, terms.campaignRef]);
    if (!winner) throw err;
    return { ...sameCampaign(winner, digest), created: false };
  }
  return { campaignId, grants: terms.playerRefs.length, created: true };
}

// D39, D46: the game is one this operator may launch in this currency (the catalogue's rule,
// and the operator's permitted currencies, which a launch checks: an empty list permits
// every currency), and the stake one it takes: within the configuration's bounds and on its
// step
async function checkGameTerms(db: Db, operatorId: string, terms: CampaignTerms): Promise<void> {
  const operator = await db.operator.findUniqueOrThrow({ where: { id: operatorId }, select: { currencies: true } });
  if (operator.currencies.length > 0 && !operator.currencies.includes(terms.currency)) {
    throw gameNotAvailable('the currency is not permitted for this operator, so no game is available in it');
  }
  if (!(await gameAvailable(db, operatorId, terms.gameCode, terms.currency))) {
    throw gameNotAvailable('the game is not available to this operator in this currency');
  }
  const module = gameModule(terms.gameCode);
  // D42: only an instant game may have a feature to buy; a shared-clock game has none
  if (terms.featureBuy && module?.kind !== 'instant') throw featureBuyNotAvailable('this game has no feature to buy');
  const config = await loadGameConfig(db, operatorId, terms.gameCode, terms.currency);
  if (terms.stakeMicro < config.minBetMicro || terms.stakeMicro > config.maxBetMicro) {
    throw betOutOfRange(`the stake must be from ${config.minBetMicro} to ${config.maxBetMicro} micro-units for this game and currency`);
  }
  if (terms.stakeMicro % config.stakeStepMicro !== 0n) {
    throw betOutOfRange(`the stake must be a multiple of ${config.stakeStepMicro} micro-units for this game and currency`);
  }
}

// `rgs freebets` names its operator (the API's is the signing one): one that does not exist is
// refused as `rgs game config` refuses it
export async function requireOperator(db: Db, operatorId: string): Promise<void> {
  const operator = await db.operator.findUnique({ where: { id: operatorId }, select: { id: true } });
  if (!operator) throw new CredentialError(`operator ${operatorId} does not exist`);
}

// --- reads ------------------------------------------------------------------------------

export type GrantView = {
  grantId: string;
  campaignId: string;
  campaignRef: string;
  playerRef: string;
  gameCode: string;
  currency: string;
  stakeMicro: string;
  rounds: number;
  played: number;
  remaining: number;
  cancelled: number;
  status: GrantStatus;
  validFrom: string;
  expiresAt: string;
};

export type GrantPage = { grants: GrantView[]; nextCursor: string | null };

export type GrantQuery = { playerRef?: string; campaignRef?: string; status?: GrantStatus; after?: ListingPosition; limit: number };

// A grant's status: cancelled (its campaign was cancelled before every round was played),
// used (every round played), expired (past the campaign's end with rounds left), or active.
// Keyset order (D10): when the grant was made, then its id.
const LIST_GRANTS = `
  WITH counted AS (
    SELECT g.id, g.campaign_id, c.campaign_ref, g.player_ref, c.game_code, c.currency, c.stake_micro, g.rounds, g.cancelled AS cancelled_then,
           c.state, c.valid_from, c.expires_at, g.created_at,
           ${GRANT_PLAYED} AS played
    FROM free_bet_grants g JOIN free_bet_campaigns c ON c.id = g.campaign_id
    WHERE g.operator_id = $1
      AND ($2::text IS NULL OR g.player_ref = $2)
      AND ($3::text IS NULL OR c.campaign_ref = $3)
      AND ($4::timestamptz IS NULL OR (g.created_at, g.id) > ($4, $5::uuid))
  ), reckoned AS (
    SELECT *, CASE WHEN state = 'CANCELLED' THEN greatest(rounds - played, 0) ELSE cancelled_then END AS cancelled
    FROM counted
  ), viewed AS (
    SELECT *,
           CASE WHEN state = 'CANCELLED' THEN 0 ELSE greatest(rounds - cancelled - played, 0) END AS remaining,
           CASE WHEN state = 'CANCELLED' AND cancelled > 0 THEN 'cancelled'
                WHEN rounds - cancelled - played <= 0 THEN 'used'
                WHEN state = 'CANCELLED' THEN 'cancelled'
                WHEN expires_at <= $6 THEN 'expired'
                ELSE 'active' END AS status
    FROM reckoned
  )
  SELECT * FROM viewed WHERE ($7::text IS NULL OR status = $7) ORDER BY created_at, id LIMIT $8`;

type GrantRow = {
  id: string;
  campaign_id: string;
  campaign_ref: string;
  player_ref: string;
  game_code: string;
  currency: string;
  stake_micro: bigint;
  rounds: number;
  cancelled: number;
  played: number;
  remaining: number;
  status: GrantStatus;
  valid_from: Date;
  expires_at: Date;
  created_at: Date;
};

const grantView = (row: GrantRow): GrantView => ({
  grantId: row.id,
  campaignId: row.campaign_id,
  campaignRef: row.campaign_ref,
  playerRef: row.player_ref,
  gameCode: row.game_code,
  currency: row.currency,
  stakeMicro: row.stake_micro.toString(),
  rounds: row.rounds,
  played: row.played,
  remaining: row.remaining,
  cancelled: row.cancelled,
  status: row.status,
  validFrom: row.valid_from.toISOString(),
  expiresAt: row.expires_at.toISOString(),
});

// GET /v1/freebets: the operator's grants, a page at a time (D10 keyset cursor)
export async function listGrants(ctx: Pick<FreeBetsContext, 'sql' | 'now'>, operatorId: string, query: GrantQuery): Promise<GrantPage> {
  const rows = await ctx.sql.query<GrantRow>(LIST_GRANTS, [
    operatorId,
    query.playerRef ?? null,
    query.campaignRef ?? null,
    query.after?.at ?? null,
    query.after?.id ?? null,
    ctx.now,
    query.status ?? null,
    query.limit + 1,
  ]);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    grants: page.map(grantView),
    nextCursor: rows.length > query.limit && last ? encodeCursor({ at: last.created_at, id: last.id }) : null,
  };
}

export type CampaignTotals = {
  campaignId: string;
  campaignRef: string;
  gameCode: string;
  currency: string;
  stakeMicro: string;
  state: CampaignState;
  grants: number;
  granted: number;
  played: number;
  remaining: number;
  cancelled: number;
  totalPaidMicro: string;
  validFrom: string;
  expiresAt: string;
  createdAt: string;
  cancelledAt: string | null;
};

// a campaign's totals over its grants: what was granted, played, cancelled, what remains, and
// what its settled bets paid (D18: a bigint sum, never a float)
const TOTALS = `
  SELECT c.id, c.campaign_ref, c.game_code, c.currency, c.stake_micro, c.state, c.finished_reason, c.valid_from, c.expires_at, c.created_at, c.cancelled_at,
         count(g.id)::bigint AS grants,
         coalesce(sum(g.rounds), 0)::bigint AS granted,
         coalesce(sum(CASE WHEN c.state = 'CANCELLED' THEN greatest(g.rounds - p.played, 0) ELSE g.cancelled END), 0)::bigint AS cancelled,
         coalesce(sum(p.played), 0)::bigint AS played,
         coalesce(sum(CASE WHEN c.state = 'CANCELLED' THEN 0 ELSE greatest(g.rounds - g.cancelled - p.played, 0) END), 0)::bigint AS remaining,
         coalesce(sum(p.paid), 0)::bigint AS paid
  FROM free_bet_campaigns c
  LEFT JOIN free_bet_grants g ON g.campaign_id = c.id
  LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE b.status IN ${LIVE_BET_STATUSES}) AS played,
           coalesce(sum(b.payout_micro) FILTER (WHERE b.status = 'SETTLED'), 0) AS paid
    FROM bets b WHERE b.free_bet_grant_id = g.id
  ) p ON true
  WHERE c.id = $1 AND c.operator_id = $2
  GROUP BY c.id`;

type TotalsRow = {
  id: string;
  campaign_ref: string;
  game_code: string;
  currency: string;
  stake_micro: bigint;
  state: 'ACTIVE' | 'CANCELLED' | 'FINISHED';
  finished_reason: FreeBetFinishReason | null;
  valid_from: Date;
  expires_at: Date;
  created_at: Date;
  cancelled_at: Date | null;
  grants: bigint;
  granted: bigint;
  cancelled: bigint;
  played: bigint;
  remaining: bigint;
  paid: bigint;
};

function campaignState(row: TotalsRow, now: Date): CampaignState {
  if (row.state === 'CANCELLED') return 'cancelled';
  if (row.state === 'FINISHED') return row.finished_reason === 'expired' ? 'expired' : 'finished';
  // every round played: finished, whether or not the sweep has stored it yet
  if (row.remaining === 0n) return 'finished';
  return row.expires_at.getTime() <= now.getTime() ? 'expired' : 'active';
}

const totalsView = (row: TotalsRow, now: Date): CampaignTotals => ({
  campaignId: row.id,
  campaignRef: row.campaign_ref,
  gameCode: row.game_code,
  currency: row.currency,
  stakeMicro: row.stake_micro.toString(),
  state: campaignState(row, now),
  grants: Number(row.grants),
  granted: Number(row.granted),
  played: Number(row.played),
  remaining: Number(row.remaining),
  cancelled: Number(row.cancelled),
  totalPaidMicro: row.paid.toString(),
  validFrom: row.valid_from.toISOString(),
  expiresAt: row.expires_at.toISOString(),
  createdAt: row.created_at.toISOString(),
  cancelledAt: row.cancelled_at?.toISOString() ?? null,
});

const campaignNotFound = (): AppError => notFound('campaign_not_found', 'free-bet campaign not found');

// GET /v1/freebets/{campaignId}: 404 for an unknown id and for another operator's (D10)
// (and, with a transaction's `sql`, the totals a finish's event carries)
export async function campaignTotals(ctx: { sql: Queryable; now: Date }, operatorId: string, campaignId: string): Promise<CampaignTotals> {
  const [row] = await ctx.sql.query<TotalsRow>(TOTALS, [campaignId, operatorId]);
  if (!row) throw campaignNotFound();
  return totalsView(row, ctx.now);
}

// D42: each grant keeps what it played (its live bets, counted under the grant's row lock) and
// loses the rest; the campaign is CANCELLED. An already cancelled or finished campaign is left
// as it is, so a second DELETE answers the same totals. The grants' locks are taken by a
// statement of their own before the count: a statement reads the rows committed when it
// starts, so a count in the statement that waits for a lock would miss a free bet whose
// placement held that lock and committed meanwhile, and cancel its round as well as play it.
const LOCK_CAMPAIGN = `SELECT state, expires_at FROM free_bet_campaigns WHERE id = $1 AND operator_id = $2 FOR UPDATE`;
const LOCK_GRANTS = `SELECT id FROM free_bet_grants WHERE campaign_id = $1 ORDER BY id FOR UPDATE`;
const CANCEL_GRANTS = `
  UPDATE free_bet_grants g
  SET cancelled = greatest(g.rounds - ${GRANT_PLAYED}, 0)
  WHERE g.campaign_id = $1`;
const MARK_CANCELLED = `UPDATE free_bet_campaigns SET state = 'CANCELLED', cancelled_at = $2, finished_reason = 'cancelled' WHERE id = $1`;

// whether a bet of the campaign is undecided: its totals are not final while one is
const UNDECIDED = `
  SELECT EXISTS (
    SELECT 1 FROM free_bet_grants g JOIN bets b ON b.free_bet_grant_id = g.id AND b.status IN ${UNDECIDED_STATUSES}
    WHERE g.campaign_id = $1
  ) AS undecided`;

// DELETE /v1/freebets/{campaignId}: cancels what is unplayed (played rounds stand), answers the
// totals. D42, D31: when no bet of the campaign is undecided, its totals are final and the
// cancellation finishes it, its event in the same transaction; else the sweep does once the
// last one is decided. Only the first cancellation does either. A campaign past its end is
// expired, as it reads, and stays so: nothing of it is playable to cancel.
export async function cancelCampaign(ctx: Pick<FreeBetsContext, 'sql' | 'now'>, operatorId: string, campaignId: string): Promise<CampaignTotals> {
  await ctx.sql.transaction(async (tx) => {
    const [campaign] = await tx.query<{ state: string; expires_at: Date }>(LOCK_CAMPAIGN, [campaignId, operatorId]);
    if (!campaign) throw campaignNotFound();
    if (campaign.state !== 'ACTIVE' || campaign.expires_at.getTime() <= ctx.now.getTime()) return;
    await tx.query(LOCK_GRANTS, [campaignId]);
    await tx.query(CANCEL_GRANTS, [campaignId]);
    await tx.query(MARK_CANCELLED, [campaignId, ctx.now]);
    const [bets] = await tx.query<{ undecided: boolean }>(UNDECIDED, [campaignId]);
    if (!bets!.undecided) await finishCampaign(tx, operatorId, campaignId, 'cancelled', ctx.now);
  });
  return campaignTotals(ctx, operatorId, campaignId);
}

// --- finishing (D42, D31) ---------------------------------------------------------------

// The finish, once: the conditional update (finished_at IS NULL) lets one writer through,
// the cancellation or one sweep, and only that one writes the event. A cancelled campaign
// keeps its state and its reason; another is FINISHED, played or expired.
const FINISH = `
  UPDATE free_bet_campaigns
  SET finished_at = $3, finished_reason = coalesce(finished_reason, $4),
      state = CASE WHEN state = 'CANCELLED' THEN state ELSE 'FINISHED'::free_bet_campaign_state END
  WHERE id = $1 AND operator_id = $2 AND finished_at IS NULL
  RETURNING finished_reason`;

const FINISHED_EVENT = `
  WITH input AS (SELECT $1::text AS operator_id, $2::timestamptz AS occurred_at, $3::jsonb AS data)
  ${outboxInsertSql('freebet.campaign_finished', 'input')}`;

// Stores the campaign's finish and writes its event, in the caller's transaction `tx`, which
// has decided that its totals are final. Returns false when it was finished already.
async function finishCampaign(tx: Queryable, operatorId: string, campaignId: string, reason: FreeBetFinishReason, now: Date): Promise<boolean> {
  const [finished] = await tx.query<{ finished_reason: FreeBetFinishReason }>(FINISH, [campaignId, operatorId, now, reason]);
  if (!finished) return false;
  // the totals as GET /v1/freebets/{campaignId} gives them, read in this transaction
  const totals = await campaignTotals({ sql: tx, now }, operatorId, campaignId);
  const data: FreeBetCampaignFinishedData = {
    campaignId: totals.campaignId,
    campaignRef: totals.campaignRef,
    gameCode: totals.gameCode,
    currency: totals.currency,
    stakeMicro: totals.stakeMicro,
    reason: finished.finished_reason,
    grants: totals.grants,
    granted: totals.granted,
    played: totals.played,
    remaining: totals.remaining,
    cancelled: totals.cancelled,
    totalPaidMicro: totals.totalPaidMicro,
    finishedAt: now.toISOString(),
  };
  await tx.query(FINISHED_EVENT, [operatorId, now, JSON.stringify(data)]);
  return true;
}

// D42: how many unfinished campaigns one sweep looks at, least recently looked at first
// (free_bet_campaigns_unfinished_idx): a run's work is bounded whatever the number of live
// campaigns, and every one is looked at in turn.
export const FINISH_SWEEP_LIMIT = 50;
// D42: a campaign past its end is finished as expired only this long after it: a placement
// that read the campaign as live just before its end has committed its bet (PENDING, which the
// sweep then waits for) long before, so an expired campaign's totals cannot gain a round after
// its event. Its GET reads `expired` from its end on.
export const EXPIRY_SETTLE_MS = 60_000;

// The unfinished campaigns a sweep looks at, locked (a cancellation, or a concurrent sweep,
// holding one is skipped: SKIP LOCKED), marked looked at, each with what is left of it and
// whether a bet of it is undecided.
const SWEEP = `
  WITH looked AS (
    UPDATE free_bet_campaigns c SET swept_at = $2
    WHERE c.id IN (
      SELECT id FROM free_bet_campaigns WHERE finished_at IS NULL
      ORDER BY swept_at ASC NULLS FIRST, id LIMIT $1 FOR UPDATE SKIP LOCKED
    )
    RETURNING c.id, c.operator_id, c.state, c.expires_at
  )
  SELECT l.id, l.operator_id, l.state, l.expires_at,
         coalesce(sum(CASE WHEN l.state = 'CANCELLED' THEN 0 ELSE greatest(g.rounds - g.cancelled - p.played, 0) END), 0)::bigint AS remaining,
         coalesce(sum(p.undecided), 0)::bigint AS undecided
  FROM looked l
  LEFT JOIN free_bet_grants g ON g.campaign_id = l.id
  LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE b.status IN ${LIVE_BET_STATUSES}) AS played,
           count(*) FILTER (WHERE b.status IN ${UNDECIDED_STATUSES}) AS undecided
    FROM bets b WHERE b.free_bet_grant_id = g.id
  ) p ON true
  GROUP BY l.id, l.operator_id, l.state, l.expires_at`;

type SweptRow = { id: string; operator_id: string; state: 'ACTIVE' | 'CANCELLED' | 'FINISHED'; expires_at: Date; remaining: bigint; undecided: bigint };

// why a campaign the sweep looked at is finished, or null while it is not
function finishReason(row: SweptRow, now: Date): FreeBetFinishReason | null {
  if (row.undecided > 0n) return null;
  if (row.state === 'CANCELLED') return 'cancelled';
  if (row.remaining === 0n) return 'played';
  return row.expires_at.getTime() + EXPIRY_SETTLE_MS <= now.getTime() ? 'expired' : null;
}

// D42, D31: the leader's sweep (src/workers/scheduler.ts): finishes, each with its event, the
// campaigns among those it looks at whose totals are final, in one transaction. Safe to run
// concurrently: each run locks the campaigns it looks at, and a finish is a conditional update.
export async function finishCampaigns(ctx: { sql: Sql; now: Date }, limit = FINISH_SWEEP_LIMIT): Promise<{ finished: number }> {
  return ctx.sql.transaction(async (tx) => {
    const rows = await tx.query<SweptRow>(SWEEP, [limit, ctx.now]);
    let finished = 0;
    for (const row of rows) {
      const reason = finishReason(row, ctx.now);
      if (reason && (await finishCampaign(tx, row.operator_id, row.id, reason, ctx.now))) finished++;
    }
    return { finished };
  });
}
