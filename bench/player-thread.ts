import { parentPort, workerData } from 'node:worker_threads';
import { Players, type PlayerSetup } from './players.js';
import { answerRequests } from './thread.js';
import type { BenchSession } from './sessions.js';

// One thread of players (player-pool.ts, thread.ts): its own event loop, so that a busy
// thread's delay does not land in every player's measurements.

export type ThreadRequest =
  | { kind: 'connect'; sessions: BenchSession[]; ratePerSecond: number; start: number }
  | { kind: 'betting'; on: boolean }
  | { kind: 'status' }
  | { kind: 'collect' }
  | { kind: 'close' };

// what draining needs: bets and cash-outs not yet answered, accepted bets without their round_result, and
// the rounds won since the last status (the load generator checks their /wallet/win)
export type ThreadStatus = { sent: number; accepted: number; unacked: number; unresolved: number; wonRoundIds: string[] };

const setup = workerData as PlayerSetup;
const players = new Players(setup);
let reportedWins = new Set<string>();

async function answer(request: ThreadRequest): Promise<unknown> {
  switch (request.kind) {
    case 'connect':
      await players.connectAll(request.sessions, request.ratePerSecond, request.start);
      return players.connected;
    case 'betting':
      players.setBetting(request.on);
      return null;
    case 'status': {
      const accepted = players.bets.filter((bet) => bet.ok);
      const won = [...players.results].filter(([roundId, result]) => result.won && !reportedWins.has(roundId)).map(([roundId]) => roundId);
      reportedWins = new Set([...reportedWins, ...won]);
      const status: ThreadStatus = {
        sent: players.bets.length,
        accepted: accepted.length,
        unacked: players.bets.filter((bet) => bet.ackAt === undefined).length + players.cashOuts.filter((cashOut) => cashOut.ackAt === undefined).length,
        unresolved: accepted.filter((bet) => !players.results.has(bet.roundId!)).length,
        wonRoundIds: won,
      };
      return status;
    }
    case 'collect':
      return {
        bets: players.bets,
        rollingEndsAt: [...players.rollingEndsAt],
        flightStartedAt: [...players.flightStartedAt],
        cashOuts: players.cashOuts,
        results: [...players.results],
        connectLatenciesMs: players.connectLatenciesMs,
        failures: players.failures,
        connected: players.connected,
        eventLoopDelay: players.eventLoopDelay,
      };
    case 'close':
      players.close();
      return null;
  }
}

answerRequests(answer, parentPort!);
