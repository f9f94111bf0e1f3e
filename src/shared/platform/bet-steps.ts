import { channel } from 'node:diagnostics_channel';
import { epochMs } from './clock.js';

// The steps of a bet's path through the service, published on the diagnostics channel
// `rgs:bet-step` for whoever wants to see where an acknowledgement spends its time. Nothing
// is built or published while no one subscribes. Times are epoch milliseconds with
// sub-millisecond resolution (clock.ts), comparable across the processes of one machine.
//
// The steps, in the order a real-money bet passes them:
// - received: place_bet reached the realtime node's handler;
// - placed: its bet row is written (place.ts, with the bets placed at the same moment);
// - queued: its bet job is in the queue;
// - picked_up: a bet worker started the job;
//   (neither where the realtime node debits its own bets: debit.ts)
// - audited: the debit's audit row is committed (contract 2.13), just before the call (where
//   the realtime node debits its own bets, by the statement that placed the bet: the same
//   moment as placed);
// - debited: the wallet answered /wallet/bet;
// - accepted: the acceptance statement returned;
// - acked: the realtime node wrote the ack to the player's socket.
// A demo bet has no audited and no debited step. A redelivered bet job publishes its steps again.
export const BET_STEPS = ['received', 'placed', 'queued', 'picked_up', 'audited', 'debited', 'accepted', 'acked'] as const;
export type BetStep = (typeof BET_STEPS)[number];

export const BET_STEP_CHANNEL = 'rgs:bet-step';
export type BetStepMessage = { betId: string; step: BetStep; at: number };

const steps = channel(BET_STEP_CHANNEL);

// `at`: a moment taken earlier with epochMs(), for a step whose bet id came later
export function betStep(betId: string, step: BetStep, at?: number): void {
  if (steps.hasSubscribers) steps.publish({ betId, step, at: at ?? epochMs() } satisfies BetStepMessage);
}
