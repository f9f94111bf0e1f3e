import { Batcher, HOT_PATH_BATCH } from '../platform/batch.js';
import { betStep } from '../platform/bet-steps.js';
import { epochMs } from '../platform/clock.js';
import type { ServiceContext } from '../platform/context.js';
import { rejectWithRollback, type BetAck } from '../game/bets/bets.js';
import type { LocalDebits } from '../game/bets/local-debits.js';
import { placeBets, type Placed, type Placement } from '../game/bets/placement.js';
import type { BetTicket } from '../game/bets/ticket.js';

// place_bet on a realtime node (contract 8.2, D4): the bets that players send at the same
// moment are placed together (one read, one insert) and then debited. A node that also runs
// the bet role debits them itself (local-debits.ts); otherwise they go to the bet
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

  // localDebits: this process's own debits, when it also runs the bet role
  constructor(
    private readonly svc: ServiceContext,
    localDebits?: LocalDebits,
  ) {
    // the pool's verdicts come back through the emitter; this node's own debits answer here
    if (!localDebits) svc.emitter.onVerdict((betId, verdict) => this.answer(betId, verdict as BetAck));
    this.listening = !localDebits;
    this.placements = new Batcher((batch) => (localDebits ? this.placeAndDebit(batch, localDebits) : this.placeAndQueue(batch)), HOT_PATH_BATCH);
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
    if (this.listening) this.svc.emitter.onVerdict(undefined);
    for (const [betId, waiting] of this.waiting) {
      clearTimeout(waiting.timer);
      this.waiting.delete(betId);
    }
  }

  // the verdict answers as the pool's would, under the same time limit
  private async placeAndDebit(batch: Placement[], localDebits: LocalDebits): Promise<Intake[]> {
    const placed = await placeBets(this.svc, batch, localDebits.node);
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
    const placed = await placeBets(this.svc, batch);
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
