import { io, type Socket } from 'socket.io-client';
import { arrivalOffsetMs, type EngineStarts } from './arrivals.js';
import { LoopDelayMonitor, type LoopDelay } from './event-loop.js';
import type { BenchSession } from './sessions.js';
import { epochMs } from '../src/shared/platform/clock.js';

// The players: one Socket.IO client each (WebSocket transport only, contract 4.4) that bets
// once in every round while betting is on, and records what a browser would see and when.

export type BetRecord = {
  cycleId: string;
  sentAt: number;
  ackAt?: number;
  ok?: boolean;
  reason?: string;
  betId?: string;
  roundId?: string;
};

export type ResultRecord = { at: number; cycleId: string; won: boolean };

// 1.00 EUR, inside the default stake range (D9)
const STAKE_MICRO = '100000';
const CONNECT_TIMEOUT_MS = 10_000;
// the service answers a bet within the wallet timeout plus its own 10 s (realtime/server.ts)
const ACK_TIMEOUT_MS = 20_000;

type RoundState = { cycleId: string; phase: string; phaseEndsAt: string | null };

// What the players saw, as the report reads it (one thread's, or all threads' merged).
export type PlayerRecords = {
  bets: BetRecord[];
  rollingEndsAt: Map<string, number>;
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
  operators: number;
  bettingWindowMs: number;
  betSpread: number;
  engineStarts: EngineStarts;
  cycleMs: number;
};
type RoundResult = { roundId: string; cycleId: string; won: boolean };
type BetAck = { ok: boolean; betId?: string; roundId?: string; reason?: string };

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
  readonly connectLatenciesMs: number[] = [];
  readonly failures: string[] = [];
  private readonly sockets: Socket[] = [];
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
    let socket: Socket;
    try {
      socket = await handshake(this.setup.baseUrl, session.token, (opening) => {
        opening.on('round_state', (state: RoundState) => this.onRoundState(opening, side, state));
        opening.on('round_result', (result: RoundResult) => {
          this.results.set(result.roundId, { at: epochMs(), cycleId: result.cycleId, won: result.won });
        });
        opening.on('session_ended', () => this.failures.push('session_ended'));
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
  }

  private onRoundState(socket: Socket, side: string, state: RoundState): void {
    if (state.phase === 'ROLLING' && state.phaseEndsAt && !this.rollingEndsAt.has(state.cycleId)) {
      this.rollingEndsAt.set(state.cycleId, Date.parse(state.phaseEndsAt));
    }
    if (state.phase !== 'BETTING_OPEN' || !this.betting) return;
    setTimeout(() => {
      if (this.betting) this.placeBet(socket, side, state.cycleId);
    }, Math.random() * this.setup.bettingWindowMs * this.setup.betSpread);
  }

  private placeBet(socket: Socket, side: string, cycleId: string): void {
    const record: BetRecord = { cycleId, sentAt: epochMs() };
    this.bets.push(record);
    socket
      .timeout(ACK_TIMEOUT_MS)
      .emitWithAck('place_bet', { side, amountMicro: STAKE_MICRO })
      .then((ack: BetAck) => {
        record.ackAt = epochMs();
        record.ok = ack.ok === true;
        if (ack.ok) {
          record.betId = ack.betId;
          record.roundId = ack.roundId;
        } else record.reason = ack.reason ?? 'unknown';
      })
      .catch(() => {
        record.ackAt = epochMs();
        record.ok = false;
        record.reason = 'ack_timeout';
      });
  }

  close(): void {
    this.closing = true;
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
