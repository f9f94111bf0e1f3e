import { expect } from 'chai';
import { arrivalOffsetMs, type ArrivalPlan } from '../../../bench/arrivals.js';

// When the bench's players arrive decides whether the operators' engines run in step
// (every round of every operator at once) or at phases spread over a cycle.

const plan = (engineStarts: ArrivalPlan['engineStarts']): ArrivalPlan => ({ ratePerSecond: 200, operators: 50, engineStarts, cycleMs: 1500 });
// players are dealt to the operators in turn: session i belongs to operator i % operators
const firstArrivalPerOperator = (p: ArrivalPlan, players: number) => {
  const first = new Map<number, number>();
  for (let i = 0; i < players; i++) {
    const operator = i % p.operators;
    first.set(operator, Math.min(first.get(operator) ?? Infinity, arrivalOffsetMs(i, p)));
  }
  return [...first.values()].sort((a, b) => a - b);
};

describe('bench arrivals', () => {
  it('aligned: every operator has its first player within the first quarter second, at the session rate', () => {
    const starts = firstArrivalPerOperator(plan('aligned'), 2000);
    expect(starts[0]).to.equal(0);
    expect(starts.at(-1)).to.equal(245);
    expect(arrivalOffsetMs(1999, plan('aligned'))).to.equal(9995);
  });

  it('staggered: the operators first players are spread evenly over one cycle', () => {
    const starts = firstArrivalPerOperator(plan('staggered'), 2000);
    expect(starts).to.deep.equal(Array.from({ length: 50 }, (_, k) => k * 30));
  });

  it('staggered: no player arrives before its operator engine has started, nor earlier than the session rate allows', () => {
    const p = plan('staggered');
    for (let i = 0; i < 2000; i++) {
      const at = arrivalOffsetMs(i, p);
      expect(at).to.be.at.least((i * 1000) / p.ratePerSecond);
      expect(at).to.be.at.least(((i % p.operators) * p.cycleMs) / p.operators);
    }
    // after the first cycle the players keep the session rate
    expect(arrivalOffsetMs(1999, p)).to.equal(9995);
  });
});
