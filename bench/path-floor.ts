import type { LoadedSteps } from './floors.js';
import { summarize, type Summary } from './stats.js';

// The floor of the bet acknowledgement under the run's own load ("if a target
// cannot be met on this box, show by measurement where the floor is"). A bet's ack is a
// chain of steps of the kinds the floors time; whatever the service does, it cannot finish
// the chain faster than those steps take on the same box at the same moment. The floor is
// the distribution of the chain's sum when each step is drawn at random from what that step
// was measured to cost while the players bet.
//
// The chain counts the steps of the service's bet path that cross to another process and
// wait there, each once, and nothing of the service's own work:
// - the place_bet frame in and the ack frame out, over the player's kept-alive connection:
//   one loopback exchange;
// - the debit's audit row (written before the call, contract 2.13) and the acceptance: two
//   commits that wait for the disk (the bet row's statement, whose commit does not wait for
//   it, place.ts, is not counted);
// - the bet job's add, and the worker's fetch of it: two Redis round trips (the fetch's
//   wake-up is not counted);
// - the signed /wallet/bet call: one loopback exchange.
// Steps drawn independently understate the tail, if anything: on a busy box slow steps come
// together, so the real chain's p99 sits above this one.
export type StepCounts = Record<keyof LoadedSteps, number>;

export const BET_ACK_STEPS: StepCounts = { postgresCommitMs: 2, redisPingMs: 2, loopbackHttpMs: 2 };

const DRAWS = 20_000;

export function chainFloor(samples: LoadedSteps, steps: StepCounts, draws = DRAWS, random: () => number = seeded(1)): Summary {
  const kinds = (Object.keys(steps) as (keyof LoadedSteps)[]).filter((kind) => steps[kind] > 0);
  if (kinds.some((kind) => samples[kind].length === 0)) return summarize([]);
  const sums: number[] = [];
  for (let i = 0; i < draws; i++) {
    let sum = 0;
    for (const kind of kinds) {
      const pool = samples[kind];
      for (let n = 0; n < steps[kind]; n++) sum += pool[Math.floor(random() * pool.length)]!;
    }
    sums.push(sum);
  }
  return summarize(sums);
}

// mulberry32: the same draws for the same samples, so a report can be recomputed exactly
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
