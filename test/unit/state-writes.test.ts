import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { BET_MACHINE, ROUND_MACHINE, allows, type StateMachine } from '../../src/shared/domain/state-machine.js';
import { prismaWrites, scanStatusWrites, sqlWrites, type FoundWrite, type Scan } from '../support/status-writes.js';

// contract 3.1, 3.2: every statement in src (and in a migration's function) that writes
// bets.status or rounds.state performs only moves of the table in
// src/shared/domain/state-machine.ts, and is listed here. A new writer fails this test until it is
// added to WRITERS deliberately; one the scanner cannot read fails it with its file and line.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MACHINES = { bets: BET_MACHINE, rounds: ROUND_MACHINE } as Record<'bets' | 'rounds', StateMachine<string>>;

type Writer = {
  file: string;
  table: 'bets' | 'rounds';
  // null: the row is created
  from: (string | null)[];
  to: string[];
  what: string;
  // a write with no guard of its own: the guard elsewhere in its statement (its states are
  // read from this text, which the statement must contain)...
  guard?: string;
  // ...or, where the statement has none, why only `from` can be moved from
  unguarded?: string;
};

const WRITERS: Writer[] = [
  { file: 'src/shared/game/bets/place.ts', table: 'bets', from: [null], to: ['PENDING'], what: 'placement, the intake’s batch (contract 8.2)' },
  { file: 'src/shared/game/bets/place.ts', table: 'bets', from: [null], to: ['PENDING'], what: 'placement, one bet (contract 8.2)' },
  { file: 'src/shared/game/plays/place.ts', table: 'bets', from: [null], to: ['PENDING'], what: 'an instant play placed with its own cycle (D41)' },
  {
    file: 'src/shared/game/bets/debit.ts',
    table: 'bets',
    from: ['PENDING'],
    to: ['ACCEPTED'],
    what: 'acceptance: the bets the statement locked while PENDING (contract 3.2)',
    guard: "b.status = 'PENDING'",
  },
  {
    file: 'src/shared/game/bets/debit.ts',
    table: 'rounds',
    from: [null],
    to: ['BETTING_OPEN', 'ROLLING'],
    what: 'acceptance creates the round in its cycle’s phase (contract 3.1, D1)',
  },
  { file: 'src/shared/game/bets/debit.ts', table: 'bets', from: ['PENDING'], to: ['REJECTED'], what: 'rejection, also by recovery (contract 3.2, 7.1)' },
  {
    file: 'prisma/migrations/20261130000000_rounds_follow_rolling/migration.sql',
    table: 'rounds',
    from: ['BETTING_OPEN'],
    to: ['ROLLING'],
    what: 'rgs_rounds_follow_rolling, called by the cycle’s move to ROLLING (rounds/clock.ts, D1)',
  },
  { file: 'src/shared/game/rounds/settle.ts', table: 'rounds', from: ['ROLLING'], to: ['RESULT'], what: 'the outcome persisted (contract 3.1)' },
  { file: 'src/shared/game/rounds/settle.ts', table: 'rounds', from: ['RESULT'], to: ['SETTLED'], what: 'settlement (contract 3.1)' },
  { file: 'src/shared/game/plays/resolve.ts', table: 'rounds', from: ['ROLLING'], to: ['RESULT'], what: 'an instant play derived with the jackpot\'s pool (D41)' },
  { file: 'src/shared/game/rounds/flight.ts', table: 'rounds', from: ['ROLLING'], to: ['RESULT'], what: 'a flight round’s own end: its auto cash-out or its crash (D40)' },
  { file: 'src/shared/game/rounds/flight.ts', table: 'rounds', from: ['ROLLING'], to: ['RESULT'], what: 'a cash-out, decided at its arrival stamp (D40)' },
  { file: 'src/shared/game/rounds/flight.ts', table: 'rounds', from: ['ROLLING'], to: ['RESULT'], what: 'a cash-out in a flight the node knows, decided with the session’s standing in one statement (D40)' },
  { file: 'src/shared/game/rounds/settle.ts', table: 'bets', from: ['ACCEPTED'], to: ['SETTLED'], what: 'a losing bet settled with its round (contract 3.2)' },
  { file: 'src/shared/game/rounds/voids.ts', table: 'rounds', from: ['BETTING_OPEN', 'ROLLING'], to: ['VOIDED'], what: 'a void (contract 3.1, 8.6, D29)' },
  { file: 'src/shared/game/rounds/voids.ts', table: 'bets', from: ['ACCEPTED'], to: ['VOIDED'], what: 'a void’s bet (contract 3.2)' },
  {
    file: 'src/shared/game/wallet-jobs/wallet-jobs.ts',
    table: 'bets',
    from: ['ACCEPTED'],
    to: ['SETTLED'],
    what: 'a win completed, or not known to the wallet (contract 3.2, D23)',
  },
  { file: 'src/shared/game/wallet-jobs/wallet-jobs.ts', table: 'bets', from: ['ACCEPTED'], to: ['VOIDED'], what: 'a win abandoned after 24 hours (D23)' },
  {
    file: 'src/shared/game/wallet-jobs/wallet-jobs.ts',
    table: 'rounds',
    from: ['SETTLED'],
    to: ['VOIDED'],
    what: 'a win abandoned after 24 hours voids its round (D23)',
    unguarded:
      'it runs only after its bet moved ACCEPTED → VOIDED in the same transaction, for a win job, which settlement writes with the round SETTLED',
  },
];

const sameSet = (a: readonly (string | null)[], b: readonly (string | null)[]) =>
  a.length === b.length && a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));

function guardStates(writer: Writer, machine: StateMachine<string>): string[] {
  const names = [...writer.guard!.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
  return /<>|!=|NOT\s+IN/i.test(writer.guard!) ? machine.states.filter((s) => !names.includes(s)) : names;
}

// whether a found write is this writer: same file, table, states written, and moved from
function matches(found: FoundWrite, writer: Writer): boolean {
  if (found.file !== writer.file || found.table !== writer.table || !sameSet(found.to, writer.to)) return false;
  if (found.created) return sameSet(writer.from, [null]);
  if (found.from !== null) return !writer.guard && !writer.unguarded && sameSet(found.from, writer.from);
  if (writer.guard) return found.statement.includes(writer.guard) && sameSet(guardStates(writer, MACHINES[found.table]), writer.from);
  return writer.unguarded !== undefined;
}

const describeFound = (w: FoundWrite) =>
  `${w.at}: ${w.table}.${MACHINES[w.table].column} ${w.created ? '(created)' : (w.from?.join('|') ?? '(no guard of its own)')} → ${w.to.join('|')}`;

describe('status writes (contract 3.1, 3.2)', () => {
  const scan = scanStatusWrites(ROOT, MACHINES);

  it('finds the writers (the scanner reads the sources)', () => {
    expect(scan.writes.length).to.be.greaterThan(0);
  });

  it('can read every statement that writes bets.status or rounds.state', () => {
    expect(scan.problems, `\n${scan.problems.join('\n')}\n`).to.deep.equal([]);
  });

  it('finds only listed writers, and every listed writer', () => {
    const left = [...WRITERS];
    const unlisted: string[] = [];
    for (const found of scan.writes) {
      const index = left.findIndex((writer) => matches(found, writer));
      if (index < 0) unlisted.push(`${describeFound(found)} is not listed in WRITERS`);
      else left.splice(index, 1);
    }
    const stale = left.map((w) => `${w.file}: ${w.table} ${w.from.map((s) => s ?? '(created)').join('|')} → ${w.to.join('|')} is listed but not found`);
    expect([...unlisted, ...stale], `\n${[...unlisted, ...stale].join('\n')}\n`).to.deep.equal([]);
  });

  it('every move a writer can make is a transition of the table', () => {
    const wrong: string[] = [];
    for (const found of scan.writes) {
      const writer = WRITERS.find((w) => matches(found, w));
      const from = found.created ? [null] : (found.from ?? writer?.from ?? MACHINES[found.table].states);
      for (const f of from) {
        for (const t of found.to) {
          if (!allows(MACHINES[found.table], f, t)) wrong.push(`${found.at}: ${found.table} ${f ?? '(created)'} → ${t} is not a transition`);
        }
      }
    }
    expect(wrong, `\n${wrong.join('\n')}\n`).to.deep.equal([]);
  });
});

// the scanner on statements written for the purpose: what it reads, and what it refuses
describe('status writes: the scanner', () => {
  const sql = (text: string): Scan => {
    const scan: Scan = { writes: [], problems: [] };
    sqlWrites('fixture.ts', text, text, 0, MACHINES, scan);
    return scan;
  };
  const moves = (scan: Scan) => scan.writes.map((w) => `${w.created ? '(created)' : (w.from?.join('|') ?? '-')} → ${w.to.join('|')}`);

  it('reads a guard of =, IN, <> and NOT IN, qualified by the table’s alias only', () => {
    expect(moves(sql("UPDATE bets b SET status = 'ACCEPTED', accepted_at = $2 WHERE b.id = $1 AND b.status = 'REJECTED'"))).to.deep.equal([
      'REJECTED → ACCEPTED',
    ]);
    expect(moves(sql("UPDATE rounds SET state = 'VOIDED' WHERE state IN ('BETTING_OPEN', 'RESULT') RETURNING id"))).to.deep.equal([
      'BETTING_OPEN|RESULT → VOIDED',
    ]);
    expect(moves(sql("UPDATE bets SET status = 'VOIDED' WHERE status <> 'PENDING'"))).to.deep.equal(['ACCEPTED|REJECTED|SETTLED|VOIDED → VOIDED']);
    expect(moves(sql("UPDATE rounds r SET state = 'SETTLED' FROM s WHERE r.id = s.id AND s.state = 'ACTIVE'"))).to.deep.equal(['- → SETTLED']);
  });

  it('reads a CASE’s results, an INSERT’s column and a CTE’s part', () => {
    expect(
      moves(sql("WITH x AS (UPDATE bets SET status = CASE WHEN a THEN 'SETTLED' ELSE 'VOIDED' END WHERE status = 'PENDING') SELECT 1")),
    ).to.deep.equal(['PENDING → SETTLED|VOIDED']);
    expect(moves(sql("INSERT INTO bets (id, status, side) SELECT u.id, 'SETTLED', u.side FROM u WHERE status = 'PENDING'"))).to.deep.equal([
      '(created) → SETTLED',
    ]);
    expect(moves(sql("INSERT INTO rounds (id, state) VALUES ($1, 'RESULT')"))).to.deep.equal(['(created) → RESULT']);
  });

  it('refuses what it cannot read, with its file and line', () => {
    expect(sql("\nUPDATE bets SET status = $1 WHERE id = $2").problems).to.deep.equal(['fixture.ts:2: UPDATE bets writes $1: not a literal']);
    expect(sql("UPDATE bets SET status = 'ACCEPTED' WHERE status = ANY($1)").problems).to.deep.equal([
      'fixture.ts:1: UPDATE bets: a condition on status it cannot read',
    ]);
    expect(sql("UPDATE bets SET status = 'ACCEPTED' WHERE status IN ($1)").problems).to.deep.equal([
      'fixture.ts:1: UPDATE bets: its guard IN ($1) is not a list of literals',
    ]);
    expect(sql("UPDATE rounds SET state = 'LOST'").problems).to.deep.equal(['fixture.ts:1: UPDATE rounds writes LOST: not a state of rounds']);
    expect(sql('INSERT INTO bets SELECT * FROM old_bets').problems).to.deep.equal([
      'fixture.ts:1: INSERT INTO bets without a column list: its status cannot be read',
    ]);
  });

  it('reads the Prisma calls on the bet and round models', () => {
    const scan: Scan = { writes: [], problems: [] };
    const source = [
      "await tx.round.updateMany({ where: { id, state: { in: ['ROLLING'] } }, data: { state: 'RESULT' } });",
      "await tx.bet.update({ where: { id }, data: { status: 'SETTLED' } });",
      'await tx.bet.create({ data: { id, status } });',
      "await tx.bet.updateMany({ where: { id }, data: { payoutMicro: 0n } }); // the round's payout",
    ].join('\n');
    prismaWrites('fixture.ts', source, MACHINES, scan);
    expect(moves(scan)).to.deep.equal(['ROLLING → RESULT', '- → SETTLED']);
    expect(scan.problems).to.deep.equal(['fixture.ts:3: bet.create writes status: not a literal']);
  });
});
