import { expect } from 'chai';
import { Batcher } from '../../src/shared/batch.js';

// Natural batching (issue 6): what a flush carries, in what order, and what a failure does.
// The flushes here are promises the test settles by hand, so every assertion sees the
// batcher between two flushes.

type Flush = { items: string[]; resolve: (results: string[]) => void; reject: (err: Error) => void };

function recorder() {
  const flushes: Flush[] = [];
  const run = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      flushes.push({ items, resolve, reject });
    });
  return { flushes, run };
}

// the batcher flushes in a setImmediate of its own, scheduled once a settled flush's
// continuation ran: two turns later everything due has been flushed
const turn = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('Batcher (natural batching)', () => {
  it('flushes at once when idle, and gathers what arrives meanwhile into the next flush', async () => {
    const { flushes, run } = recorder();
    const batcher = new Batcher(run, { maxBatch: 100, maxInFlight: 1 });
    const first = batcher.add('a');
    await turn();
    expect(flushes.map((f) => f.items)).to.deep.equal([['a']]);
    const later = ['b', 'c', 'd'].map((item) => batcher.add(item));
    await turn();
    expect(flushes, 'no second flush while one runs').to.have.length(1);
    flushes[0]!.resolve(['A']);
    expect(await first).to.equal('A');
    await turn();
    expect(flushes.map((f) => f.items)).to.deep.equal([['a'], ['b', 'c', 'd']]);
    flushes[1]!.resolve(['B', 'C', 'D']);
    expect(await Promise.all(later)).to.deep.equal(['B', 'C', 'D']);
  });

  it('puts what arrives in one turn of the event loop into one flush', async () => {
    const { flushes, run } = recorder();
    const batcher = new Batcher(run, { maxBatch: 100, maxInFlight: 1 });
    const results = ['a', 'b', 'c'].map((item) => batcher.add(item));
    await turn();
    expect(flushes.map((f) => f.items)).to.deep.equal([['a', 'b', 'c']]);
    flushes[0]!.resolve(['A', 'B', 'C']);
    expect(await Promise.all(results)).to.deep.equal(['A', 'B', 'C']);
  });

  it('never carries more than maxBatch items, and runs up to maxInFlight flushes at once', async () => {
    const { flushes, run } = recorder();
    const batcher = new Batcher(run, { maxBatch: 2, maxInFlight: 2 });
    const results = ['a', 'b', 'c', 'd', 'e'].map((item) => batcher.add(item));
    await turn();
    expect(flushes.map((f) => f.items)).to.deep.equal([['a', 'b'], ['c', 'd']]);
    flushes[1]!.resolve(['C', 'D']);
    await turn();
    expect(flushes.map((f) => f.items)).to.deep.equal([['a', 'b'], ['c', 'd'], ['e']]);
    flushes[0]!.resolve(['A', 'B']);
    flushes[2]!.resolve(['E']);
    expect(await Promise.all(results)).to.deep.equal(['A', 'B', 'C', 'D', 'E']);
  });

  it('keeps items with equal keys in separate flushes, in arrival order', async () => {
    const { flushes, run } = recorder();
    const batcher = new Batcher(run, { maxBatch: 100, maxInFlight: 1, keyOf: (item: string) => item.split('-')[0]! });
    const results = ['s1-a', 's2-a', 's1-b', 's3-a', 's1-c'].map((item) => batcher.add(item));
    await turn();
    expect(flushes.map((f) => f.items)).to.deep.equal([['s1-a', 's2-a', 's3-a']]);
    flushes[0]!.resolve(['1', '2', '3']);
    await turn();
    expect(flushes[1]!.items).to.deep.equal(['s1-b']);
    flushes[1]!.resolve(['4']);
    await turn();
    expect(flushes[2]!.items).to.deep.equal(['s1-c']);
    flushes[2]!.resolve(['5']);
    expect(await Promise.all(results)).to.deep.equal(['1', '2', '4', '3', '5']);
  });

  it('keeps a key out of a second flush while a flush holding it runs, and flushes the key next', async () => {
    const { flushes, run } = recorder();
    const batcher = new Batcher(run, { maxBatch: 100, maxInFlight: 2, keyOf: (item: string) => item.split('-')[0]! });
    const results = ['s1-a', 's2-a', 's1-b'].map((item) => batcher.add(item));
    await turn();
    expect(flushes.map((f) => f.items), 's1-b waits although a second flush may run').to.deep.equal([['s1-a', 's2-a']]);
    results.push(batcher.add('s3-a'), batcher.add('s2-b'));
    await turn();
    expect(flushes.map((f) => f.items), 'a free key runs beside the first flush').to.deep.equal([['s1-a', 's2-a'], ['s3-a']]);
    flushes[1]!.resolve(['4']);
    await turn();
    expect(flushes, 's1-b and s2-b still wait for the first flush').to.have.length(2);
    flushes[0]!.resolve(['1', '2']);
    await turn();
    expect(flushes[2]!.items).to.deep.equal(['s1-b', 's2-b']);
    flushes[2]!.resolve(['3', '5']);
    expect(await Promise.all(results)).to.deep.equal(['1', '2', '3', '4', '5']);
  });

  it('fails every item of a failed flush, and only those; the next flush runs', async () => {
    const { flushes, run } = recorder();
    const batcher = new Batcher(run, { maxBatch: 2, maxInFlight: 1 });
    const doomed = ['a', 'b'].map((item) => batcher.add(item).then(() => 'resolved', (err: Error) => err.message));
    const spared = batcher.add('c');
    await turn();
    flushes[0]!.reject(new Error('deadlock detected'));
    expect(await Promise.all(doomed)).to.deep.equal(['deadlock detected', 'deadlock detected']);
    await turn();
    expect(flushes[1]!.items).to.deep.equal(['c']);
    flushes[1]!.resolve(['C']);
    expect(await spared).to.equal('C');
  });

  it('fails a flush whose run answers a result count other than its item count', async () => {
    const batcher = new Batcher(async (items: string[]) => items.slice(1), { maxBatch: 10, maxInFlight: 1 });
    const results = ['a', 'b'].map((item) => batcher.add(item).catch((err: Error) => err.message));
    expect(await Promise.all(results)).to.deep.equal(['batch answered 1 results for 2 items', 'batch answered 1 results for 2 items']);
  });
});
