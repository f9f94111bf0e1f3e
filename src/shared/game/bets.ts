import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { Prisma, type Bet } from '../db/client.js';
import type { Side } from '../fairness/dice.js';
import { endSession } from '../session/end.js';
import { walletTarget } from '../wallet/target.js';
import { amountRefusal, rgRefusal, sessionRefusal, uncertainReason, type BetRejectReason } from './bet-rules.js';
import { currentCycle } from './engine.js';
import { emitDemoBalance } from './settlement.js';
import { enqueueWalletJob, rollbackJobData, type RollbackPurpose } from './wallet-jobs.js';

// A bet, from place_bet to ACCEPTED or REJECTED (contract 3.2, 8.2, 8.3, D1, D13, D14).
// placeBet runs on the realtime node: every 8.2 rule that needs no wallet, then the bet row
// (status PENDING) whose partial unique index allows one live bet per session per cycle.
// processBet runs in the bet worker pool: the debit (audit row first, in the wallet client),
// classified by 7.1, then acceptance, which creates the round (D1) fenced on the cycle.

export type PlaceBetRequest = { side: Side; amountMicro: bigint; clientBetId?: string };
export type BetAck = { ok: true; betId: string; roundId: string } | { ok: false; reason: BetRejectReason };
export type Placed = { ok: true; betId: string } | { ok: false; reason: BetRejectReason };

const DAY_MS = 24 * 60 * 60 * 1000;

export async function placeBet(svc: ServiceContext, sessionId: string, request: PlaceBetRequest): Promise<Placed> {
  const now = svc.now();
  const session = await svc.db.session.findUnique({ where: { id: sessionId } });
  const refusal = sessionRefusal(session, now);
  if (refusal || !session) return { ok: false, reason: refusal ?? 'session_not_found' };

  const cycle = await currentCycle(svc, session);
  // 8.2 rule 2
  if (!cycle || cycle.phase !== 'BETTING_OPEN' || (cycle.phaseEndsAt !== null && cycle.phaseEndsAt <= now)) {
    return { ok: false, reason: 'phase_not_open' };
  }
  const outOfRange = amountRefusal(request.amountMicro, cycle.minBetMicro, cycle.maxBetMicro);
  if (outOfRange) return { ok: false, reason: outOfRange };

  if (session.dailyLossMicro !== null || session.dailyWagerMicro !== null || session.sessionTimeSeconds !== null) {
    const totals = await stakesInLastDay(svc, session, now);
    const rg = rgRefusal(
      {
        dailyLossMicro: session.dailyLossMicro,
        dailyWagerMicro: session.dailyWagerMicro,
        sessionTimeSeconds: session.sessionTimeSeconds,
        sessionCreatedAt: session.createdAt,
        ...totals,
      },
      request.amountMicro,
      now,
    );
    if (rg) return { ok: false, reason: rg };
  }

  const betId = randomUUID();
  try {
    await svc.db.bet.create({
      data: {
        id: betId,
        operatorId: session.operatorId,
        sessionId,
        cycleId: cycle.id,
        roundId: randomUUID(),
        playerRef: session.playerRef,
        gameCode: session.gameCode,
        currency: session.currency,
        side: request.side,
        amountMicro: request.amountMicro,
        status: 'PENDING',
        betTransactionUuid: randomUUID(),
        clientBetId: request.clientBetId,
        demo: session.mode === 'DEMO',
      },
    });
  } catch (err) {
    // 8.2 rule 4, held by the index bets_one_live_per_session_cycle
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') return { ok: false, reason: 'already_bet_this_round' };
    throw err;
  }
  return { ok: true, betId };
}

// D14: the player's (operator, playerRef, currency) bets of the last 24 hours, across
// sessions. Lost stakes: settled losing bets plus bets not yet settled (potential losses).
async function stakesInLastDay(
  svc: ServiceContext,
  session: { operatorId: string; playerRef: string; currency: string },
  now: Date,
): Promise<{ lostStakesMicro24h: bigint; wageredMicro24h: bigint }> {
  // SUM(bigint) is NUMERIC, which Prisma hands back as a Decimal (D18: never added to a
  // bigint): read the sums as decimal text
  const [row] = await svc.db.$queryRaw<{ lost: string; wagered: string }[]>`
    SELECT
      COALESCE(SUM(amount_micro) FILTER (WHERE status IN ('PENDING', 'ACCEPTED') OR (status = 'SETTLED' AND payout_micro = 0)), 0)::text AS lost,
      COALESCE(SUM(amount_micro) FILTER (WHERE status IN ('PENDING', 'ACCEPTED', 'SETTLED')), 0)::text AS wagered
    FROM bets
    WHERE operator_id = ${session.operatorId} AND player_ref = ${session.playerRef} AND currency = ${session.currency}
      AND NOT is_free AND created_at > ${new Date(now.getTime() - DAY_MS)}`;
  return { lostStakesMicro24h: BigInt(row?.lost ?? '0'), wageredMicro24h: BigInt(row?.wagered ?? '0') };
}

// redelivered: the queue handed this job out before (its worker died or stalled)
export async function processBet(svc: ServiceContext, betId: string, { redelivered = false } = {}): Promise<BetAck> {
  const bet = await svc.db.bet.findUnique({ where: { id: betId } });
  if (!bet) return { ok: false, reason: 'session_not_found' };
  // a job delivered twice answers with what the first delivery decided
  if (bet.status !== 'PENDING') return ackOf(bet);

  // D8: the service keeps the demo balance; the same rules, no wallet. The demo debit is
  // part of the acceptance transaction, so a demo bet still PENDING was never debited.
  if (bet.demo) return accept(svc, bet, undefined);

  // issue 4: a delivery that finds an earlier debit attempt for this bet follows a worker
  // that died (or stalled) with the call in flight: its outcome is unknown, so the bet is
  // resolved as uncertain, with a rollback of the same transactionUuid (7.1)
  const earlierAttempt =
    redelivered &&
    (await svc.db.walletCall.findFirst({ where: { transactionUuid: bet.betTransactionUuid, endpoint: 'bet' }, select: { id: true } }));
  if (earlierAttempt) return rejectWithRollback(svc, bet, 'wallet_timeout', 'uncertain_bet');

  const result = await svc.wallet.call({
    target: await walletTarget(svc, bet.operatorId),
    endpoint: 'bet',
    sessionId: bet.sessionId,
    transactionUuid: bet.betTransactionUuid,
    // contract 2.6
    fields: {
      operatorId: bet.operatorId,
      playerRef: bet.playerRef,
      currency: bet.currency,
      gameCode: bet.gameCode,
      transactionUuid: bet.betTransactionUuid,
      amountMicro: bet.amountMicro.toString(),
      roundId: bet.roundId,
      ...(bet.isFree ? { isFree: true } : {}),
    },
  });
  switch (result.statusClass) {
    case 'success':
      return accept(svc, bet, result.balanceMicro);
    case 'clean_reject':
      return reject(svc, bet, `wallet_rejected:${result.status}`);
    case 'terminate': {
      // 7.1: USER_DISABLED, TOKEN_EXPIRED and INVALID_TOKEN end the session; no rollback.
      // INVALID_TOKEN is also fatal: "terminate session, alert"
      if (result.status === 'RS_ERROR_INVALID_TOKEN') {
        svc.logger.error({ betId, status: result.status, requestUuid: result.requestUuid }, 'wallet refused a bet with a fatal status');
      }
      const ack = await reject(svc, bet, `wallet_rejected:${result.status}`);
      await endSession(svc, bet.sessionId, { kind: 'wallet_status', status: result.status });
      return ack;
    }
    case 'uncertain':
      // 7.1: the debit may have happened: roll it back with the same transactionUuid
      return rejectWithRollback(svc, bet, uncertainReason(result.status, result.timedOut), 'uncertain_bet');
    default:
      svc.logger.error({ betId, status: result.status, requestUuid: result.requestUuid }, 'wallet refused a bet with a fatal status');
      return reject(svc, bet, `wallet_rejected:${result.status}`);
  }
}

// contract 3.2 -> ACCEPTED: the round is created with the session's current seed and next
// nonce (D1, no gaps) and the cycle's weight snapshot. The cycle row is read FOR SHARE, so
// the tick that closes the betting window or rolls the cycle waits for this transaction
// (and this one sees its result): a debit that completes after the roll cannot join it.
async function accept(svc: ServiceContext, bet: Bet, balanceMicro: bigint | undefined): Promise<BetAck> {
  const now = svc.now();
  const roundId = await svc.db.$transaction(async (tx) => {
    const [cycle] = await tx.$queryRaw<{ phase: string; low_weight: bigint; high_weight: bigint }[]>`
      SELECT phase, low_weight, high_weight FROM cycles WHERE id = ${bet.cycleId}::uuid FOR SHARE`;
    const [session] = await tx.$queryRaw<{ state: string; expires_at: Date }[]>`
      SELECT state, expires_at FROM sessions WHERE id = ${bet.sessionId}::uuid FOR SHARE`;
    if (!cycle || (cycle.phase !== 'BETTING_OPEN' && cycle.phase !== 'ROLLING')) return null;
    if (!session || session.state !== 'ACTIVE') return null;
    const [seed] = await tx.$queryRaw<{ id: string; nonce: number }[]>`
      UPDATE seeds SET next_nonce = next_nonce + 1
      WHERE session_id = ${bet.sessionId}::uuid AND current
      RETURNING id, next_nonce - 1 AS nonce`;
    if (!seed) return null;
    if (bet.demo) {
      const debited = await tx.session.updateMany({
        where: { id: bet.sessionId, demoBalanceMicro: { gte: bet.amountMicro } },
        data: { demoBalanceMicro: { decrement: bet.amountMicro } },
      });
      // thrown, so that the nonce taken above is given back with the rest (D1: no gaps)
      if (debited.count === 0) throw new DemoFundsError(bet.id);
    }
    const { count } = await tx.bet.updateMany({ where: { id: bet.id, status: 'PENDING' }, data: { status: 'ACCEPTED', acceptedAt: now } });
    if (count === 0) throw new BetRaceError(bet.id);
    await tx.round.create({
      data: {
        id: bet.roundId,
        operatorId: bet.operatorId,
        sessionId: bet.sessionId,
        cycleId: bet.cycleId,
        seedId: seed.id,
        betId: bet.id,
        gameCode: bet.gameCode,
        currency: bet.currency,
        nonce: Number(seed.nonce),
        state: cycle.phase === 'BETTING_OPEN' ? 'BETTING_OPEN' : 'ROLLING',
        lowWeight: cycle.low_weight,
        highWeight: cycle.high_weight,
        demo: bet.demo,
      },
    });
    await tx.pendingRoundBet.create({ data: { betId: bet.id, roundId: bet.roundId, state: 'HELD' } });
    return bet.roundId;
  }).catch(async (err: unknown) => {
    if (err instanceof BetRaceError) return undefined;
    if (err instanceof DemoFundsError) return 'insufficient' as const;
    throw err;
  });
  if (roundId === undefined) return ackOf(await svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } }));
  if (roundId === 'insufficient') return reject(svc, bet, 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY');
  // the debit went through but the bet can no longer join its round: give the money back
  if (roundId === null) return rejectWithRollback(svc, bet, 'phase_not_open', 'late_bet');

  // contract 6.4: bet_placed then balance_update
  svc.emitter.toSession(bet.sessionId, 'bet_placed', {
    betId: bet.id,
    roundId,
    cycleId: bet.cycleId,
    side: bet.side,
    amountMicro: bet.amountMicro.toString(),
    isFree: bet.isFree,
  });
  if (bet.demo) await emitDemoBalance(svc, bet.sessionId);
  else if (balanceMicro !== undefined) {
    svc.emitter.toSession(bet.sessionId, 'balance_update', { balanceMicro: balanceMicro.toString(), currency: bet.currency });
  }
  return { ok: true, betId: bet.id, roundId };
}

class BetRaceError extends Error {
  constructor(betId: string) {
    super(`bet ${betId} was decided by another delivery`);
  }
}

class DemoFundsError extends Error {
  constructor(betId: string) {
    super(`demo bet ${betId}: the demo balance does not cover the stake`);
  }
}

// contract 3.2: a clean reject (or a refusal) leaves no money moved: no rollback, no retry.
async function reject(svc: ServiceContext, bet: Bet, reason: BetRejectReason): Promise<BetAck> {
  const { count } = await svc.db.bet.updateMany({ where: { id: bet.id, status: 'PENDING' }, data: { status: 'REJECTED', rejectReason: reason } });
  if (count === 0) return ackOf(await svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } }));
  emitRejected(svc, bet, reason);
  return { ok: false, reason };
}

// contract 3.2 (uncertain) and 4.2: REJECTED with a rollback of the debit enqueued. A demo
// bet is debited only by its acceptance (D8), so a PENDING one has nothing to give back.
export async function rejectWithRollback(svc: ServiceContext, bet: Bet, reason: BetRejectReason, purpose: RollbackPurpose): Promise<BetAck> {
  if (bet.demo) return reject(svc, bet, reason);
  const now = svc.now();
  const rollbackTransactionUuid = randomUUID();
  const job = await svc.db.$transaction(async (tx) => {
    const { count } = await tx.bet.updateMany({
      where: { id: bet.id, status: 'PENDING' },
      data: { status: 'REJECTED', rejectReason: reason, rollbackTransactionUuid },
    });
    if (count === 0) return undefined;
    return tx.walletJob.create({ data: rollbackJobData(bet, rollbackTransactionUuid, purpose, now) });
  });
  if (job === undefined) return ackOf(await svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } }));
  await enqueueWalletJob(svc, job);
  emitRejected(svc, bet, reason);
  return { ok: false, reason };
}

function emitRejected(svc: ServiceContext, bet: Bet, reason: BetRejectReason) {
  svc.emitter.toSession(bet.sessionId, 'bet_rejected', { reason, ...(bet.clientBetId ? { clientBetId: bet.clientBetId } : {}) });
}

function ackOf(bet: Bet): BetAck {
  if (bet.status === 'REJECTED') return { ok: false, reason: (bet.rejectReason ?? 'session_not_found') as BetRejectReason };
  if (bet.status === 'PENDING') return { ok: false, reason: 'wallet_timeout' };
  return { ok: true, betId: bet.id, roundId: bet.roundId };
}
