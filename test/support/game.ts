import { setGameConfig, type GameConfigValues } from '../../src/shared/operators/game-config.js';
import type { Harness, TestOperator } from './harness.js';

// Helpers shared by the game suites.

// A fresh operator (engines are per operator) whose dice game runs short windows.
export async function operatorWith(h: Harness, config: Partial<GameConfigValues> = {}): Promise<TestOperator> {
  const operator = await h.onboard();
  await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {
    bettingWindowMs: 1000,
    rollingWindowMs: 300,
    cooldownMs: 200,
    ...config,
  });
  return operator;
}

// Polls until probe returns something truthy; bounded, never a fixed sleep.
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
