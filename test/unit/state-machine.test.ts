import { expect } from 'chai';
import { BetStatus as BetStatusEnum, RoundState as RoundStateEnum } from '../../src/shared/platform/db/generated/enums.js';
import {
  BET_MACHINE,
  ROUND_MACHINE,
  ROUNDS_IN_PLAY,
  allows,
  incoherences,
  type StateMachine,
} from '../../src/shared/domain/state-machine.js';

// contract 3.1, 3.2: the bet and round tables of src/shared/domain/state-machine.ts are coherent
// and name exactly the states the schema's enums (bet_status, round_state) allow.

describe('state machine (contract 3.1, 3.2)', () => {
  it('a bet’s states are the bet_status enum’s', () => {
    expect([...BET_MACHINE.states].sort()).to.deep.equal(Object.values(BetStatusEnum).sort());
  });

  it('a round’s states are the round_state enum’s', () => {
    expect([...ROUND_MACHINE.states].sort()).to.deep.equal(Object.values(RoundStateEnum).sort());
  });

  for (const machine of [BET_MACHINE, ROUND_MACHINE] as StateMachine<string>[]) {
    it(`the ${machine.table} table is coherent: every state reached from creation, terminal states without exits`, () => {
      expect(incoherences(machine)).to.deep.equal([]);
    });
  }

  it('a bet is created PENDING and nothing leaves REJECTED, SETTLED or VOIDED', () => {
    expect(BET_MACHINE.transitions.filter((t) => t.from === null).map((t) => t.to)).to.deep.equal(['PENDING']);
    for (const from of ['REJECTED', 'SETTLED', 'VOIDED'] as const) {
      for (const to of BET_MACHINE.states) expect(allows(BET_MACHINE, from, to), `${from} → ${to}`).to.equal(false);
    }
    // a refused bet stays refused, whatever answer arrives later (D27)
    expect(allows(BET_MACHINE, 'REJECTED', 'ACCEPTED')).to.equal(false);
    expect(allows(BET_MACHINE, 'PENDING', 'SETTLED')).to.equal(false);
  });

  it('a round is voided only before its outcome, or when its win is given up (D23)', () => {
    const intoVoided = ROUND_MACHINE.transitions.filter((t) => t.to === 'VOIDED').map((t) => t.from);
    expect(intoVoided).to.deep.equal(['BETTING_OPEN', 'ROLLING', 'SETTLED']);
    expect(allows(ROUND_MACHINE, 'RESULT', 'VOIDED')).to.equal(false);
  });

  it('a round is in play until SETTLED or VOIDED (rgs_rounds, D15)', () => {
    expect(ROUNDS_IN_PLAY).to.deep.equal(['BETTING_OPEN', 'ROLLING', 'RESULT']);
  });

  it('finds what is wrong with an incoherent table', () => {
    const broken: StateMachine<'A' | 'B' | 'C' | 'D'> = {
      table: 'bets',
      column: 'status',
      states: ['A', 'B', 'C', 'D'],
      terminal: ['B', 'C'],
      transitions: [
        { from: null, to: 'A', when: '', cites: '' },
        { from: 'A', to: 'B', when: '', cites: '' },
        { from: 'B', to: 'A', when: '', cites: '' },
        { from: 'D', to: 'C', when: '', cites: '' },
      ],
    };
    expect(incoherences(broken)).to.deep.equal([
      'B is terminal but has exits (A)',
      'C cannot be reached',
      'D cannot be reached',
    ]);
  });
});
