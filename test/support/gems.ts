import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { deriveGems, type GemsOutcome } from '../../src/shared/domain/games/gems-math.js';
import { setGameConfig } from '../../src/shared/game/operators/game-config.js';
import type { Harness, TestOperator } from './harness.js';
import { Player } from './player.js';

// Gem Vault plays a test can count on (D35, D41): a sandbox operator fixes a session's seeds, so
// the outcome of its play at each nonce is known before the play. A seed with the outcomes a
// test needs is found by counting, in a fixed order, so every run finds the same.

export const GEMS_CLIENT_SEED = 'gems-test';

// D41: a seed whose play at nonce 0 hits the jackpot, found once by searching client seeds
// (about 1 in 5 million plays hits)
export const JACKPOT_SEEDS = { serverSeed: '8ce5fe27f75a5ff7517d6a14d74d0a4a15e0fa5a1a6badabaa0a8df086efd946', clientSeed: 'jackpot-5263869' };

type Wanted = (outcome: GemsOutcome, nonce: number) => boolean;

// the first server seed (in a fixed order) whose plays at nonces 0, 1, ... are each as wanted
// (at this stake, bought or not)
export function gemsSeed(wanted: Wanted[], { stakeMicro = 1_000_000n, featureBuy = false } = {}): string {
  for (let i = 0; i < 200_000; i += 1) {
    const serverSeed = createHash('sha256').update(`gems-seed-${i}`).digest('hex');
    const fits = wanted.every((want, nonce) =>
      want(deriveGems({ serverSeed, clientSeed: GEMS_CLIENT_SEED, nonce, stakeMicro, featureBuy, jackpotPoolMicro: 0n }), nonce),
    );
    if (fits) return serverSeed;
  }
  throw new Error('no seed with the plays wanted');
}

export const won: Wanted = (o) => o.payoutMicro > 0n && !o.events.some((e) => e.type === 'JACKPOT');
export const lost: Wanted = (o) => o.payoutMicro === 0n;
export const triggered: Wanted = (o) => o.events.some((e) => e.type === 'FEATURE_TRIGGER');

// a sandbox operator whose Gem Vault (EUR) is configured with these keys
export async function gemsOperator(h: Harness, keys: Record<string, string | number> = {}): Promise<TestOperator> {
  const operator = await h.onboard({ sandbox: true });
  await setGameConfig(h.svc.db, operator.operatorId, 'gems', 'EUR', {}, { minRoundMs: 0, ...keys });
  return operator;
}

export type GemsSeat = { player: Player; playerRef: string; sessionId: string; token: string; connected: any };

// a funded player of the operator's Gem Vault whose plays follow these seeds
export async function seatGemsPlayer(
  h: Harness,
  operator: TestOperator,
  seeds: { serverSeed: string; clientSeed?: string },
  balanceMicro = 1_000_000_000n,
  overrides: Record<string, unknown> = {},
): Promise<GemsSeat> {
  const sandboxSeeds = { serverSeed: seeds.serverSeed, clientSeed: seeds.clientSeed ?? GEMS_CLIENT_SEED };
  const body = operator.sessionBody({ gameCode: 'gems', sandboxSeeds, ...overrides });
  const playerRef = body.playerRef as string;
  h.wallet.setBalance(playerRef, 'EUR', balanceMicro);
  const launch = await operator.request('POST', '/v1/session', body, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });
  expect(launch.status, launch.text).to.equal(200);
  const player = await Player.connect(h.baseUrl, launch.body.sessionToken as string);
  const connected = await player.waitFor('connected');
  return { player, playerRef, sessionId: launch.body.sessionId as string, token: launch.body.sessionToken as string, connected };
}
