// The states of a bet and of a round, and the moves between them, as one table (contract
// 3.1, 3.2). Every statement that writes bets.status or rounds.state is checked against it
// by test/unit/state-writes.test.ts; a write the table does not allow, or one the test
// cannot classify, fails the suite.

// contract 3.2; PENDING is ours: the debit is in flight (the Postgres enum bet_status)
export const BET_STATUS = {
  PENDING: 'PENDING',
  ACCEPTED: 'ACCEPTED',
  REJECTED: 'REJECTED',
  SETTLED: 'SETTLED',
  VOIDED: 'VOIDED',
} as const;
export type BetStatus = (typeof BET_STATUS)[keyof typeof BET_STATUS];

// contract 3.1 (the Postgres enum round_state)
export const ROUND_STATE = {
  BETTING_OPEN: 'BETTING_OPEN',
  ROLLING: 'ROLLING',
  RESULT: 'RESULT',
  SETTLED: 'SETTLED',
  VOIDED: 'VOIDED',
} as const;
export type RoundState = (typeof ROUND_STATE)[keyof typeof ROUND_STATE];

// from null: the row is created in `to`
export type Transition<S extends string> = { from: S | null; to: S; when: string; cites: string };

export type StateMachine<S extends string> = {
  // the table and column that hold the state
  table: 'bets' | 'rounds';
  column: 'status' | 'state';
  states: readonly S[];
  // no move leaves these
  terminal: readonly S[];
  transitions: readonly Transition<S>[];
};

const B = BET_STATUS;
export const BET_MACHINE: StateMachine<BetStatus> = {
  table: 'bets',
  column: 'status',
  states: Object.values(BET_STATUS),
  terminal: [B.REJECTED, B.SETTLED, B.VOIDED],
  transitions: [
    { from: null, to: B.PENDING, when: 'place_bet passes the rules that need no wallet; the debit’s audit row is written', cites: 'contract 3.2, 8.2' },
    { from: B.PENDING, to: B.ACCEPTED, when: 'the wallet answers the debit with success; the round is created', cites: 'contract 3.2' },
    {
      from: B.PENDING,
      to: B.REJECTED,
      when: 'a clean refusal, or an uncertain debit (rolled back), or one answered too late to join its round; recovery rejects a debit nobody decided',
      cites: 'contract 3.2, 7.1, D22, D27, D29',
    },
    {
      from: B.ACCEPTED,
      to: B.SETTLED,
      when: 'a losing bet when its round settles; a winning one when its win call succeeds, or is answered RS_ERROR_TRANSACTION_DOES_NOT_EXIST (payout 0)',
      cites: 'contract 3.2, D23',
    },
    {
      from: B.ACCEPTED,
      to: B.VOIDED,
      when: 'its round is voided (terminate, outcome derivation failure, crash recovery), or its win is abandoned after 24 hours; the stake is rolled back',
      cites: 'contract 3.2, 8.6, D23, D29',
    },
  ],
};

const R = ROUND_STATE;
export const ROUND_MACHINE: StateMachine<RoundState> = {
  table: 'rounds',
  column: 'state',
  states: Object.values(ROUND_STATE),
  terminal: [R.VOIDED],
  transitions: [
    { from: null, to: R.BETTING_OPEN, when: 'its bet is accepted while the cycle is BETTING_OPEN', cites: 'contract 3.1, D1' },
    {
      from: null,
      to: R.ROLLING,
      when: 'its bet’s debit is answered after the betting window closed, before the cycle leaves ROLLING',
      cites: 'contract 3.1, D1',
    },
    { from: R.BETTING_OPEN, to: R.ROLLING, when: 'the cycle moves to ROLLING, in the same statement', cites: 'contract 3.1, D1' },
    { from: R.ROLLING, to: R.RESULT, when: 'the outcome is derived and persisted', cites: 'contract 3.1' },
    { from: R.RESULT, to: R.SETTLED, when: 'settlement: a loss settled at once, a win gets its win job', cites: 'contract 3.1' },
    { from: R.BETTING_OPEN, to: R.VOIDED, when: 'the operator terminates the session, or recovery finds no outcome', cites: 'contract 3.1, 8.6, D29' },
    {
      from: R.ROLLING,
      to: R.VOIDED,
      when: 'the operator terminates the session, the outcome cannot be derived, or recovery finds none',
      cites: 'contract 3.1, 8.6, D29',
    },
    { from: R.SETTLED, to: R.VOIDED, when: 'its win is abandoned after 24 hours (win_exhausted): the stake is refunded', cites: 'D23, contract 4.2' },
  ],
};

// A round SETTLED or VOIDED has its outcome, or its void, for good: its proof can be given
// (contract 2.11) and its seed revealed; the other states are in play (rgs_rounds, D15).
export const ROUNDS_FINISHED: readonly RoundState[] = [R.SETTLED, R.VOIDED];
export const ROUNDS_IN_PLAY: readonly RoundState[] = Object.values(ROUND_STATE).filter((s) => !ROUNDS_FINISHED.includes(s));

// whether the machine allows the move; from null: creating the row in `to`
export const allows = <S extends string>(machine: StateMachine<S>, from: S | null, to: S): boolean =>
  machine.transitions.some((t) => t.from === from && t.to === to);

// What is wrong with a machine's table, one sentence a fault (none for a coherent one):
// every state is reached from creation, a terminal state has no exit, every other state
// has one, and each move is named once.
export function incoherences<S extends string>(machine: StateMachine<S>): string[] {
  const faults: string[] = [];
  const known = new Set<S>(machine.states);
  for (const t of machine.transitions) {
    if (t.from !== null && !known.has(t.from)) faults.push(`${t.from} → ${t.to}: ${t.from} is not a state`);
    if (!known.has(t.to)) faults.push(`${t.from ?? '(created)'} → ${t.to}: ${t.to} is not a state`);
  }
  const seen = new Set<string>();
  for (const t of machine.transitions) {
    const key = `${t.from ?? '(created)'} → ${t.to}`;
    if (seen.has(key)) faults.push(`${key} is listed twice`);
    seen.add(key);
  }
  const reached = new Set<S>(machine.transitions.filter((t) => t.from === null).map((t) => t.to));
  if (reached.size === 0) faults.push('no transition creates a row');
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of machine.transitions) {
      if (t.from !== null && reached.has(t.from) && !reached.has(t.to)) {
        reached.add(t.to);
        grew = true;
      }
    }
  }
  for (const state of machine.states) {
    if (!reached.has(state)) faults.push(`${state} cannot be reached`);
    const exits = machine.transitions.filter((t) => t.from === state);
    const terminal = machine.terminal.includes(state);
    if (terminal && exits.length > 0) faults.push(`${state} is terminal but has exits (${exits.map((t) => t.to).join(', ')})`);
    if (!terminal && exits.length === 0) faults.push(`${state} has no exit and is not terminal`);
  }
  return faults;
}

// docs/architecture.md "States of a bet and of a round": the machine as a mermaid
// diagram and a table (test/unit/architecture-doc.test.ts holds the doc to it)
export function stateMachineMarkdown(machine: StateMachine<string>): string {
  const name = (s: string | null) => s ?? '[*]';
  const diagram = [
    '```mermaid',
    'stateDiagram-v2',
    ...machine.transitions.map((t) => `    ${name(t.from)} --> ${t.to}`),
    ...machine.terminal.map((s) => `    ${s} --> [*]`),
    '```',
  ];
  const table = [
    `| From | To | When | Cites |`,
    `| --- | --- | --- | --- |`,
    ...machine.transitions.map((t) => `| ${t.from ?? '(created)'} | ${t.to} | ${t.when} | ${t.cites} |`),
  ];
  return [...diagram, '', ...table].join('\n');
}
