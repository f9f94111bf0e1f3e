import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { Batcher, HOT_PATH_BATCH } from '../../platform/batch.js';
import { betStep } from '../../platform/bet-steps.js';
import { centsText } from '../../domain/games/crash.js';
import type { ServiceContext } from '../context.js';
import type { Bet } from '../../platform/db/client.js';
import { keyRange, params, statement } from '../../platform/db/sql.js';
import { endSession } from '../sessions/end.js';
import { WalletTargetError, type AuditedDebit, type WalletAnswer } from '../../wallet/client.js';
import { AUDIT_PARAM_COUNT, auditParams, completeAuditsSql, hasAttempt, type AuditCompletion } from '../../wallet/audit.js';
import { uncertainReason, type BetRejectReason } from '../../domain/bet-rules.js';
import type { BetVerdict } from '../../domain/player-channel.js';
import { debitCall } from './ticket.js';
import { finishedInTime } from '../../platform/shutdown.js';
import type { Redis } from '../../platform/redis.js';
import type { BetJob, BetTicket } from '../../platform/queues.js';
import { enqueueWalletJobs, type RollbackPurpose } from '../wallet-jobs/wallet-jobs.js';
import { rollbackRequest } from '../../wallet/requests.js';
import { tellFreeBetSessions } from '../freebets/usable.js';

// A placed bet, from its debit to ACCEPTED or REJECTED (contract 3.2, 7.1, D1, D8, D13): the
// debit (audit row first, written only while the bet is PENDING), classified by 7.1, then
// acceptance, which creates the round (D1) fenced on the cycle and the session. Acceptances
// that come due together share one transaction, not one per bet. The same desk (BetDesk)
// debits in the bet worker pool (a bet job, workers/registry.ts) and in a process that runs
// both the realtime and the bet role (LocalDebits, below).

// the player channel's verdict on a bet (D4)
export type BetAck = BetVerdict;

// contract 3.2 -> ACCEPTED, in one statement for all the debits that succeeded at the same
// moment, which also completes their audit rows (2.13):
// - the bets (still PENDING: another delivery may have decided one), their sessions and
//   their cycles are locked: the tick that closes the betting window or rolls the cycle
//   waits for this statement (and this one sees its result), so a debit that completes
//   after the roll cannot join it; a session being ended waits likewise;
// - a bet joins its cycle's round only while the cycle is BETTING_OPEN or ROLLING and the
//   session is active ('late' otherwise: the debit is given back), and a demo stake must be
//   covered by the demo balance (D8);
// - the round takes the session's current seed and next nonce (D1, no gaps) and the cycle's
//   weight snapshot; the pending round bet holds the stake; a demo stake leaves the demo
//   balance. A bet whose session has no current seed (rotated meanwhile) is 'late'.
// The outcome per bet: accepted, decided (not PENDING), late, demo_funds_short.
// its parameters, in the order acceptBets gives their values
const A = (() => {
  const p = params();
  return { betIds: p.one(), now: p.one(), audit: p.many(AUDIT_PARAM_COUNT), cycleCreatedAt: p.one(), cyclesFrom: p.one(), cyclesTo: p.one() };
})();

const ACCEPT = statement(
  'bets_accept',
  `WITH input AS (SELECT * FROM unnest(${A.betIds}::uuid[], ${A.cycleCreatedAt}::timestamptz[]) AS u(bet_id, cycle_created_at)),
   audit AS (${completeAuditsSql(A.audit)}),
   bet AS (
     SELECT b.id, b.session_id, b.cycle_id, b.round_id, b.operator_id, b.game_code, b.currency, b.demo, b.amount_micro, b.cycle_created_at
     FROM bets b JOIN input ON input.bet_id = b.id AND input.cycle_created_at = b.cycle_created_at
     WHERE b.status = 'PENDING' AND b.cycle_created_at BETWEEN ${A.cyclesFrom}::timestamptz AND ${A.cyclesTo}::timestamptz
     FOR NO KEY UPDATE OF b
   ),
   cycle AS (SELECT id, phase, low_weight, high_weight FROM cycles WHERE id IN (SELECT cycle_id FROM bet) FOR SHARE),
   session AS (SELECT id, state, demo_balance_micro FROM sessions WHERE id IN (SELECT session_id FROM bet) FOR NO KEY UPDATE),
   decided AS (
     SELECT bet.*, cycle.phase, cycle.low_weight, cycle.high_weight, session.demo_balance_micro,
            CASE
              WHEN cycle.phase NOT IN ('BETTING_OPEN', 'ROLLING') OR session.state <> 'ACTIVE' THEN 'late'
              WHEN bet.demo AND COALESCE(session.demo_balance_micro, 0) < bet.amount_micro THEN 'demo_funds_short'
              ELSE 'accept'
            END AS verdict
     FROM bet JOIN cycle ON cycle.id = bet.cycle_id JOIN session ON session.id = bet.session_id
   ),
   seed AS (
     UPDATE seeds SET next_nonce = seeds.next_nonce + 1
     FROM decided WHERE seeds.session_id = decided.session_id AND seeds.current AND decided.verdict = 'accept'
     RETURNING seeds.id, seeds.session_id, seeds.next_nonce - 1 AS nonce
   ),
   accepted AS (SELECT decided.*, seed.id AS seed_id, seed.nonce FROM decided JOIN seed ON seed.session_id = decided.session_id),
   demo_debit AS (
     UPDATE sessions SET demo_balance_micro = sessions.demo_balance_micro - accepted.amount_micro
     FROM accepted WHERE sessions.id = accepted.session_id AND accepted.demo
   ),
   accepted_bet AS (
     UPDATE bets SET status = 'ACCEPTED', accepted_at = ${A.now}
     FROM accepted WHERE bets.id = accepted.id AND bets.cycle_created_at = accepted.cycle_created_at
       AND bets.cycle_created_at BETWEEN ${A.cyclesFrom}::timestamptz AND ${A.cyclesTo}::timestamptz
   ),
   round AS (
     INSERT INTO rounds (id, operator_id, session_id, cycle_id, seed_id, bet_id, game_code, currency, nonce, state, low_weight, high_weight, demo,
                         cycle_created_at)
     SELECT round_id, operator_id, session_id, cycle_id, seed_id, id, game_code, currency, nonce,
            (CASE WHEN phase = 'BETTING_OPEN' THEN 'BETTING_OPEN' ELSE 'ROLLING' END)::round_state, low_weight, high_weight, demo,
            cycle_created_at
     FROM accepted
   ),
   held AS (
     INSERT INTO pending_round_bets (bet_id, round_id, state, cycle_created_at) SELECT id, round_id, 'HELD', cycle_created_at FROM accepted
   )
   SELECT input.bet_id,
          CASE WHEN accepted.id IS NOT NULL THEN 'accepted' WHEN decided.verdict = 'accept' THEN 'late' ELSE COALESCE(decided.verdict, 'decided') END
            AS outcome,
          accepted.demo_balance_micro - accepted.amount_micro AS demo_balance_left
   FROM input LEFT JOIN decided ON decided.id = input.bet_id LEFT JOIN accepted ON accepted.id = input.bet_id`,
);

type Accepting = { ticket: BetTicket; audit: AuditCompletion | undefined };
type Accepted = { kind: 'accepted'; demoBalanceMicro?: bigint } | { kind: 'decided' | 'late' | 'demo_funds_short' };

async function acceptBets(svc: ServiceContext, items: Accepting[]): Promise<Accepted[]> {
  const audits = items.flatMap((item) => (item.audit ? [item.audit] : []));
  const rows = await svc.sql.query<{ bet_id: string; outcome: Accepted['kind']; demo_balance_left: bigint | null }>(ACCEPT, [
    items.map((item) => item.ticket.betId),
    svc.now(),
    ...auditParams(audits),
    items.map((item) => item.ticket.cycleCreatedAt),
    ...keyRange(items.map((item) => item.ticket.cycleCreatedAt)),
  ]);
  const byBet = new Map(rows.map((row) => [row.bet_id, row]));
  return items.map(({ ticket }) => {
    const row = byBet.get(ticket.betId)!;
    return row.outcome === 'accepted' && row.demo_balance_left !== null
      ? { kind: 'accepted', demoBalanceMicro: row.demo_balance_left }
      : { kind: row.outcome };
  });
}

// The bet pool's desk: debits and accepts bets, acceptances of the same moment together.
export class BetDesk {
  private readonly acceptances: Batcher<Accepting, Accepted>;
  private readonly rejections: Batcher<Rejection, BetAck>;

  constructor(private readonly svc: ServiceContext) {
    // a batch that fails as a whole (a deadlock with a session being ended, say) is tried
    // in parts down to single bets (batch.ts), so that one bet's trouble holds back no other
    this.acceptances = new Batcher(
      (items) => acceptBets(svc, items),
      // a set-based statement must not touch one session's seed twice
      { ...HOT_PATH_BATCH, keyOf: (item) => item.ticket.sessionId },
    );
    this.rejections = new Batcher((items) => rejectBets(svc, items), { ...HOT_PATH_BATCH, keyOf: (item) => item.ticket.betId });
  }

  // D37: the longest any debited bet has waited here for its acceptance or rejection
  oldestWaitMs(): number {
    return Math.max(this.acceptances.oldestWaitMs(), this.rejections.oldestWaitMs());
  }

  private reject(ticket: BetTicket, reason: BetRejectReason, rollback: RollbackPurpose | null): Promise<BetAck> {
    return this.rejections.add({ ticket, reason, rollback });
  }

  // redelivered: the queue handed this bet out before (its worker died or stalled);
  // audited: the debit's audit row, written with the bet row (place.ts)
  async process(ticket: BetTicket, { redelivered = false, audited }: { redelivered?: boolean; audited?: AuditedDebit } = {}): Promise<BetAck> {
    const { svc } = this;
    // D8: the service keeps the demo balance; the same rules, no wallet. The demo debit is
    // part of acceptance, so a demo bet still PENDING was never debited.
    if (ticket.demo) return this.accept(ticket, undefined);

    // a delivery that finds an earlier debit attempt for this bet follows a worker
    // that died (or stalled) with the call in flight: its outcome is unknown, so the bet is
    // resolved as uncertain, with a rollback of the same transactionUuid (7.1)
    if (redelivered && (await hasAttempt(svc.db, ticket.betTransactionUuid, 'bet'))) return this.reject(ticket, 'wallet_timeout', 'uncertain_bet');

    const debit = debitCall(ticket);
    let result: WalletAnswer | 'not_pending';
    try {
      // the row this debit's answer completes is written only while the bet is PENDING (or
      // was written with the bet row); acceptance completes it in its own statement
      result = await svc.wallet.call(debit, { whilePending: ticket.betId, audited, deferAudit: true });
    } catch (err) {
      // contract 5.3, D6: the operator's wallet credential was revoked (or has expired) since
      // the session began, or (D25) the wallet's address is not one it may call. No call was
      // made: nothing moved, so the bet is refused outright rather than left PENDING for
      // recovery to roll back
      if (!(err instanceof WalletTargetError)) throw err;
      svc.logger.error({ betId: ticket.betId, operatorId: ticket.operatorId }, err.message);
      return this.reject(ticket, 'service_unavailable', null);
    }
    betStep(ticket.betId, 'debited');
    // a delivery running beside this one already decided the bet
    if (result === 'not_pending') return ackOf(await readBet(svc, ticket.betId));
    // acceptance completes the audit row itself; any other answer completes it first
    if (result.statusClass === 'success') return this.accept(ticket, result.balanceMicro, result.audit);
    await svc.wallet.audit.complete(result.audit);
    switch (result.statusClass) {
      case 'clean_reject':
        return this.reject(ticket, `wallet_rejected:${result.status}`, null);
      case 'terminate': {
        // 7.1: USER_DISABLED, TOKEN_EXPIRED and INVALID_TOKEN end the session; no rollback.
        // INVALID_TOKEN is also fatal: "terminate session, alert"
        if (result.status === 'RS_ERROR_INVALID_TOKEN') {
          svc.logger.error({ betId: ticket.betId, status: result.status, requestUuid: result.requestUuid }, 'wallet refused a bet with a fatal status');
        }
        const ack = await this.reject(ticket, `wallet_rejected:${result.status}`, null);
        await endSession(svc, ticket.sessionId, { kind: 'wallet_status', status: result.status });
        return ack;
      }
      case 'uncertain':
        // 7.1: the debit may have happened: roll it back with the same transactionUuid
        return this.reject(ticket, uncertainReason(result.status, result.timedOut), 'uncertain_bet');
      default:
        svc.logger.error({ betId: ticket.betId, status: result.status, requestUuid: result.requestUuid }, 'wallet refused a bet with a fatal status');
        return this.reject(ticket, `wallet_rejected:${result.status}`, null);
    }
  }

  private async accept(ticket: BetTicket, balanceMicro: bigint | undefined, audit?: AuditCompletion): Promise<BetAck> {
    const { svc } = this;
    const accepted = await this.acceptances.add({ ticket, audit });
    betStep(ticket.betId, 'accepted');
    switch (accepted.kind) {
      case 'decided':
        return ackOf(await readBet(svc, ticket.betId));
      case 'demo_funds_short':
        return this.reject(ticket, 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY', null);
      // the debit went through but the bet can no longer join its round: give the money back
      case 'late':
        return this.reject(ticket, 'phase_not_open', 'late_bet');
    }
    svc.metrics.bets.inc({ result: 'accepted' });
    // contract 6.4: bet_placed then balance_update
    svc.emitter.toSession(ticket.sessionId, 'bet_placed', {
      betId: ticket.betId,
      roundId: ticket.roundId,
      cycleId: ticket.cycleId,
      // dice: the side; crash: the auto cash-out, or null (D40); an instant play: whether it bought the feature (D41)
      ...(ticket.side !== null
        ? { side: ticket.side }
        : ticket.featureBuy !== undefined
          ? { featureBuy: ticket.featureBuy }
          : { autoCashOut: ticket.autoCashOutCents === null ? null : centsText(BigInt(ticket.autoCashOutCents)) }),
      amountMicro: ticket.amountMicro,
      isFree: ticket.isFree,
    });
    const balance = accepted.demoBalanceMicro ?? balanceMicro;
    if (balance !== undefined) svc.emitter.toSession(ticket.sessionId, 'balance_update', { balanceMicro: balance.toString(), currency: ticket.currency });
    return { ok: true, betId: ticket.betId, roundId: ticket.roundId };
  }
}

const readBet = (svc: ServiceContext, betId: string) => svc.db.bet.findUniqueOrThrow({ where: { id: betId } });

// contract 3.2: a bet that is not accepted becomes REJECTED (fenced on PENDING). A clean
// reject (or a refusal) leaves no money moved: no rollback, no retry. An uncertain debit
// (and one answered too late to join its round) is rolled back (4.2): a rollback job with
// its own transactionUuid referencing the bet's is written in the same statement. The
// rejections of the same moment share one statement: under trouble (a slow wallet,
// late debits) they come in numbers.
const REJECT = statement(
  'bets_reject',
  `WITH u AS (
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::text[], $6::text[])
       AS u(bet_id, reason, rollback_transaction_uuid, job_id, purpose, payload)
   ),
   rejected AS (
     UPDATE bets b SET status = 'REJECTED', reject_reason = u.reason, rollback_transaction_uuid = u.rollback_transaction_uuid
     FROM u WHERE b.id = u.bet_id AND b.status = 'PENDING'
     RETURNING b.id, b.operator_id, b.session_id, b.cycle_created_at
   ),
   jobs AS (
     INSERT INTO wallet_jobs (id, operator_id, session_id, endpoint, purpose, bet_id, bet_cycle_created_at, transaction_uuid, next_attempt_at,
                              payload)
     SELECT u.job_id, rejected.operator_id, rejected.session_id, 'rollback', u.purpose, u.bet_id, rejected.cycle_created_at,
            u.rollback_transaction_uuid, $7, u.payload::jsonb
     FROM u JOIN rejected ON rejected.id = u.bet_id
     WHERE u.job_id IS NOT NULL
   )
   SELECT id FROM rejected`,
);

// rollback: why the debit is given back; null for a clean reject
export type Rejection = { ticket: BetTicket; reason: BetRejectReason; rollback: RollbackPurpose | null };

export async function rejectBets(svc: ServiceContext, rejections: Rejection[]): Promise<BetAck[]> {
  // D8: a demo bet is debited only by its acceptance, so a PENDING one has nothing to give back
  const plans = rejections.map(({ ticket, reason, rollback }) => {
    const purpose = ticket.demo ? null : rollback;
    return { ticket, reason, purpose, rollbackTransactionUuid: purpose && randomUUID(), jobId: purpose && randomUUID() };
  });
  const rejected = new Set(
    (
      await svc.sql.query<{ id: string }>(REJECT, [
        plans.map((p) => p.ticket.betId),
        plans.map((p) => p.reason),
        plans.map((p) => p.rollbackTransactionUuid),
        plans.map((p) => p.jobId),
        plans.map((p) => p.purpose),
        plans.map((p) => (p.rollbackTransactionUuid ? JSON.stringify(rollbackRequest(p.ticket, p.rollbackTransactionUuid)) : null)),
        svc.now(),
      ])
    ).map((row) => row.id),
  );
  await enqueueWalletJobs(
    svc,
    'rollback',
    plans.flatMap((p) => (p.jobId && rejected.has(p.ticket.betId) ? [p.jobId] : [])),
  );
  // D42: a rejected free bet gives its grant's round back; its session is sent `free_bets`
  // now that the rejection committed, whether its acknowledgement is still to come or went
  // long ago (a timed-out verdict, a redelivered bet job, recovery's orphan sweep). Once per
  // session of the batch; a paid bet costs only this check.
  const freeSessions = plans.flatMap((p) => (p.ticket.isFree && rejected.has(p.ticket.betId) ? [p.ticket.sessionId] : []));
  if (freeSessions.length > 0) await tellFreeBetSessions(svc, freeSessions);
  return Promise.all(
    plans.map(async (p): Promise<BetAck> => {
      // decided meanwhile by another delivery: its verdict stands
      if (!rejected.has(p.ticket.betId)) return ackOf(await readBet(svc, p.ticket.betId));
      svc.metrics.bets.inc({ result: 'rejected', reason: p.reason });
      emitRejected(svc, p.ticket, p.reason);
      return { ok: false, reason: p.reason };
    }),
  );
}

export const rejectWithRollback = async (svc: ServiceContext, ticket: BetTicket, reason: BetRejectReason, purpose: RollbackPurpose): Promise<BetAck> =>
  (await rejectBets(svc, [{ ticket, reason, rollback: purpose }]))[0]!;

function emitRejected(svc: ServiceContext, ticket: BetTicket, reason: BetRejectReason) {
  svc.emitter.toSession(ticket.sessionId, 'bet_rejected', { reason, ...(ticket.clientBetId ? { clientBetId: ticket.clientBetId } : {}) });
}

export function ackOf(bet: Pick<Bet, 'id' | 'status' | 'rejectReason' | 'roundId'>): BetAck {
  if (bet.status === 'REJECTED') return { ok: false, reason: (bet.rejectReason ?? 'session_not_found') as BetRejectReason };
  if (bet.status === 'PENDING') return { ok: false, reason: 'wallet_timeout' };
  return { ok: true, betId: bet.id, roundId: bet.roundId };
}

// A process that runs both the realtime and the bet role debits the bets its own players
// place itself, with no queue between: an acknowledgement waits for no BullMQ add, no bet
// worker's pick-up and no verdict sent back through Redis. Each such bet row names the node
// (bets.debit_node, written with the row, place.ts), and the node keeps a heartbeat key in Redis
// while it lives. Recovery leaves a PENDING bet alone while its node's heartbeat lives;
// once the node is gone (killed, or its heartbeat lapsed) the debit is uncertain and rolled
// back (contract 7.1), as it is for a bet worker's job whose queue lock lapsed
// (rounds/recovery.ts).

// as BullMQ's job lock (pools.ts LOCKING): renewed every second,
// lapsing 3 s after the process stops renewing it
const HEARTBEAT_EVERY_MS = 1000;
const HEARTBEAT_TTL_MS = 3000;

// D36: the heartbeats share a hash tag, so that recovery reads many in one MGET
const heartbeatKey = (node: string) => `{debit-node}:${node}`;

// the nodes among these whose heartbeat lives (keys under the deployment's prefix)
export async function liveDebitNodes(redis: Redis, nodes: string[]): Promise<Set<string>> {
  if (nodes.length === 0) return new Set();
  const beats = await redis.mget(nodes.map(heartbeatKey));
  return new Set(nodes.filter((_, i) => beats[i] !== null));
}

export class LocalDebits {
  readonly node: string;
  private readonly desk: BetDesk;
  private readonly inFlight = new Set<Promise<BetAck>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly unwatch: () => void;

  constructor(private readonly svc: ServiceContext) {
    this.node = svc.emitter.nodeId;
    this.desk = new BetDesk(svc);
    // D37: this node's own bets waiting for their acceptance are its own delay too
    this.unwatch = svc.overload.watch(() => this.desk.oldestWaitMs());
  }

  // the heartbeat lives before the first bet names this node
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_EVERY_MS);
  }

  // A bet whose handling fails is answered wallet_timeout and stays PENDING: recovery
  // resolves it as uncertain once this node is gone, or once it is stale (rounds/recovery.ts).
  // audited: the debit's audit row, written with the bet row (place.ts)
  debit(ticket: BetTicket, audited?: AuditedDebit): Promise<BetAck> {
    const { svc } = this;
    const verdict = this.desk.process(ticket, { audited }).catch((err: unknown): BetAck => {
      svc.logger.error({ err, betId: ticket.betId }, 'bet could not be handled; recovery resolves it');
      return { ok: false, reason: 'wallet_timeout' };
    });
    this.inFlight.add(verdict);
    svc.metrics.localDebitsInFlight.inc();
    void verdict.finally(() => {
      this.inFlight.delete(verdict);
      svc.metrics.localDebitsInFlight.dec();
    });
    return verdict;
  }

  // D12: the debits in flight finish first; one still running after that is left to
  // recovery, as a bet worker's job is left to another worker
  async close(inFlightUntil?: number): Promise<void> {
    const finished = await finishedInTime(Promise.all(this.inFlight), inFlightUntil);
    clearInterval(this.timer);
    this.unwatch();
    if (!finished) this.svc.logger.warn({ bets: this.inFlight.size }, 'debits still running at shutdown are left to recovery');
    await this.svc.redis.del(heartbeatKey(this.node)).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    await this.svc.redis
      .set(heartbeatKey(this.node), '1', 'PX', HEARTBEAT_TTL_MS)
      .catch((err: Error) => this.svc.logger.warn({ err: err.message }, 'debit node heartbeat not renewed'));
  }
}

// The bet pool's job handler (workers/registry.ts binds it to rgs-bet "bets"); the desk batches
// the statements of one worker's jobs.
export type BetScope = { svc: ServiceContext; desk: BetDesk };

// Each bet of a job is debited on its own, and its verdict goes back to the realtime node
// that placed it as soon as it is known. A bet whose handling fails is answered
// wallet_timeout and stays PENDING: recovery resolves it as uncertain (recovery.ts). A job
// handed out before (its worker died or stalled) tells the desk so: a debit that attempt
// left in flight is resolved as uncertain, not sent again (contract 7.1).
export function debitBets({ svc, desk }: BetScope, job: Job<BetJob>): Promise<BetAck[]> {
  const redelivered = job.attemptsStarted > 1 || job.stalledCounter > 0;
  return Promise.all(
    job.data.tickets.map(async (ticket) => {
      betStep(ticket.betId, 'picked_up');
      const ack = await desk.process(ticket, { redelivered }).catch((err: unknown): BetAck => {
        svc.logger.error({ err, betId: ticket.betId }, 'bet could not be handled; recovery resolves it');
        return { ok: false, reason: 'wallet_timeout' };
      });
      svc.emitter.verdict(job.data.node, ticket.betId, ack);
      return ack;
    }),
  );
}
