import { expect } from 'chai';
import { QUEUES, type QueueKey } from '../../src/shared/platform/queues.js';
import { HANDLERS, RegistryError, checkRegistry, jobTable, jobTableMarkdown, type Registration } from '../../src/workers/registry.js';

// The job registry (src/workers/registry.ts): every job a queue carries has exactly one
// handler, and every handler a job to handle; a process whose registry breaks that refuses
// to start (roles.ts), naming the job.

const without = (queue: QueueKey, name: string) => HANDLERS.filter((h) => !(h.queue === queue && h.name === name));
const bindingOf = (queue: QueueKey, name: string): Registration => HANDLERS.find((h) => h.queue === queue && h.name === name)!;

describe('the job registry', () => {
  it('binds every job of every queue to exactly one handler', () => {
    expect(() => checkRegistry()).not.to.throw();
    for (const [queue, spec] of Object.entries(QUEUES)) {
      for (const name of Object.keys(spec.jobs)) {
        expect(HANDLERS.filter((h) => h.queue === queue && h.name === name), `${queue} ${name}`).to.have.length(1);
      }
    }
  });

  it('refuses a job that has no handler, naming it', () => {
    expect(() => checkRegistry(without('settle', 'batch'))).to.throw(RegistryError, 'job "batch" of queue rgs-settle has no handler');
  });

  it('refuses a job that has two handlers, naming it', () => {
    const twice = [...HANDLERS, bindingOf('bet', 'bets')];
    expect(() => checkRegistry(twice)).to.throw(RegistryError, 'job "bets" of queue rgs-bet has 2 handlers');
  });

  it('refuses a handler for a job its queue does not carry, naming it', () => {
    const stray: Registration = { ...bindingOf('rollback', 'rollback'), name: 'refund' };
    expect(() => checkRegistry([...HANDLERS, stray])).to.throw(RegistryError, 'a handler is registered for job "refund" of queue rgs-rollback, which that queue does not carry');
  });

  it('names every problem at once', () => {
    const stray: Registration = { ...bindingOf('engine', 'tick'), name: 'tock' };
    let thrown: unknown;
    try {
      checkRegistry([...without('engine', 'tick'), stray]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(RegistryError);
    expect((thrown as RegistryError).problems).to.deep.equal([
      'job "tick" of queue rgs-engine has no handler',
      'a handler is registered for job "tock" of queue rgs-engine, which that queue does not carry',
    ]);
  });

  it('the queue table lists every queue and every job it carries, with its handler, role and retries', () => {
    const rows = jobTable();
    expect([...new Set(rows.map((r) => r.queue))]).to.have.members(Object.values(QUEUES).map((q) => q.name));
    expect(rows.map((r) => `${r.queue} ${r.job}`)).to.have.members(
      Object.values(QUEUES).flatMap((q) => Object.keys(q.jobs).map((name) => `${q.name} ${name}`)),
    );
    expect(rows.find((r) => r.queue === 'rgs-bet')).to.include({ job: 'bets', role: 'bet', handler: 'debitBets', attempts: '1' });
    expect(rows.find((r) => r.queue === 'rgs-engine')).to.include({ job: 'tick', role: 'scheduler', attempts: '5' });
    const markdown = jobTableMarkdown(rows).split('\n');
    expect(markdown[0]).to.equal('| Queue | Job | Payload | Handler | Role | Attempts | Backoff |');
    expect(markdown).to.have.length(rows.length + 2);
    for (const row of rows) expect(markdown.some((line) => line.startsWith(`| ${row.queue} | ${row.job} |`)), `${row.queue} ${row.job}`).to.equal(true);
  });
});
