// When each player connects. Players arrive at the session rate, dealt to the
// operators in turn (sessions.ts), and an operator's engine starts with its first connected
// player (clock.ts). Every cycle of the bench's operators has the same length, so the moment
// each engine starts fixes its phase for the whole run:
// - aligned: every operator's first player arrives within the first moments, every engine
//   runs in step, and every round's bets and settlements of all operators fall together;
//   the worst case, as if all players were one operator's.
// - staggered: operators start independently, as real casinos do; operator k's players
//   arrive no earlier than k / operators of a cycle, so the engines' phases are spread evenly
//   over one cycle.

export type EngineStarts = 'aligned' | 'staggered';

export type ArrivalPlan = { ratePerSecond: number; operators: number; engineStarts: EngineStarts; cycleMs: number };

// the player of session `index`, in ms after the first player's arrival
export function arrivalOffsetMs(index: number, plan: ArrivalPlan): number {
  const atRate = (index * 1000) / plan.ratePerSecond;
  if (plan.engineStarts === 'aligned') return atRate;
  const operator = index % plan.operators;
  return Math.max(atRate, (operator * plan.cycleMs) / plan.operators);
}
