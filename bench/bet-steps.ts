import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { BET_STEPS, type BetStep } from '../src/shared/platform/bet-steps.js';
import { round, summarize, type Summary } from './stats.js';

// `--trace-bets`: the time between consecutive steps of each accepted bet, from the player's
// send to the ack at the player (src/shared/platform/bet-steps.ts names the service's steps, and
// trace-subscriber.ts records them in each service process). Every
// time is this machine's clock (epoch ms with sub-millisecond resolution), in the players'
// threads and in every service process alike. Beside each step's distribution, its mean over
// the slowest acks says where the tail spends its time: a tail made of one slow step shows
// there; one where every step is slower together shows everywhere.

// the bet job's queue hop: absent where the realtime node debits its own bets (debit.ts)
export const QUEUE_HOP_STEPS: readonly BetStep[] = ['queued', 'picked_up'];

export type BetStepTimes = Map<string, Partial<Record<BetStep, number>>>;

// the player's side of the path around the service's steps
type PathPoint = 'sent' | BetStep | 'at the player';

export type BetStepsReport = {
  // accepted bets with every step recorded (a demo bet has no `audited` nor `debited` and is left out)
  bets: number;
  // which acks count as the slowest: the slowest hundredth, by the player's ack latency
  slowestCount: number;
  steps: { from: PathPoint; to: PathPoint; ms: Summary; slowestMeanMs: number }[];
  // from the handler to the acceptance: the span the bet path's skeleton runs (skeleton.ts)
  receivedToAcceptedMs: Summary;
};

// reads every process's <pid>.jsonl of `[betId, step, epochMs]` lines
export async function readBetSteps(dir: string): Promise<BetStepTimes> {
  const times: BetStepTimes = new Map();
  for (const name of (await readdir(dir)).filter((file) => file.endsWith('.jsonl'))) {
    for (const line of (await readFile(path.join(dir, name), 'utf8')).split('\n')) {
      if (!line) continue;
      const [betId, step, at] = JSON.parse(line) as [string, BetStep, number];
      const bet = times.get(betId) ?? {};
      // a redelivered job records a step twice: the first is the bet's path
      bet[step] ??= at;
      times.set(betId, bet);
    }
  }
  return times;
}

export type AckedBet = { betId: string; sentAt: number; ackAt: number };

export function betSteps(times: BetStepTimes, acked: readonly AckedBet[]): BetStepsReport {
  const queued = acked.some((bet) => times.get(bet.betId)?.queued !== undefined);
  const serviceSteps = BET_STEPS.filter((step) => queued || !QUEUE_HOP_STEPS.includes(step));
  const PATH: PathPoint[] = ['sent', ...serviceSteps, 'at the player'];
  const paths = acked.flatMap((bet) => {
    const steps = times.get(bet.betId);
    if (!steps || serviceSteps.some((step) => steps[step] === undefined)) return [];
    const at: Record<PathPoint, number> = { ...(steps as Record<BetStep, number>), sent: bet.sentAt, 'at the player': bet.ackAt };
    return [{ at, ackMs: bet.ackAt - bet.sentAt }];
  });
  const slowest = [...paths].sort((a, b) => b.ackMs - a.ackMs).slice(0, Math.ceil(paths.length / 100));
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
  return {
    bets: paths.length,
    slowestCount: slowest.length,
    receivedToAcceptedMs: summarize(paths.map((path) => path.at.accepted - path.at.received)),
    steps: PATH.slice(1).map((to, i) => {
      const from = PATH[i]!;
      const between = (path: (typeof paths)[number]) => path.at[to] - path.at[from];
      return { from, to, ms: summarize(paths.map(between)), slowestMeanMs: round(mean(slowest.map(between)), 2) };
    }),
  };
}
