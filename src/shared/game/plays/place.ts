import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import { amountRefusal, rgRefusal, sessionRefusal, type BetRejectReason } from '../../domain/bet-rules.js';
import type { BetTicket } from '../../platform/queues.js';
import { SNAPSHOT_COLUMNS_SQL, configSnapshot, snapshotValues, type ConfigSnapshot } from '../operators/game-config.js';
import type { EngineKey } from '../../domain/engine-key.js';
import { keepCycleConfig } from '../rounds/cycle-config.js';
import { moduleOf } from '../rounds/round-record.js';
import { DAY_MS, recordRgTrips, rgState, rgWindowSql, type TripFacts } from '../bets/rg-window.js';
import { GRANT_FACTS, LOCK_GRANT, grantUsable, type GrantFacts } from '../bets/free-grant.js';
import type { Payer } from '../bets/ticket.js';
import { JURISDICTION_FACTS_SQL, jurisdictionFacts, type JurisdictionColumns } from '../sessions/jurisdiction.js';
import { jurisdictionRefusal } from '../../domain/jurisdictions.js';
import { InvalidBetError, type AnyGameModule, type InstantRounds, type StakeTerms } from '../../domain/games/types.js';

// An instant play's placement (D41), on the realtime node: the rules that need no wallet, then
// the play's own cycle (one round, no clock: its configuration's snapshot, contract 8.6, and the
// month of its bet and round, D36) and its bet row (PENDING), in one transaction that holds the
// session's row. The debit then goes the way every bet's does (bets/debit.ts: the audit row
// first, 7.1's classification, acceptance creating the round in ROLLING), and the outcome is
// derived once the debit is accepted (resolve.ts).
//
// One round at a time per session, and minRoundMs between two plays (D41): the session's row
// names its last play and when it was placed. The row is locked first and the facts read after
// (a fresh snapshot under READ COMMITTED), so that of two plays of a session at the same moment
// the second sees the first's bet, committed, and is refused.

// D42: a free play names the grant it spends (freeBetGrantId) and no stake of its own: its
// amountMicro is then 0 here, and its stake and whether it buys the feature are its campaign's
// engine: the session's operator, game and currency, when the caller knows them (the realtime
// node does, from the session's standing at the handshake); read from the session otherwise
export type PlayRequest = {
  sessionId: string;
  amountMicro: bigint;
  featureBuy: boolean;
  clientBetId?: string;
  freeBetGrantId?: string;
  payer?: Payer;
  engine?: EngineKey;
};

export type PlayPlaced = { ok: true; ticket: BetTicket } | { ok: false; reason: BetRejectReason };

// the session's game, whose configuration the play is priced under
const SESSION_GAME = statement('play_session_game', `SELECT operator_id, game_code, currency FROM sessions WHERE id = $1`);

// the session's row, held by a placement that reads and writes its last bet (D41, D44)
export const LOCK_SESSION = statement('play_lock_session', `SELECT id FROM sessions WHERE id = $1 FOR UPDATE`);

// The session, the state of its last play's bet (PENDING or ACCEPTED: still in play), and the
// player's last 24 hours for a session with limits (8.3)
const PLAY_FACTS = statement(
  'play_facts',
  `SELECT s.id AS session_id, s.state, s.expires_at, s.created_at, s.operator_id, s.player_ref, s.game_code, s.currency, s.mode,
          s.daily_loss_micro, s.daily_wager_micro, s.session_time_seconds, ${JURISDICTION_FACTS_SQL},
          (SELECT b.status FROM bets b WHERE b.id = s.last_play_bet_id AND b.cycle_created_at = s.last_play_cycle_created_at) AS last_status,
          rg.lost, rg.wagered
   FROM sessions s LEFT JOIN LATERAL (${rgWindowSql('s', '$2')}) rg ON true
   WHERE s.id = $1`,
);

type PlayFacts = TripFacts &
  JurisdictionColumns & {
    state: 'ACTIVE' | 'TERMINATED' | 'EXPIRED';
    expires_at: Date;
    game_code: string;
    currency: string;
    last_status: string | null;
  };

// the engine row its cycles name (a foreign key); an instant game's engine never runs a clock
const ENSURE_ENGINE = statement(
  'play_engine',
  `INSERT INTO engines (operator_id, game_code, currency, running, updated_at) VALUES ($1, $2, $3, false, now()) ON CONFLICT DO NOTHING`,
);

// the play's cycle, in ROLLING from the start (acceptance joins a round to a cycle in BETTING_OPEN
// or ROLLING), its bet, and the session's last play
const INSERT_PLAY = statement(
  'play_insert',
  `WITH cycle AS (
     INSERT INTO cycles (id, operator_id, game_code, currency, number, instant, phase, ${SNAPSHOT_COLUMNS_SQL}, created_at)
     VALUES ($1, $2, $3, $4, NULL, true, 'ROLLING', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::payout_rounding, $16::jsonb, $17)
     RETURNING id, created_at
   ),
   bet AS (
     INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, feature_buy, amount_micro,
                       status, bet_transaction_uuid, client_bet_id, demo, debit_node, cycle_created_at, is_free, free_bet_grant_id)
     SELECT $18, $2, $19, cycle.id, $20, $21, $3, $4, NULL, $22, $23, 'PENDING', $24, $25, $26, $27, cycle.created_at,
            $28::uuid IS NOT NULL, $28::uuid
     FROM cycle
     RETURNING id
   )
   UPDATE sessions SET last_play_at = $17, last_play_bet_id = (SELECT id FROM bet), last_play_cycle_created_at = $17 WHERE id = $19`,
);

export type InstantModule = AnyGameModule & { kind: 'instant'; instant: InstantRounds<StakeTerms, unknown, unknown> };

// the module of an instant game; another game's session plays with place_bet, never play
export function instantModule(gameCode: string): InstantModule | undefined {
  const module = moduleOf(gameCode, `game ${gameCode}`);
  return module.kind === 'instant' ? (module as InstantModule) : undefined;
}

// The configuration a play is priced under is snapshotted into its cycle (contract 8.6). A
// process reads an engine's configuration at most once a SNAPSHOT_TTL_MS, not once a play: a
// change reaches every play placed that long after it, as a shared game's reaches its next
// cycle. The engine row its cycles name is made once per process.
const SNAPSHOT_TTL_MS = 1000;
const snapshots = new Map<string, { at: number; snapshot: Promise<ConfigSnapshot> }>();
const ensuredEngines = new Set<string>();

function currentSnapshot(svc: Pick<ServiceContext, 'db'>, engine: EngineKey): Promise<ConfigSnapshot> {
  const key = `${engine.operatorId}\u0000${engine.gameCode}\u0000${engine.currency}`;
  const now = Date.now();
  const kept = snapshots.get(key);
  if (kept && now - kept.at < SNAPSHOT_TTL_MS) return kept.snapshot;
  const snapshot = configSnapshot(svc.db, engine.operatorId, engine.gameCode, engine.currency);
  snapshots.set(key, { at: now, snapshot });
  snapshot.catch(() => snapshots.delete(key));
  if (snapshots.size > 10_000) snapshots.delete(snapshots.keys().next().value!);
  return snapshot;
}

async function ensureEngineRow(svc: Pick<ServiceContext, 'sql'>, engine: EngineKey): Promise<void> {
  const key = `${engine.operatorId}\u0000${engine.gameCode}\u0000${engine.currency}`;
  if (ensuredEngines.has(key)) return;
  await svc.sql.query(ENSURE_ENGINE, [engine.operatorId, engine.gameCode, engine.currency]);
  ensuredEngines.add(key);
}

// debitNode: the node that debits the play itself (bets/debit.ts LocalDebits); null through
// the bet queue
export async function placePlay(svc: Pick<ServiceContext, 'sql' | 'db' | 'now'>, request: PlayRequest, debitNode: string | null): Promise<PlayPlaced> {
  const now = svc.now();
  const engine = request.engine ?? (await sessionEngine(svc, request.sessionId));
  if (!engine) return { ok: false, reason: 'session_not_found' };
  const module = instantModule(engine.gameCode);
  if (!module) return { ok: false, reason: 'invalid_payload' };
  // contract 8.6: the configuration the play is priced under, snapshotted into its cycle
  const snapshot = await currentSnapshot(svc, engine);
  const { config } = snapshot;
  // the play's cycle takes its bet's id: a cycle of one bet, found from it (and it from the
  // cycle, sweep.ts) by primary key
  const betId = randomUUID();
  const ids = { cycleId: betId, betId, roundId: randomUUID(), betTransactionUuid: randomUUID() };
  await ensureEngineRow(svc, engine);

  let refused: { facts: PlayFacts; reason: BetRejectReason; costMicro: bigint } | undefined;
  const placed = await svc.sql.transaction(async (tx): Promise<PlayPlaced> => {
    await tx.query(LOCK_SESSION, [request.sessionId]);
    // D42: the grant's row is locked as a free bet's is (bets/place.ts), then read
    let grant: GrantFacts | undefined;
    if (request.freeBetGrantId !== undefined) {
      await tx.query(LOCK_GRANT, [request.freeBetGrantId]);
      [grant] = await tx.query<GrantFacts>(GRANT_FACTS, [request.freeBetGrantId]);
    }
    const [facts] = await tx.query<PlayFacts>(PLAY_FACTS, [request.sessionId, new Date(now.getTime() - DAY_MS)]);
    if (!facts) return { ok: false, reason: 'session_not_found' };
    // the engine named by the caller is the session's (a session's game never changes)
    if (facts.operator_id !== engine.operatorId || facts.game_code !== engine.gameCode || facts.currency !== engine.currency) {
      return { ok: false, reason: 'invalid_payload' };
    }
    const terms = playTerms(module, request, grant, facts, config, now);
    if (!terms.ok) {
      refused = { facts: facts, reason: terms.reason, costMicro: 0n };
      return terms;
    }
    const { bet, stakeMicro, featureBuy } = terms;
    const cost = module.instant.costMicro(stakeMicro, bet, config);
    // D42: a free play's debit carries the grant's stake (isFree), whatever feature it buys;
    // the jackpot is fed on the play's price as for any play
    const debit = grant ? stakeMicro : cost;
    // 8.3: a free play's stake counts 0 (D42)
    const reason = refuse(facts, stakeMicro, debit, grant ? 0n : cost, config, module.instant.minRoundMs(config), now);
    if (reason) {
      refused = { facts: facts, reason, costMicro: grant ? 0n : cost };
      return { ok: false, reason };
    }
    const demo = facts.mode === 'DEMO';
    await tx.query(INSERT_PLAY, [
      ids.cycleId,
      engine.operatorId,
      engine.gameCode,
      engine.currency,
      ...snapshotValues(snapshot),
      now,
      ids.betId,
      request.sessionId,
      ids.roundId,
      facts.player_ref,
      featureBuy,
      debit,
      ids.betTransactionUuid,
      request.clientBetId ?? null,
      demo,
      debitNode,
      request.freeBetGrantId ?? null,
    ]);
    return {
      ok: true,
      ticket: {
        ...ids,
        sessionId: request.sessionId,
        cycleCreatedAt: now.toISOString(),
        operatorId: engine.operatorId,
        playerRef: facts.player_ref,
        gameCode: engine.gameCode,
        currency: engine.currency,
        side: null,
        autoCashOutCents: null,
        amountMicro: debit.toString(),
        isFree: grant !== undefined,
        ...(grant ? { bonusRef: grant.campaign_ref } : {}),
        demo,
        ...(request.clientBetId ? { clientBetId: request.clientBetId } : {}),
        featureBuy,
        // D41: a demo play feeds no pool
        ...(demo ? {} : { jackpotContributionMicro: module.instant.jackpotContributionMicro(cost, config).toString() }),
      },
    };
  });
  // the process that placed the play derives it, priced under this snapshot (resolve.ts)
  if (placed.ok) keepCycleConfig(ids.cycleId, config);
  // D31: a limit the play tripped is reported as a bet's is
  if (refused) await recordRgTrips(svc, [{ amountMicro: refused.costMicro }], [refused.facts], [{ ok: false, reason: refused.reason }], now);
  return placed;
}

// The play's stake and bet: the player's (a bought feature where the configuration allows it),
// or a free play's campaign's (D42: its stake, and whether it buys the feature; never a demo
// session's, and only the session's own grant, usable now, with a round left)
function playTerms(
  module: InstantModule,
  request: PlayRequest,
  grant: GrantFacts | undefined,
  facts: PlayFacts,
  config: StakeTerms,
  now: Date,
): { ok: true; bet: unknown; stakeMicro: bigint; featureBuy: boolean } | { ok: false; reason: BetRejectReason } {
  if (request.freeBetGrantId !== undefined && (!grant || !grantUsable(grant, facts, now))) return { ok: false, reason: 'free_bet_unavailable' };
  const featureBuy = grant ? grant.feature_buy : request.featureBuy;
  try {
    const bet = module.bet.parse({ featureBuy }, config);
    return { ok: true, bet, stakeMicro: grant ? grant.stake_micro : request.amountMicro, featureBuy };
  } catch (err) {
    // a campaign of bought features, once the operator has switched feature buy off, gives
    // nothing more to play
    if (err instanceof InvalidBetError) return { ok: false, reason: grant ? 'free_bet_unavailable' : 'invalid_payload' };
    throw err;
  }
}

// the session's operator, game and currency, read
async function sessionEngine(svc: Pick<ServiceContext, 'sql'>, sessionId: string): Promise<EngineKey | undefined> {
  const [row] = await svc.sql.query<{ operator_id: string; game_code: string; currency: string }>(SESSION_GAME, [sessionId]);
  return row && { operatorId: row.operator_id, gameCode: row.game_code, currency: row.currency };
}

// 8.2 rule 1, then the session's previous play (D41: one round at a time, rule 4's analogue),
// the jurisdiction's (D44: a reality check due; minRoundMs, the game's or the profile's,
// whichever is longer; the most a play may debit), the stake (rule 3: its bounds and step apply
// to the stake, whatever a bought feature makes the debit), then 8.3 with what the play costs
// the player (`costMicro`, 0 for a free play; `debitMicro`: what the debit carries)
function refuse(
  facts: PlayFacts,
  stakeMicro: bigint,
  debitMicro: bigint,
  costMicro: bigint,
  config: StakeTerms,
  minRoundMs: number,
  now: Date,
): BetRejectReason | undefined {
  const refusal = sessionRefusal({ state: facts.state, expiresAt: facts.expires_at }, now);
  if (refusal) return refusal;
  if (facts.last_status === 'PENDING' || facts.last_status === 'ACCEPTED') return 'already_bet_this_round';
  const ruled = jurisdictionRefusal(jurisdictionFacts(facts, Math.max(minRoundMs, facts.min_round_ms)), debitMicro, now);
  if (ruled) return ruled;
  const outOfRange = amountRefusal(stakeMicro, config);
  if (outOfRange) return outOfRange;
  const rg = rgState(facts);
  return rg ? rgRefusal(rg, costMicro, now) : undefined;
}
