import { expect } from 'chai';
import { advanceCycle, currentCycle, currentTerm } from '../../src/shared/game/rounds/clock.js';
import type { EngineJob } from '../../src/shared/platform/queues.js';
import { setGameConfig, type GameConfigValues } from '../../src/shared/game/operators/game-config.js';
import type { OperatorSettings } from '../../src/shared/game/operators/operators.js';
import type { WalletCall } from '../../src/shared/platform/db/client.js';
import type { Harness, TestOperator } from './harness.js';
import { Player } from './player.js';

// Helpers shared by the game suites.

// A fresh operator (engines are per operator) whose dice game runs short windows.
export async function operatorWith(
  h: Harness,
  config: Partial<GameConfigValues> = {},
  settings: Partial<OperatorSettings> = {},
): Promise<TestOperator> {
  const operator = await h.onboard(settings);
  await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {
    bettingWindowMs: 1000,
    rollingWindowMs: 300,
    cooldownMs: 200,
    ...config,
  });
  return operator;
}

// Polls until probe returns something truthy; bounded, never a fixed sleep. intervalMs: a
// probe through a rate-limited route polls slower than the limit.
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export type SeatedPlayer = { player: Player; playerRef: string; sessionId: string; token: string; connected: any };

// A player funded at the simulator, with a launched session, connected (D4 `connected` seen).
export async function seatPlayer(h: Harness, operator: TestOperator, balanceMicro: bigint): Promise<SeatedPlayer> {
  const body = operator.sessionBody();
  const playerRef = body.playerRef as string;
  h.wallet.setBalance(playerRef, 'EUR', balanceMicro);
  const launch = await operator.request('POST', '/v1/session', body);
  expect(launch.status, launch.text).to.equal(200);
  const token = launch.body.sessionToken as string;
  const player = await Player.connect(h.baseUrl, token);
  const connected = await player.waitFor('connected');
  return { player, playerRef, sessionId: launch.body.sessionId as string, token, connected };
}

// The player's betting window once more than leftMs of it remain: the current one if it
// has that much left (as `connected` or the last round_state told), else the next.
export async function bettingWindowWithRoom(player: Player, leftMs: number, timeoutMs = 15_000): Promise<void> {
  const roomFor = (state: { phase?: string; phaseEndsAt?: string | null } | null | undefined) =>
    state?.phase === 'BETTING_OPEN' && state.phaseEndsAt != null && Date.parse(state.phaseEndsAt) - Date.now() > leftMs;
  const latest = player.messages
    .map((m) => (m.event === 'round_state' ? m.payload : m.event === 'connected' ? m.payload.roundState : undefined))
    .filter((state) => state !== undefined)
    .at(-1);
  if (!roomFor(latest)) await player.next('round_state', roomFor, timeoutMs);
}

// every role but the scheduler: no clock runs, so a cycle moves only when the test moves it
// (tick)
export const ROLES_WITHOUT_CLOCK = ['api', 'realtime', 'bet', 'settle', 'rollback'] as const;

// One tick of a clock the test moves by hand, run as the scheduler whose term Postgres
// records would run it (D29).
export async function tick(h: Harness, job: EngineJob): Promise<void> {
  await advanceCycle(h.svc, job, await currentTerm(h.svc));
}

// the stake of each bet tableWithBets places: 1.00
export const TABLE_STAKE_MICRO = 1_000_000n;

// A table whose cycle the test opened (PENDING -> BETTING_OPEN), with one accepted LOW bet of
// TABLE_STAKE_MICRO per player, each player funded with `funds`. Needs a harness without the clock.
export async function tableWithBets(h: Harness, operator: TestOperator, players: number, funds: bigint) {
  const seats = [];
  for (let i = 0; i < players; i++) seats.push(await seatPlayer(h, operator, funds));
  const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' }));
  await tick(h, { cycleId: pending.id, from: 'PENDING' });
  const acks = await Promise.all(seats.map((s) => s.player.request('place_bet', { side: 'LOW', amountMicro: TABLE_STAKE_MICRO.toString() })));
  expect(acks.every((a) => a.ok), JSON.stringify(acks)).to.equal(true);
  return { cycleId: pending.id, seats, roundIds: acks.map((a) => a.roundId as string) };
}

// a wallet_calls row as the round detail reports it (D10), written out here rather than
// taken from round-view.ts, so that the tests check the service's view against their own
export const walletCallAsReported = (call: WalletCall) => ({
  endpoint: call.endpoint,
  requestUuid: call.requestUuid,
  transactionUuid: call.transactionUuid,
  attempt: call.attempt,
  status: call.status,
  httpStatus: call.httpStatus,
  latencyMs: call.latencyMs,
  createdAt: call.createdAt.toISOString(),
  respondedAt: call.respondedAt === null ? null : call.respondedAt.toISOString(),
});

// D44: how the reads name the profile of a test session (the harness and the round fixtures
// launch them as MT, a code without a profile of its own), written out here rather than taken
// from the service's table
export const MT_UNDER_DEFAULT = {
  code: 'MT',
  profile: 'default',
  rules: { minRoundMs: 0, autoplay: true, realityCheckMinutes: null, showElapsedTime: false, showNetPosition: false, maxStakeMicro: null },
};
