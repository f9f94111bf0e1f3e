import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { BET_MACHINE, ROUND_MACHINE, stateMachineMarkdown } from '../../src/shared/domain/state-machine.js';
import { jobTableMarkdown } from '../../src/workers/registry.js';

// docs/architecture.md carries tables that must not drift from what the code does: the
// queue table, generated from the job registry, the process table, which must name every
// Procfile process type with the roles its command selects, and the bet and round state
// machines, generated from src/shared/domain/state-machine.ts.

const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
const procfile = readFileSync(new URL('../../Procfile', import.meta.url), 'utf8');

const section = (name: string) => {
  const match = doc.match(new RegExp(`<!-- ${name}:begin -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`));
  expect(match, `docs/architecture.md has a ${name} section`).to.not.equal(null);
  return match![1]!;
};

describe('docs/architecture.md', () => {
  it('its queue table is the job registry’s (regenerate it with jobTableMarkdown() after a registry change)', () => {
    expect(section('job-table')).to.equal(jobTableMarkdown());
  });

  it('its bet and round states are the state machine’s (regenerate them with stateMachineMarkdown() after a change)', () => {
    expect(section('bet-states')).to.equal(stateMachineMarkdown(BET_MACHINE));
    expect(section('round-states')).to.equal(stateMachineMarkdown(ROUND_MACHINE));
  });

  it('its process table names every Procfile process with the roles it runs, and nothing else', () => {
    const processes = procfile
      .split('\n')
      .filter((line) => /^\w+:/.test(line))
      .map((line) => {
        const [name, command] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)];
        const roles = command.match(/\bROLES=(\S+)/)?.[1]?.split(',').join(', ');
        return { name, roles };
      });
    const rows = section('process-table')
      .split('\n')
      .slice(2)
      .map((line) => line.split('|').map((cell) => cell.trim()))
      .map((cells) => ({ name: cells[1], roles: cells[2] }));
    expect(rows.map((r) => r.name)).to.deep.equal(processes.map((p) => p.name));
    for (const process of processes) {
      const row = rows.find((r) => r.name === process.name)!;
      if (process.roles) expect(row.roles, process.name).to.equal(process.roles);
      else expect(row.roles, process.name).to.match(/^\(none/);
    }
  });
});
