import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { crashFromHash } from '../../src/shared/domain/games/crash.js';
import { roundHash } from '../../src/shared/domain/seeds.js';
import { setGameConfig } from '../../src/shared/game/operators/game-config.js';
import type { Harness, TestOperator } from './harness.js';
import { Player } from './player.js';

// Crash rounds a test can count on (D35, D40): a sandbox operator fixes a session's seeds, so
// the crash point of its round at nonce 0 is known before the bet. A seed for a crash point in
// a range is found by counting: seeds are tried in a fixed order, so every run finds the same.

export const CRASH_CLIENT_SEED = 'crash-test';
const EDGE = 3000n;

// the first server seed (in a fixed order) whose crash point at nonce 0 is within [lo, hi] cents
export function crashSeed(lo: bigint, hi: bigint, commissionMicro = EDGE): { serverSeed: string; crashCents: bigint } {
  for (let i = 0; i < 1_000_000; i += 1) {
    const serverSeed = createHash('sha256').update(`crash-seed-${i}`).digest('hex');
    const { crashCents } = crashFromHash(roundHash({ serverSeed, clientSeed: CRASH_CLIENT_SEED, nonce: 0 }), commissionMicro);
    if (crashCents >= lo && crashCents <= hi) return { serverSeed, crashCents };
  }
  throw new Error(`no seed with a crash point in [${lo}, ${hi}]`);
}

// the first server seed (in the same order) whose crash points at nonces 0, 1, ... are each
// within its [lo, hi] cents: the rounds of one session, one after the other
export function crashSeedForRounds(ranges: [bigint, bigint][], commissionMicro = EDGE): { serverSeed: string; crashCents: bigint[] } {
  for (let i = 0; i < 1_000_000; i += 1) {
    const serverSeed = createHash('sha256').update(`crash-seed-${i}`).digest('hex');
    const crashCents = ranges.map((_, nonce) => crashFromHash(roundHash({ serverSeed, clientSeed: CRASH_CLIENT_SEED, nonce }), commissionMicro).crashCents);
    if (crashCents.every((cents, nonce) => cents >= ranges[nonce]![0] && cents <= ranges[nonce]![1])) return { serverSeed, crashCents };
  }
  throw new Error(`no seed with crash points in ${ranges.map(([lo, hi]) => `[${lo}, ${hi}]`).join(', ')}`);
}

// a sandbox operator whose crash game (EUR) runs with these windows
export async function crashOperator(h: Harness, windows: Record<string, string | number> = {}): Promise<TestOperator> {
  const operator = await h.onboard({ sandbox: true });
  await setGameConfig(h.svc.db, operator.operatorId, 'crash', 'EUR', {}, { bettingWindowMs: 1500, cooldownMs: 300, ...windows });
  return operator;
}

export type CrashSeat = { player: Player; playerRef: string; sessionId: string; token: string; connected: any };

// a funded player of the operator's crash game whose round at nonce 0 plays `serverSeed`
export async function seatCrashPlayer(
  h: Harness,
  operator: TestOperator,
  serverSeed: string,
  balanceMicro = 100_000_000n,
  overrides: Record<string, unknown> = {},
): Promise<CrashSeat> {
  const body = operator.sessionBody({ gameCode: 'crash', sandboxSeeds: { serverSeed, clientSeed: CRASH_CLIENT_SEED }, ...overrides });
  const playerRef = body.playerRef as string;
  h.wallet.setBalance(playerRef, 'EUR', balanceMicro);
  // signed with the service's clock, which a test may have moved
  const launch = await operator.request('POST', '/v1/session', body, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });
  expect(launch.status, launch.text).to.equal(200);
  const player = await Player.connect(h.baseUrl, launch.body.sessionToken as string);
  const connected = await player.waitFor('connected');
  return { player, playerRef, sessionId: launch.body.sessionId as string, token: launch.body.sessionToken as string, connected };
}
