import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { DEFERRED_FLUSH, deferredFlushUnless, statement } from '../../platform/db/sql.js';
import { prepareCall, type AuditedDebit, type PreparedCall } from '../../wallet/client.js';
import { debitAuditRowsSql, walletTargetSql, type WalletTargetRow } from '../../wallet/audit.js';
import { amountRefusal, rgRefusal, sessionRefusal, type BetRejectReason } from '../../domain/bet-rules.js';
import { debitCall, type Payer } from './ticket.js';
import { DAY_MS, recordRgTrips, rgState, rgWindowSql } from './rg-window.js';
import type { BetColumns } from '../../domain/games/types.js';
import type { BetTicket } from '../../platform/queues.js';
import { Batcher, HOT_PATH_BATCH } from '../../platform/batch.js';
import { betStep } from '../../platform/bet-steps.js';
import { epochMs } from '../../platform/clock.js';
import { rejectWithRollback, type BetAck, type LocalDebits } from './debit.js';
import { GRANT_FACTS, LOCK_GRANT, grantUsable, type GrantFacts } from './free-grant.js';
import { LOCK_SESSION, placePlay, type PlayRequest } from '../plays/place.js';
import { JURISDICTION_FACTS_SQL, jurisdictionFacts, type JurisdictionColumns } from '../sessions/jurisdiction.js';
import { jurisdictionRefusal } from '../../domain/jurisdictions.js';

// Placing a bet (contract 8.2, 8.3, D1, D14), on the realtime node: every rule that needs no
// wallet, then the bet row (status PENDING), whose partial unique index allows one live bet
// per session per cycle (rule 4). What the bet worker needs for the debit travels with the
// job as a ticket, so it does not read the row again. The bets placed at the same moment
// are placed together: those that every rule plainly allows by one insert, the
// others by one read, the rules, and one insert.
//
// The bet row is committed without waiting for the disk (DEFERRED_FLUSH): no money moves
// and the player is told nothing until the bet's next commit (the debit's audit row,
// contract 2.13, or a demo bet's acceptance), which waits for the disk and so makes the bet
// row durable too. A crash in between loses a bet that nothing was done for (its job finds
// no bet, and the player is answered wallet_timeout). One disk flush less per bet.
//
// Where the placing node debits its bets itself (debitNode, debit.ts), the common
// case writes each real-money bet's debit audit row (2.13) in the same statement as the bet
// row, and that statement waits for the disk: one statement and one commit less per bet
// than writing the audit row when the debit starts.

// A bet's own parameters, as their columns hold them (its game's module fills them, D39)
export type { BetColumns, Payer };

// D42: a free bet names the grant it spends (freeBetGrantId) and no stake of its own: its
// amountMicro is then 0 here and becomes the campaign's stake when it is placed
export type PlaceBetRequest = BetColumns & { amountMicro: bigint; clientBetId?: string; freeBetGrantId?: string };

// D40: the most an auto cash-out may name in a cycle, its snapshot's maxMultiplier (written
// with two decimals: "1000.00" is 100000 cents); a game without one, none
const CYCLE_MAX_CENTS = `COALESCE(replace(c.params->>'maxMultiplier', '.', '')::bigint, 100000)`;

// audited: the debit's audit row, written with the bet row (debitNode and payer given)
export type Placed = { ok: true; ticket: BetTicket; audited?: AuditedDebit } | { ok: false; reason: BetRejectReason };


// The session of each bet, its engine's current cycle, and (only for a session with
// responsible-gambling limits) the player's stakes of the last 24 hours, D14: lost stakes
// are settled losing bets plus bets not yet settled. SUM(bigint) is NUMERIC, read as text.
const FACTS = statement(
  'placement_facts',
  `SELECT s.id AS session_id, s.state, s.expires_at, s.created_at, s.operator_id, s.player_ref, s.game_code, s.currency,
          s.mode, s.daily_loss_micro, s.daily_wager_micro, s.session_time_seconds,
          c.id AS cycle_id, c.created_at AS cycle_created_at, c.phase, c.phase_ends_at, c.min_bet_micro, c.max_bet_micro, c.stake_step_micro,
          ${CYCLE_MAX_CENTS} AS max_cash_out_cents, rg.lost, rg.wagered,
          ${JURISDICTION_FACTS_SQL}
   FROM unnest($1::uuid[]) WITH ORDINALITY AS u(session_id, n)
   LEFT JOIN sessions s ON s.id = u.session_id
   LEFT JOIN engines e ON e.operator_id = s.operator_id AND e.game_code = s.game_code AND e.currency = s.currency
   LEFT JOIN cycles c ON c.id = e.current_cycle_id
   LEFT JOIN LATERAL (${rgWindowSql('s', '$2')}) rg ON true
   ORDER BY u.n`,
);

type Facts = {
  session_id: string | null;
  state: 'ACTIVE' | 'TERMINATED' | 'EXPIRED' | null;
  expires_at: Date | null;
  created_at: Date;
  operator_id: string;
  player_ref: string;
  game_code: string;
  currency: string;
  mode: 'REAL' | 'DEMO';
  daily_loss_micro: bigint | null;
  daily_wager_micro: bigint | null;
  session_time_seconds: number | null;
  cycle_id: string | null;
  cycle_created_at: Date | null;
  phase: string | null;
  phase_ends_at: Date | null;
  min_bet_micro: bigint;
  max_bet_micro: bigint;
  stake_step_micro: bigint;
  max_cash_out_cents: bigint;
  lost: string;
  wagered: string;
} & JurisdictionColumns;

// 8.2 rule 4 as the index bets_one_live_per_session_cycle words it: a second live bet of the
// session in the cycle is not written (REJECTED attempts do not count). D36: a bet's month
// (its partition) is its cycle's start, cycle_created_at, which the cycle determines, so
// the rule holds whichever month the second attempt comes in.
const INSERT_BETS = statement(
  'placement_insert',
  `WITH ${DEFERRED_FLUSH}
   INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, auto_cash_out_cents,
                     amount_micro, status, bet_transaction_uuid, client_bet_id, demo, debit_node, cycle_created_at, is_free, free_bet_grant_id)
   SELECT u.id, u.operator_id, u.session_id, u.cycle_id, u.round_id, u.player_ref, u.game_code, u.currency, u.side, u.auto_cash_out_cents,
          u.amount_micro, 'PENDING', u.bet_transaction_uuid, u.client_bet_id, u.demo, $14::text, c.created_at, u.free_bet_grant_id IS NOT NULL,
          u.free_bet_grant_id
   FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::text[],
               $10::bigint[], $11::uuid[], $12::text[], $13::bool[], $15::bigint[], $16::uuid[])
     AS u(id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, amount_micro,
          bet_transaction_uuid, client_bet_id, demo, auto_cash_out_cents, free_bet_grant_id)
   JOIN cycles c ON c.id = u.cycle_id
   CROSS JOIN deferred_flush
   ON CONFLICT (session_id, cycle_id, cycle_created_at) WHERE status <> 'REJECTED' DO NOTHING
   RETURNING id`,
);

// payer: given by a realtime node for a real-money session, so that the debit's request can
// be prepared before the bet row is written
export type Placement = PlaceBetRequest & { sessionId: string; payer?: Payer };

// The common case in one statement: a bet of an active session without responsible-gambling
// limits or a jurisdiction profile that refuses bets (D44), in an open betting window, with a
// stake in range, is written at once. These conditions are a strict subset of what refuse()
// allows, so a bet written here is one it would have written too; every bet not written here
// (a refusal, a conflict with rule 4, a session with limits or such a profile) is placed by
// placeCarefully(), which also says why it was refused.
//
// The debit's audit row is written for a bet whose prepared request (built from the payer
// the token names) names the operator, player, currency and game the bet row has, and only
// for real money; with it, what the debit needs of the operator's wallet is read. A batch
// that may write audit rows waits for the disk (contract 2.13: the row is durable before
// the call); one that cannot, defers its flush as the bet rows alone may.
const PLACE_PLAIN = statement(
  'placement_plain',
  `WITH ${deferredFlushUnless('$10::bool')},
   u AS (
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::bigint[], $7::text[], $11::uuid[], $12::uuid[],
                          $13::text[], $14::bigint[])
       AS u(id, session_id, round_id, bet_transaction_uuid, side, amount_micro, client_bet_id, audit_id, request_uuid, request_body,
            auto_cash_out_cents)
   ),
   placed AS (
     INSERT INTO bets (id, operator_id, session_id, cycle_id, round_id, player_ref, game_code, currency, side, auto_cash_out_cents,
                       amount_micro, status, bet_transaction_uuid, client_bet_id, demo, debit_node, cycle_created_at)
     SELECT u.id, s.operator_id, s.id, c.id, u.round_id, s.player_ref, s.game_code, s.currency, u.side, u.auto_cash_out_cents,
            u.amount_micro, 'PENDING', u.bet_transaction_uuid, u.client_bet_id, s.mode = 'DEMO', $9::text, c.created_at
     FROM u
     CROSS JOIN deferred_flush
     JOIN sessions s ON s.id = u.session_id AND s.state = 'ACTIVE' AND s.expires_at > $8
       AND s.daily_loss_micro IS NULL AND s.daily_wager_micro IS NULL AND s.session_time_seconds IS NULL AND NOT s.jurisdiction_binds
     JOIN engines e ON e.operator_id = s.operator_id AND e.game_code = s.game_code AND e.currency = s.currency
     JOIN cycles c ON c.id = e.current_cycle_id AND c.phase = 'BETTING_OPEN' AND (c.phase_ends_at IS NULL OR c.phase_ends_at > $8)
       AND u.amount_micro > 0 AND u.amount_micro BETWEEN c.min_bet_micro AND c.max_bet_micro AND u.amount_micro % c.stake_step_micro = 0
       AND (u.auto_cash_out_cents IS NULL OR u.auto_cash_out_cents <= ${CYCLE_MAX_CENTS})
     ON CONFLICT (session_id, cycle_id, cycle_created_at) WHERE status <> 'REJECTED' DO NOTHING
     RETURNING id, cycle_id, cycle_created_at, operator_id, player_ref, game_code, currency, demo
   ),
   debit AS (
     SELECT u.audit_id AS id, placed.operator_id, u.session_id, u.request_uuid, u.bet_transaction_uuid, u.request_body, placed.id AS bet_id,
            $8::timestamptz AS at
     FROM placed JOIN u ON u.id = placed.id
     WHERE NOT placed.demo
       AND u.request_body::jsonb @> jsonb_build_object('operatorId', placed.operator_id, 'playerRef', placed.player_ref,
                                                       'currency', placed.currency, 'gameCode', placed.game_code)
   ),
   target AS (${walletTargetSql('debit')}),
   audit AS (${debitAuditRowsSql('debit', 'target')})
   SELECT placed.*, target.wallet_url, target.wallet_url_private_allowed, target.kid, target.encrypted_secret, target.wrapped_data_key,
          audit.created_at AS audit_created_at
   FROM placed LEFT JOIN debit ON debit.bet_id = placed.id LEFT JOIN target ON target.id = debit.id LEFT JOIN audit ON audit.id = debit.id`,
);

type Written = {
  id: string;
  cycle_id: string;
  cycle_created_at: Date;
  operator_id: string;
  player_ref: string;
  game_code: string;
  currency: string;
  demo: boolean;
} & ((WalletTargetRow & { audit_created_at: Date }) | { [K in keyof WalletTargetRow | 'audit_created_at']: null });


// debitNode: the node that debits these bets itself (debit.ts); none when they go
// to the bet queue
export async function placeBets(svc: Pick<ServiceContext, 'sql' | 'now' | 'logger'>, placements: Placement[], debitNode: string | null = null): Promise<Placed[]> {
  // D42: a free bet is placed on its own, under its grant's lock (placeLocked); the others as before
  if (placements.some((p) => p.freeBetGrantId !== undefined)) return placeMixed(svc, placements, debitNode);
  const now = svc.now();
  const ids = placements.map(freshIds);
  const debits = placements.map((placement, i) => (debitNode && placement.payer ? prepareDebit(placement, placement.payer, ids[i]!) : null));
  const written = new Map(
    (
      await svc.sql.query<Written>(PLACE_PLAIN, [
        ids.map((i) => i.betId),
        placements.map((p) => p.sessionId),
        ids.map((i) => i.roundId),
        ids.map((i) => i.betTransactionUuid),
        placements.map((p) => p.side),
        placements.map((p) => p.amountMicro),
        placements.map((p) => p.clientBetId ?? null),
        now,
        debitNode,
        debits.some((debit) => debit !== null),
        debits.map((debit) => debit?.auditId ?? null),
        debits.map((debit) => debit?.requestUuid ?? null),
        debits.map((debit) => debit?.bytes ?? null),
        placements.map((p) => p.autoCashOutCents ?? null),
      ])
    ).map((row) => [row.id, row]),
  );
  const rest = placements.filter((_, i) => !written.has(ids[i]!.betId));
  const careful = rest.length > 0 ? await placeRest(svc, rest, now, debitNode, written.size > 0) : [];
  let next = 0;
  return placements.map((placement, i): Placed => {
    const row = written.get(ids[i]!.betId);
    if (!row) return careful[next++]!;
    const ticket = ticketFor(placement, ids[i]!, row);
    if (row.wallet_url === null) return { ok: true, ticket };
    const { wallet_url, wallet_url_private_allowed, kid, encrypted_secret, wrapped_data_key } = row;
    const target = { wallet_url, wallet_url_private_allowed, kid, encrypted_secret, wrapped_data_key };
    return { ok: true, ticket, audited: { ...debits[i]!, target, auditCreatedAt: row.audit_created_at } };
  });
}

// the debit's request as the bet row will have it, if the session is the payer's
const prepareDebit = (placement: Placement, payer: Payer, ids: ReturnType<typeof freshIds>): PreparedCall =>
  prepareCall(debitCall({ ...payer, ...ids, sessionId: placement.sessionId, amountMicro: placement.amountMicro.toString(), isFree: false }));

// a bet's own ids: its row, its round-to-be (sent to the wallet, 2.6) and its debit
const freshIds = () => ({ betId: randomUUID(), roundId: randomUUID(), betTransactionUuid: randomUUID() });

const ticketFor = (
  placement: Placement,
  ids: Pick<BetTicket, 'betId' | 'roundId' | 'betTransactionUuid'>,
  bet: Pick<Written, 'cycle_id' | 'cycle_created_at' | 'operator_id' | 'player_ref' | 'game_code' | 'currency' | 'demo'>,
  free?: { stakeMicro: bigint; campaignRef: string },
): BetTicket => ({
  ...ids,
  sessionId: placement.sessionId,
  cycleId: bet.cycle_id,
  cycleCreatedAt: bet.cycle_created_at.toISOString(),
  operatorId: bet.operator_id,
  playerRef: bet.player_ref,
  gameCode: bet.game_code,
  currency: bet.currency,
  side: placement.side,
  autoCashOutCents: placement.autoCashOutCents?.toString() ?? null,
  amountMicro: (free ? free.stakeMicro : placement.amountMicro).toString(),
  isFree: free !== undefined,
  ...(free ? { bonusRef: free.campaignRef } : {}),
  demo: bet.demo,
  ...(placement.clientBetId ? { clientBetId: placement.clientBetId } : {}),
});

// The bets not placed by the common case. A failure before anything was written is thrown:
// the caller's batcher runs the placements again in smaller parts (batch.ts, D24). Once the
// common case wrote bets, those are placed and must be answered as such, so a failure here
// is isolated here: each remaining bet is placed on its own, and one that still fails is
// refused as intake refuses a bet while a dependency fails (D28).
async function placeRest(
  svc: Pick<ServiceContext, 'sql' | 'logger'>,
  rest: Placement[],
  now: Date,
  debitNode: string | null,
  wroteSome: boolean,
): Promise<Placed[]> {
  try {
    return await placeCarefully(svc, rest, now, debitNode);
  } catch (err) {
    if (!wroteSome) throw err;
    return Promise.all(
      rest.map(async (placement): Promise<Placed> => {
        try {
          return (await placeCarefully(svc, [placement], now, debitNode))[0]!;
        } catch (one) {
          svc.logger.warn({ err: (one as Error).message, sessionId: placement.sessionId }, 'bet could not be placed');
          return { ok: false, reason: 'service_unavailable' };
        }
      }),
    );
  }
}

// INSERT_BETS's parameters for these tickets: a column's values each, in the statement's
// order; `grantId`, the grant a free bet spends (D42), for tickets of one free bet
const insertedBets = (tickets: BetTicket[], debitNode: string | null, grantId: string | null = null) => [
  tickets.map((t) => t.betId),
  tickets.map((t) => t.operatorId),
  tickets.map((t) => t.sessionId),
  tickets.map((t) => t.cycleId),
  tickets.map((t) => t.roundId),
  tickets.map((t) => t.playerRef),
  tickets.map((t) => t.gameCode),
  tickets.map((t) => t.currency),
  tickets.map((t) => t.side),
  tickets.map((t) => t.amountMicro),
  tickets.map((t) => t.betTransactionUuid),
  tickets.map((t) => t.clientBetId ?? null),
  tickets.map((t) => t.demo),
  debitNode,
  tickets.map((t) => t.autoCashOutCents),
  tickets.map(() => grantId),
];

// every rule in order, on what one read finds; a bet of a session with a least time between
// bets (D44) is placed under the session's lock instead (placeLocked)
async function placeCarefully(svc: Pick<ServiceContext, 'sql'>, placements: Placement[], now: Date, debitNode: string | null): Promise<Placed[]> {
  const facts = await svc.sql.query<Facts>(FACTS, [placements.map((p) => p.sessionId), new Date(now.getTime() - DAY_MS)]);
  const here = placements.flatMap((placement, i) => (facts[i]!.min_round_ms > 0 ? [] : [{ placement, fact: facts[i]! }]));
  const verdicts = here.map(({ placement, fact }): Placed => {
    const refusal = refuse(placement, fact, now);
    if (refusal) return { ok: false, reason: refusal };
    return { ok: true, ticket: ticketFor(placement, freshIds(), { ...fact, cycle_id: fact.cycle_id!, cycle_created_at: fact.cycle_created_at!, demo: fact.mode === 'DEMO' }) };
  });
  await recordRgTrips(svc, here.map((h) => h.placement), here.map((h) => h.fact), verdicts, now);
  const tickets = verdicts.flatMap((v) => (v.ok ? [v.ticket] : []));
  const written = new Set(
    tickets.length === 0 ? [] : (await svc.sql.query<{ id: string }>(INSERT_BETS, insertedBets(tickets, debitNode))).map((row) => row.id),
  );
  // 8.2 rule 4
  const placedHere = new Map(
    here.map(({ placement }, i): [Placement, Placed] => {
      const v = verdicts[i]!;
      return [placement, v.ok && !written.has(v.ticket.betId) ? { ok: false, reason: 'already_bet_this_round' } : v];
    }),
  );
  return Promise.all(placements.map((placement) => placedHere.get(placement) ?? placeLocked(svc, placement, now, debitNode)));
}

// 8.2 rules 1 and 2, the jurisdiction's (D44), then 8.2 rules 3 and 5, in that order
function refuse(placement: Placement, fact: Facts, now: Date): BetRejectReason | undefined {
  const session = fact.session_id === null ? null : { state: fact.state!, expiresAt: fact.expires_at! };
  const refusal = sessionRefusal(session, now);
  if (refusal) return refusal;
  if (fact.cycle_id === null || fact.phase !== 'BETTING_OPEN' || (fact.phase_ends_at !== null && fact.phase_ends_at <= now)) {
    return 'phase_not_open';
  }
  const ruled = jurisdictionRefusal(jurisdictionFacts(fact), placement.amountMicro, now);
  if (ruled) return ruled;
  const outOfRange = amountRefusal(placement.amountMicro, {
    minBetMicro: fact.min_bet_micro,
    maxBetMicro: fact.max_bet_micro,
    stakeStepMicro: fact.stake_step_micro,
  });
  if (outOfRange) return outOfRange;
  // D40: an auto cash-out above the cycle's maxMultiplier
  if (placement.autoCashOutCents != null && placement.autoCashOutCents > fact.max_cash_out_cents) return 'invalid_payload';
  const rg = rgState(fact);
  return rg ? rgRefusal(rg, placement.amountMicro, now) : undefined;
}

// ---- free bets (D42) -----------------------------------------------------------------------

// A batch with free bets: the paid bets as any batch, each free bet in a transaction of its
// own. A free bet's failure once other bets of the batch were written is isolated as
// placeRest isolates one (D28).
async function placeMixed(svc: Pick<ServiceContext, 'sql' | 'now' | 'logger'>, placements: Placement[], debitNode: string | null): Promise<Placed[]> {
  const paid = placements.filter((p) => p.freeBetGrantId === undefined);
  const paidPlaced = paid.length > 0 ? await placeBets(svc, paid, debitNode) : [];
  const alone = placements.length === 1;
  const freePlaced = await Promise.all(
    placements
      .filter((p) => p.freeBetGrantId !== undefined)
      .map(async (placement): Promise<Placed> => {
        try {
          return await placeLocked(svc, placement, svc.now(), debitNode);
        } catch (err) {
          if (alone) throw err;
          svc.logger.warn({ err: (err as Error).message, sessionId: placement.sessionId }, 'free bet could not be placed');
          return { ok: false, reason: 'service_unavailable' };
        }
      }),
  );
  let nextPaid = 0;
  let nextFree = 0;
  return placements.map((p) => (p.freeBetGrantId === undefined ? paidPlaced[nextPaid++]! : freePlaced[nextFree++]!));
}


// A bet placed on its own, in one transaction that holds the session's row (its previous
// bet's time is read and written under it, D44) and, for a free bet, its grant's row (D42), in
// that order, as an instant play's placement does: the facts read, the rules, the bet row, and
// the session's last bet time where its profile spaces bets. A free bet's row has is_free, the
// campaign's stake and its grant; the stake's bounds were the campaign's to check (D42), and
// the responsible-gambling limits count a free bet as 0 (8.3).
async function placeLocked(svc: Pick<ServiceContext, 'sql'>, placement: Placement, now: Date, debitNode: string | null): Promise<Placed> {
  const grantId = placement.freeBetGrantId;
  let refused: { fact: Facts; verdict: Placed } | undefined;
  const placed = await svc.sql.transaction(async (tx): Promise<Placed> => {
    await tx.query(LOCK_SESSION, [placement.sessionId]);
    let grant: GrantFacts | undefined;
    if (grantId !== undefined) {
      await tx.query(LOCK_GRANT, [grantId]);
      [grant] = await tx.query<GrantFacts>(GRANT_FACTS, [grantId]);
    }
    const [fact] = await tx.query<Facts>(FACTS, [[placement.sessionId], new Date(now.getTime() - DAY_MS)]);
    const refusal = grantId === undefined ? refuse(placement, fact!, now) : refuseFree(placement, fact!, grant, now);
    if (refusal) {
      refused = { fact: fact!, verdict: { ok: false, reason: refusal } };
      return refused.verdict;
    }
    const free = grant && { stakeMicro: grant.stake_micro, campaignRef: grant.campaign_ref };
    const ticket = ticketFor(placement, freshIds(), { ...fact!, cycle_id: fact!.cycle_id!, cycle_created_at: fact!.cycle_created_at!, demo: fact!.mode === 'DEMO' }, free);
    const written = await tx.query<{ id: string }>(INSERT_BETS, insertedBets([ticket], debitNode, grantId ?? null));
    // 8.2 rule 4
    if (written.length !== 1) return { ok: false, reason: 'already_bet_this_round' };
    if (fact!.min_round_ms > 0) await tx.query(NOTE_BET_TIME, [placement.sessionId, now]);
    return { ok: true, ticket };
  });
  // D31: a limit the bet tripped is reported as any bet's is (a free bet's stake counts 0, so
  // only the session's time: its placement's amountMicro is 0)
  if (refused) await recordRgTrips(svc, [placement], [refused.fact], [refused.verdict], now);
  return placed;
}

// D44: the session's last bet, for its profile's least time between bets (an instant play
// keeps it too, with its bet: plays/place.ts)
const NOTE_BET_TIME = statement('placement_note_bet_time', `UPDATE sessions SET last_play_at = $2 WHERE id = $1`);

// 8.2 rules 1 and 2, the grant (D42: the session's own, usable now, with a round left; never
// a demo session's), the jurisdiction's (D44, on the campaign's stake), the bet's parameters
// (D40), then 8.3 with a stake of 0
function refuseFree(placement: Placement, fact: Facts, grant: GrantFacts | undefined, now: Date): BetRejectReason | undefined {
  const session = fact.session_id === null ? null : { state: fact.state!, expiresAt: fact.expires_at! };
  const refusal = sessionRefusal(session, now);
  if (refusal) return refusal;
  if (fact.cycle_id === null || fact.phase !== 'BETTING_OPEN' || (fact.phase_ends_at !== null && fact.phase_ends_at <= now)) {
    return 'phase_not_open';
  }
  if (!grant || !grantUsable(grant, fact, now)) return 'free_bet_unavailable';
  const ruled = jurisdictionRefusal(jurisdictionFacts(fact), grant.stake_micro, now);
  if (ruled) return ruled;
  if (placement.autoCashOutCents != null && placement.autoCashOutCents > fact.max_cash_out_cents) return 'invalid_payload';
  const rg = rgState(fact);
  return rg ? rgRefusal(rg, 0n, now) : undefined;
}

// place_bet on a realtime node (contract 8.2, D4): the bets that players send at the same
// moment are placed together (one read, one insert) and then debited. A node that also runs
// the bet role debits them itself (debit.ts); otherwise they go to the bet
// worker pool as one job, and the pool's verdict on each bet comes back addressed to this
// node. Either way the verdict answers the player's acknowledgement.

export type Intake = { placed: Placed; verdict?: Promise<BetAck> };

// how long a place_bet waits for its bet's verdict: the wallet call's timeout and a margin
export const verdictWaitMs = (config: Pick<ServiceContext['config'], 'walletCallTimeoutMs'>) => config.walletCallTimeoutMs + 10_000;

type Waiting = { resolve: (ack: BetAck) => void; timer: NodeJS.Timeout };

export class BetIntake {
  private readonly waiting = new Map<string, Waiting>();
  private readonly placements: Batcher<Placement, Intake>;
  private readonly listening: boolean;
  private readonly unwatch: () => void;

  // localDebits: this process's own debits, when it also runs the bet role
  constructor(
    private readonly svc: ServiceContext,
    private readonly localDebits?: LocalDebits,
  ) {
    // the pool's verdicts come back through the emitter; this node's own debits answer here
    if (!localDebits) svc.emitter.onVerdict((betId, verdict) => this.answer(betId, verdict));
    this.listening = !localDebits;
    this.placements = new Batcher((batch) => (localDebits ? this.placeAndDebit(batch, localDebits) : this.placeAndQueue(batch)), HOT_PATH_BATCH);
    // D37: bets waiting here for their statement are the node's own delay
    this.unwatch = svc.overload.watch(() => this.placements.oldestWaitMs());
  }

  // D24: a placement that fails on its own (the batcher isolates it) because Postgres
  // refused one of its values is the client's input, answered as the edge would answer it;
  // logged at debug, without a stack trace
  async place(placement: Placement): Promise<Intake> {
    try {
      return await this.placements.add(placement);
    } catch (err) {
      if (!isRefusedValue(err)) throw err;
      this.svc.logger.debug({ sessionId: placement.sessionId, err: (err as Error).message }, 'bet refused: a value Postgres does not take');
      return { placed: { ok: false, reason: 'invalid_payload' } };
    }
  }

  close(): void {
    this.unwatch();
    if (this.listening) this.svc.emitter.onVerdict(undefined);
    for (const [betId, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      this.waiting.delete(betId);
    }
  }

  // D41: an instant play, placed on its own (plays/place.ts), then debited as any bet
  async play(request: PlayRequest): Promise<Intake> {
    try {
      const placed = await placePlay(this.svc, request, this.localDebits?.node ?? null);
      return (this.localDebits ? this.debitHere([placed], this.localDebits) : await this.queue([placed]))[0]!;
    } catch (err) {
      if (!isRefusedValue(err)) throw err;
      this.svc.logger.debug({ sessionId: request.sessionId, err: (err as Error).message }, 'play refused: a value Postgres does not take');
      return { placed: { ok: false, reason: 'invalid_payload' } };
    }
  }

  // the verdict answers as the pool's would, under the same time limit
  private async placeAndDebit(batch: Placement[], localDebits: LocalDebits): Promise<Intake[]> {
    return this.debitHere(await placeBets(this.svc, batch, localDebits.node), localDebits);
  }

  private debitHere(placed: Placed[], localDebits: LocalDebits): Intake[] {
    return placed.map((p) => {
      if (!p.ok) return { placed: p };
      const { betId } = p.ticket;
      const placedAt = epochMs();
      betStep(betId, 'placed', placedAt);
      // the same commit wrote the debit's audit row
      if (p.audited) betStep(betId, 'audited', placedAt);
      const verdict = this.await(betId);
      void localDebits.debit(p.ticket, p.audited).then((ack) => this.answer(betId, ack));
      return { placed: p, verdict };
    });
  }

  private async placeAndQueue(batch: Placement[]): Promise<Intake[]> {
    return this.queue(await placeBets(this.svc, batch));
  }

  private async queue(placed: Placed[]): Promise<Intake[]> {
    const tickets = placed.flatMap((p) => (p.ok ? [p.ticket] : []));
    if (tickets.length === 0) return placed.map((p) => ({ placed: p }));
    for (const ticket of tickets) betStep(ticket.betId, 'placed');
    // waiting before the job exists: a verdict cannot come back before it is awaited
    const verdicts = new Map(tickets.map((ticket) => [ticket.betId, this.await(ticket.betId)]));
    try {
      await this.svc.queues.bet.add('bets', { node: this.svc.emitter.nodeId, tickets }, { jobId: tickets[0]!.betId });
      for (const ticket of tickets) betStep(ticket.betId, 'queued');
    } catch (err) {
      // the queue may have taken it all the same: resolved as uncertain, so that a debit
      // that did happen is rolled back
      this.svc.logger.warn({ bets: tickets.length, err: (err as Error).message }, 'bets could not be queued');
      await Promise.all(tickets.map((ticket) => this.refuseUnqueued(ticket)));
    }
    return placed.map((p) => (p.ok ? { placed: p, verdict: verdicts.get(p.ticket.betId)! } : { placed: p }));
  }

  private async refuseUnqueued(ticket: BetTicket): Promise<void> {
    const ack = await rejectWithRollback(this.svc, ticket, 'service_unavailable', 'uncertain_bet').catch(
      (): BetAck => ({ ok: false, reason: 'service_unavailable' }),
    );
    this.answer(ticket.betId, ack);
  }

  // the pool (or this node's own debit) answers within the wallet timeout; past that and a
  // margin the player is told the debit timed out (the bet itself is resolved by the pool,
  // the node, or recovery)
  private await(betId: string): Promise<BetAck> {
    return new Promise<BetAck>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(betId);
        this.svc.logger.warn({ betId }, 'bet verdict not received in time');
        resolve({ ok: false, reason: 'wallet_timeout' });
      }, verdictWaitMs(this.svc.config));
      this.waiting.set(betId, { resolve, timer });
    });
  }

  private answer(betId: string, ack: BetAck): void {
    const waiting = this.waiting.get(betId);
    if (!waiting) return;
    this.waiting.delete(betId);
    clearTimeout(waiting.timer);
    waiting.resolve(ack);
  }
}

// SQLSTATE class 22, data exception: a value out of range or of the wrong form for its type
const isRefusedValue = (err: unknown): boolean => typeof (err as { code?: unknown } | null)?.code === 'string' && (err as { code: string }).code.startsWith('22');
