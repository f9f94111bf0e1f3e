import { io, type Socket } from 'socket.io-client';
import { arrivalOffsetMs, type EngineStarts } from './arrivals.js';
import { cashesOutAutomatically, centsWords, curveTimeOf, drawTargetCents, FlightClock } from './crash-play.js';
import { LoopDelayMonitor, type LoopDelay } from './event-loop.js';
import { GEMS_STALL_MS, nextPlayAt, type GemsPace } from './gems-play.js';
import type { BenchGame } from './options.js';
import type { BenchSession } from './sessions.js';
import { epochMs } from '../src/shared/platform/clock.js';

// The players: one Socket.IO client each (WebSocket transport only, contract 4.4) that bets
// once in every round while betting is on, and records what a browser would see and when. A
// crash player also cashes out (crash-play.ts), by hand or automatically. A Gem Vault player
// (D41) has no round to wait for: it plays at its own pace (gems-play.ts), each play a
// BetRecord as a bet is.

export type BetRecord = {
  cycleId: string;
  sentAt: number;
  ackAt?: number;
  ok?: boolean;
  reason?: string;
  betId?: string;
  roundId?: string;
  // crash: the multiplier the player aims at, in cents, and whether it asked the service to
  // cash out there (autoCashOut) or cashes out by hand
  targetCents?: number;
  auto?: boolean;
  // gems: whether the play bought the feature (D41)
  featureBuy?: boolean;
};

// crash: what round_result told, multipliers in cents
export type CrashResult = { crashCents: number; cashOutCents: number | null; payoutMicro: string };

// gems: what round_result told of a play (D41): its bet and payout, and whether it bought the feature
export type GemsResult = { betId: string; payoutMicro: string; featurePurchased: boolean };

export type ResultRecord = { at: number; cycleId: string; won: boolean; crash?: CrashResult; gems?: GemsResult };

// A crash cash-out by hand: when the player clicked, by its own clock and by this machine's,
// and what the service answered.
export type CashOutRecord = {
  cycleId: string;
  roundId: string;
  targetCents: number;
  // the player's clock at the click: ms into the flight, and the multiplier it showed
  clientFlightMs: number;
  seenCents: number;
  // this machine's clock at the click, which is the service's (one machine): the true ms into
  // the flight
  sentAt: number;
  flightMs: number;
  // the player's clock reached its target before the bet's ack came: it clicked on the ack
  afterAck: boolean;
  ackAt?: number;
  ok?: boolean;
  reason?: string;
  grantedCents?: number;
  payoutMicro?: string;
};

// 1.00 EUR, inside the default stake range (D9)
export const STAKE_MICRO = '100000';
const CONNECT_TIMEOUT_MS = 10_000;
// the service answers a bet within the wallet timeout plus its own 10 s (realtime/server.ts)
const ACK_TIMEOUT_MS = 20_000;

type RoundState = { cycleId: string; phase: string; phaseEndsAt: string | null; flightStartedAt?: string | null; serverTime?: string };

// What the players saw, as the report reads it (one thread's, or all threads' merged).
export type PlayerRecords = {
  bets: BetRecord[];
  rollingEndsAt: Map<string, number>;
  // crash: each cycle's flight start, as round_state announced it, and the cash-outs by hand
  flightStartedAt: Map<string, number>;
  cashOuts: CashOutRecord[];
  results: Map<string, ResultRecord>;
  connectLatenciesMs: number[];
  failures: string[];
  connected: number;
  // this thread's event loop while betting was on (the worst thread's, merged)
  eventLoopDelay: LoopDelay;
};
// betSpread: bets come at a random moment in this first fraction of the betting window, as
// people click, clear of its end, where a late arrival would be refused as phase_not_open.
// engineStarts and cycleMs: when each operator's players arrive (arrivals.ts).
export type PlayerSetup = {
  baseUrl: string;
  game: BenchGame;
  cashOutMaxCents: number;
  // gems: the operators' minRoundMs, and the fraction of plays that buy the feature
  minRoundMs: number;
  featureBuyShare: number;
  operators: number;
  bettingWindowMs: number;
  betSpread: number;
  engineStarts: EngineStarts;
  cycleMs: number;
};
type RoundResult = {
  roundId: string;
  cycleId: string;
  won: boolean;
  crashMultiplier?: string;
  cashOutMultiplier?: string | null;
  payoutMicro?: string;
  // gems (MultiRoundResult, D41)
  betId?: string;
  featurePurchased?: boolean;
  events?: unknown[];
};
type BetAck = { ok: boolean; betId?: string; roundId?: string; reason?: string };
type CashOutAck = { ok: boolean; cashOutMultiplier?: string; payoutMicro?: string; reason?: string };

// "2.37" as 237
const cents = (multiplier: string): number => Math.round(Number(multiplier) * 100);

// A crash player's round: its bet, and its cash-out by hand once its clock reaches the target
type CrashRound = {
  bet: BetRecord;
  clock?: FlightClock;
  timer?: NodeJS.Timeout;
  // the clock reached the target before the bet's ack: the click follows the ack
  due: boolean;
  clicked: boolean;
  // its round_result came: nothing more to do
  over: boolean;
};

// A Gem Vault player (gems-play.ts): its socket, its last play, the balance_update messages it
// has seen and the plays it had accepted and won, and the one timer of its pace
type GemsSeat = {
  socket?: Socket;
  last?: GemsPace;
  notBefore: number;
  balanceUpdatesSeen: number;
  accepted: number;
  won: number;
  timer?: NodeJS.Timeout;
};

// The players of one thread (player-thread.ts); the load generator runs several threads so
// that no single event loop's delay shows in the measured latencies.
export class Players {
  private bettingOn = false;
  private readonly loop = new LoopDelayMonitor();
  eventLoopDelay: LoopDelay = { p99Ms: 0, maxMs: 0 };
  readonly bets: BetRecord[] = [];
  // the scheduled end of each cycle's ROLLING phase, as announced in round_state
  readonly rollingEndsAt = new Map<string, number>();
  readonly results = new Map<string, ResultRecord>();
  readonly flightStartedAt = new Map<string, number>();
  readonly cashOuts: CashOutRecord[] = [];
  readonly connectLatenciesMs: number[] = [];
  readonly failures: string[] = [];
  private readonly sockets: Socket[] = [];
  private readonly gemsSeats: GemsSeat[] = [];
  private closing = false;

  constructor(private readonly setup: PlayerSetup) {}

  get connected(): number {
    return this.sockets.length;
  }

  get betting(): boolean {
    return this.bettingOn;
  }

  setBetting(on: boolean): void {
    if (on === this.bettingOn) return;
    this.bettingOn = on;
    if (on) this.loop.start();
    else this.eventLoopDelay = this.loop.stop();
    // gems: each player's first play at random in the first betSpread of minRoundMs
    for (const seat of this.gemsSeats) {
      clearTimeout(seat.timer);
      seat.timer = undefined;
      if (!on) continue;
      seat.notBefore = Date.now() + Math.random() * this.setup.minRoundMs * this.setup.betSpread;
      this.pace(seat);
    }
  }

  // players arrive as their sessions did: handshakes start on a fixed schedule (the player
  // of session i at start + i / rate, or later for a staggered engine start, arrivals.ts)
  // and never wait for earlier ones (an open loop), each counted until the service's `connected`
  async connectAll(sessions: BenchSession[], ratePerSecond: number, start: number): Promise<void> {
    const { operators, engineStarts, cycleMs } = this.setup;
    const arrivals = sessions
      .map((session) => ({ session, at: start + arrivalOffsetMs(session.index, { ratePerSecond, operators, engineStarts, cycleMs }) }))
      .sort((a, b) => a.at - b.at);
    const pending: Promise<void>[] = [];
    for (const { session, at } of arrivals) {
      const wait = at - epochMs();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(this.connect(session));
    }
    await Promise.all(pending);
  }

  private async connect(session: BenchSession): Promise<void> {
    const started = epochMs();
    // players of one operator share an engine: alternate their sides, so that every round
    // with two bets has a winner and the /wallet/win path is always exercised
    const side = Math.floor(session.index / this.setup.operators) % 2 === 0 ? 'LOW' : 'HIGH';
    // crash: this player's rounds by cycle
    const crash = this.setup.game === 'crash' ? { auto: cashesOutAutomatically(session.index, this.setup.operators), rounds: new Map<string, CrashRound>() } : undefined;
    const gems: GemsSeat | undefined = this.setup.game === 'gems' ? { notBefore: 0, balanceUpdatesSeen: 0, accepted: 0, won: 0 } : undefined;
    let socket: Socket;
    try {
      socket = await handshake(this.setup.baseUrl, session.token, (opening) => {
        opening.on('round_state', (state: RoundState) => {
          if (crash) this.onCrashRoundState(opening, crash, state);
          else this.onRoundState(opening, side, state);
        });
        opening.on('round_result', (result: RoundResult) => {
          const at = epochMs();
          this.results.set(result.roundId, {
            at,
            cycleId: result.cycleId,
            won: result.won,
            ...(result.crashMultiplier !== undefined
              ? {
                  crash: {
                    crashCents: cents(result.crashMultiplier),
                    cashOutCents: result.cashOutMultiplier ? cents(result.cashOutMultiplier) : null,
                    payoutMicro: result.payoutMicro ?? '',
                  },
                }
              : {}),
            ...(result.events !== undefined
              ? { gems: { betId: result.betId ?? '', payoutMicro: result.payoutMicro ?? '', featurePurchased: result.featurePurchased === true } }
              : {}),
          });
          if (gems) this.onGemsResult(gems, result);
          const round = crash?.rounds.get(result.cycleId);
          if (round) {
            round.over = true;
            clearTimeout(round.timer);
            crash!.rounds.delete(result.cycleId);
          }
        });
        opening.on('session_ended', () => this.failures.push('session_ended'));
        if (gems) {
          opening.on('balance_update', () => {
            gems.balanceUpdatesSeen++;
            this.pace(gems);
          });
          // D23: a win that failed after its round_result; the wallet's ledger shows it too
          opening.on('win_failed', () => this.failures.push('win_failed'));
        }
      });
    } catch (err) {
      this.failures.push(`connect:${(err as Error).message}`);
      return;
    }
    this.connectLatenciesMs.push(epochMs() - started);
    socket.on('disconnect', () => {
      if (!this.closing) this.failures.push('disconnected');
    });
    this.sockets.push(socket);
    if (gems) {
      gems.socket = socket;
      this.gemsSeats.push(gems);
      if (this.betting) {
        gems.notBefore = Date.now() + Math.random() * this.setup.minRoundMs * this.setup.betSpread;
        this.pace(gems);
      }
    }
  }

  // gems: the next play when the rules allow it (gems-play.ts), or a timer until then; called
  // on every message that may allow it, each call replacing the seat's one timer
  private pace(seat: GemsSeat): void {
    clearTimeout(seat.timer);
    seat.timer = undefined;
    if (!this.betting || !seat.socket || this.closing) return;
    const now = Date.now();
    let at = nextPlayAt(seat.last, seat.balanceUpdatesSeen, this.setup.minRoundMs);
    if (at === undefined) {
      const last = seat.last!;
      const stallAt = last.sentWallMs + GEMS_STALL_MS;
      if (now < stallAt) {
        seat.timer = setTimeout(() => this.pace(seat), stallAt - now);
        return;
      }
      // still in play after the ack's own limit: the analysis counts what is missing (its ack,
      // its round_result, its win); the player goes on as if it had come
      this.failures.push('play:stalled');
      last.ackWallMs ??= now;
      last.resulted = true;
      seat.balanceUpdatesSeen = Math.max(seat.balanceUpdatesSeen, last.balanceUpdatesDue);
      at = last.ackWallMs + this.setup.minRoundMs;
    }
    const due = Math.max(at, seat.notBefore);
    // a timer may fire a fraction of a millisecond early: the play waits for the wall clock
    if (due > now) {
      seat.timer = setTimeout(() => this.pace(seat), Math.ceil(due - now));
      return;
    }
    this.play(seat);
  }

  private play(seat: GemsSeat): void {
    const featureBuy = this.setup.featureBuyShare > 0 && Math.random() < this.setup.featureBuyShare;
    const pace: GemsPace = { sentWallMs: Date.now(), resulted: false, won: false, balanceUpdatesDue: 0 };
    seat.last = pace;
    // a play's cycle is its own, named by its bet's id (D41): known from the ack
    const record: BetRecord = { cycleId: '', sentAt: 0, featureBuy };
    this.placeBet(seat.socket!, 'play', { amountMicro: STAKE_MICRO, ...(featureBuy ? { featureBuy: true } : {}) }, record, (ack) => {
      pace.ackWallMs = Date.now();
      pace.accepted = ack.ok === true;
      if (ack.ok) {
        record.cycleId = ack.betId ?? '';
        pace.roundId = ack.roundId;
        seat.accepted++;
        pace.balanceUpdatesDue = seat.accepted + seat.won;
        // its round_result follows the ack (D41); should it have come first, it is kept
        const result = ack.roundId === undefined ? undefined : this.results.get(ack.roundId);
        if (result) this.onGemsResult(seat, { roundId: ack.roundId!, cycleId: result.cycleId, won: result.won });
      }
      this.pace(seat);
    });
  }

  private onGemsResult(seat: GemsSeat, result: Pick<RoundResult, 'roundId' | 'cycleId' | 'won'>): void {
    const last = seat.last;
    if (!last || last.roundId !== result.roundId || last.resulted) return;
    last.resulted = true;
    last.won = result.won;
    if (result.won) {
      seat.won++;
      last.balanceUpdatesDue = seat.accepted + seat.won;
    }
    this.pace(seat);
  }

  private onRoundState(socket: Socket, side: string, state: RoundState): void {
    if (state.phase === 'ROLLING' && state.phaseEndsAt && !this.rollingEndsAt.has(state.cycleId)) {
      this.rollingEndsAt.set(state.cycleId, Date.parse(state.phaseEndsAt));
    }
    if (state.phase !== 'BETTING_OPEN' || !this.betting) return;
    setTimeout(() => {
      if (this.betting) this.placeBet(socket, 'place_bet', { side, amountMicro: STAKE_MICRO }, { cycleId: state.cycleId, sentAt: 0 });
    }, Math.random() * this.setup.bettingWindowMs * this.setup.betSpread);
  }

  // crash: a bet in each betting window while betting is on, as for dice; the flight's
  // round_state starts the player's clock
  private onCrashRoundState(socket: Socket, crash: { auto: boolean; rounds: Map<string, CrashRound> }, state: RoundState): void {
    if (state.phase === 'ROLLING' && state.flightStartedAt && state.serverTime) {
      const clock = new FlightClock({ flightStartedAt: state.flightStartedAt, serverTime: state.serverTime }, epochMs());
      if (!this.flightStartedAt.has(state.cycleId)) this.flightStartedAt.set(state.cycleId, clock.startedAt);
      const round = crash.rounds.get(state.cycleId);
      if (round && !round.bet.auto && !round.clock) this.aimCashOut(socket, round, clock);
      return;
    }
    if (state.phase !== 'BETTING_OPEN' || !this.betting) return;
    setTimeout(() => {
      if (!this.betting) return;
      const targetCents = drawTargetCents(Math.random(), this.setup.cashOutMaxCents);
      const round: CrashRound = { bet: { cycleId: state.cycleId, sentAt: 0, targetCents, auto: crash.auto }, due: false, clicked: false, over: false };
      crash.rounds.set(state.cycleId, round);
      this.placeBet(socket, 'place_bet', { amountMicro: STAKE_MICRO, ...(crash.auto ? { autoCashOut: centsWords(targetCents) } : {}) }, round.bet, (ack) => {
        if (!ack.ok) crash.rounds.delete(state.cycleId);
        else if (round.due) this.cashOut(socket, round, true);
      });
    }, Math.random() * this.setup.bettingWindowMs * this.setup.betSpread);
  }

  // the click is due when the player's clock shows the target
  private aimCashOut(socket: Socket, round: CrashRound, clock: FlightClock): void {
    round.clock = clock;
    const at = clock.localAt(curveTimeOf(round.bet.targetCents!));
    const fire = () => {
      if (round.over) return;
      // a timer keeps whole ms and may fire a fraction of one early: the click waits until the
      // player's clock shows the target
      const early = at - epochMs();
      if (early > 0) {
        round.timer = setTimeout(fire, Math.ceil(early));
        return;
      }
      if (round.bet.ok) this.cashOut(socket, round, false);
      else if (round.bet.ackAt === undefined) round.due = true;
    };
    round.timer = setTimeout(fire, Math.max(0, Math.ceil(at - epochMs())));
  }

  private cashOut(socket: Socket, round: CrashRound, afterAck: boolean): void {
    if (round.clicked || round.over || !round.clock) return;
    round.clicked = true;
    const sentAt = epochMs();
    const record: CashOutRecord = {
      cycleId: round.bet.cycleId,
      roundId: round.bet.roundId!,
      targetCents: round.bet.targetCents!,
      clientFlightMs: round.clock.flightMs(sentAt),
      seenCents: round.clock.centsAt(sentAt),
      sentAt,
      flightMs: sentAt - round.clock.startedAt,
      afterAck,
    };
    this.cashOuts.push(record);
    socket
      .timeout(ACK_TIMEOUT_MS)
      .emitWithAck('cash_out', {})
      .then((ack: CashOutAck) => {
        record.ackAt = epochMs();
        record.ok = ack.ok === true;
        if (ack.ok) {
          record.grantedCents = cents(ack.cashOutMultiplier ?? 'NaN');
          record.payoutMicro = ack.payoutMicro;
        } else record.reason = ack.reason ?? 'unknown';
      })
      .catch(() => {
        record.ackAt = epochMs();
        record.ok = false;
        record.reason = 'ack_timeout';
      });
  }

  // `event`: place_bet, or a gems play (D41), whose ack is a bet's; `then`: after the ack (or
  // its timeout) is recorded
  private placeBet(socket: Socket, event: 'place_bet' | 'play', payload: Record<string, unknown>, record: BetRecord, then?: (ack: BetAck) => void): void {
    record.sentAt = epochMs();
    this.bets.push(record);
    socket
      .timeout(ACK_TIMEOUT_MS)
      .emitWithAck(event, payload)
      .then((ack: BetAck) => {
        record.ackAt = epochMs();
        record.ok = ack.ok === true;
        if (ack.ok) {
          record.betId = ack.betId;
          record.roundId = ack.roundId;
        } else record.reason = ack.reason ?? 'unknown';
        then?.(ack);
      })
      .catch(() => {
        record.ackAt = epochMs();
        record.ok = false;
        record.reason = 'ack_timeout';
        then?.({ ok: false, reason: 'ack_timeout' });
      });
  }

  close(): void {
    this.closing = true;
    for (const seat of this.gemsSeats) clearTimeout(seat.timer);
    for (const socket of this.sockets) socket.close();
  }
}

// A connection counts once the service has sent `connected` (D4); listeners that must see
// the first messages are attached by `prepare` before the handshake starts.
function handshake(baseUrl: string, token: string, prepare: (socket: Socket) => void = () => undefined): Promise<Socket> {
  const socket = io(baseUrl, { path: '/socket.io', auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true });
  prepare(socket);
  return new Promise((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      socket.off('connect_error', refused);
      socket.off('disconnect', dropped);
    };
    const fail = (reason: string) => {
      finish();
      socket.close();
      reject(new Error(reason));
    };
    const refused = (err: Error) => fail(err.message);
    // the service ends a connection whose set-up failed (realtime/server.ts)
    const dropped = (reason: string) => fail(reason.replace(/ /g, '_'));
    const timer = setTimeout(() => fail('timeout'), CONNECT_TIMEOUT_MS);
    socket.once('connect_error', refused);
    socket.once('disconnect', dropped);
    socket.once('connected', () => {
      finish();
      resolve(socket);
    });
  });
}
