import { expect } from 'chai';
import { Batcher } from '../../src/shared/platform/batch.js';

// Natural batching (src/shared/platform/batch.ts): what a flush carries, in what order, and what a failure does.
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

  // D24: one item's bad input (a value Postgres refuses fails the whole statement) fails
  // only that item, whoever else's items share its flush
  it('retries a failed flush in smaller parts, so that only the failing item fails; the next flush runs', async () => {
    const { flushes, run } = recorder();
    const batcher = new Batcher(run, { maxBatch: 4, maxInFlight: 1 });
    const first = ['a', 'bad', 'c', 'd'].map((item) => batcher.add(item).then((r) => r, (err: Error) => err.message));
    const spared = batcher.add('e');
    await turn();
    expect(flushes.map((f) => f.items)).to.deep.equal([['a', 'bad', 'c', 'd']]);
    flushes[0]!.reject(new Error('value out of range for type bigint'));
    await turn();
    // the halves, one after the other (a flush holds one connection)
    expect(flushes[1]!.items).to.deep.equal(['a', 'bad']);
    flushes[1]!.reject(new Error('value out of range for type bigint'));
    await turn();
    expect(flushes[2]!.items).to.deep.equal(['a']);
    flushes[2]!.resolve(['A']);
    await turn();
    expect(flushes[3]!.items).to.deep.equal(['bad']);
    flushes[3]!.reject(new Error('value out of range for type bigint'));
    await turn();
    expect(flushes[4]!.items).to.deep.equal(['c', 'd']);
    flushes[4]!.resolve(['C', 'D']);
    expect(await Promise.all(first)).to.deep.equal(['A', 'value out of range for type bigint', 'C', 'D']);
    await turn();
    expect(flushes[5]!.items).to.deep.equal(['e']);
    flushes[5]!.resolve(['E']);
    expect(await spared).to.equal('E');
  });

  it('isolates a failing item whatever its place in a large flush, with far fewer runs than items', async () => {
    let runs = 0;
    const batcher = new Batcher(
      async (items: number[]) => {
        runs += 1;
        if (items.includes(137)) throw new Error(`refused ${items.length} items`);
        return items.map((i) => i * 2);
      },
      { maxBatch: 200, maxInFlight: 2 },
    );
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => batcher.add(i).then((r) => r, (err: Error) => err.message)),
    );
    expect(results[137]).to.equal('refused 1 items');
    expect(results.filter((r) => typeof r === 'number')).to.have.length(199);
    expect(results.every((r, i) => i === 137 || r === i * 2)).to.equal(true);
    expect(runs).to.be.below(40);
  });

  it('does not split a flush that failed because a dependency is away: every item fails with it, after one run', async () => {
    let runs = 0;
    const batcher = new Batcher(
      async (): Promise<string[]> => {
        runs += 1;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const results = ['a', 'b', 'c'].map((item) => batcher.add(item).then(() => 'resolved', (err: Error) => err.message));
    expect(await Promise.all(results)).to.deep.equal(Array(3).fill('connect ECONNREFUSED 127.0.0.1:5432'));
    expect(runs).to.equal(1);
  });

  it('fails an item that fails alone, and a flush that fails in every part fails every item', async () => {
    const batcher = new Batcher(
      async (): Promise<string[]> => {
        throw new Error('deadlock detected');
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const results = ['a', 'b', 'c'].map((item) => batcher.add(item).then(() => 'resolved', (err: Error) => err.message));
    expect(await Promise.all(results)).to.deep.equal(['deadlock detected', 'deadlock detected', 'deadlock detected']);
  });

  it('fails a flush whose run answers a result count other than its item count', async () => {
    const batcher = new Batcher(async (items: string[]) => items.slice(1), { maxBatch: 10, maxInFlight: 1 });
    const results = ['a', 'b'].map((item) => batcher.add(item).catch((err: Error) => err.message));
    expect(await Promise.all(results)).to.deep.equal(['batch answered 1 results for 2 items', 'batch answered 1 results for 2 items']);
  });
});

describe('Batcher: the oldest wait (D37)', () => {
  it('is 0 while nothing waits, grows with the first item not yet flushed, and falls once it is flushed', async () => {
    const { flushes, run } = recorder();
    const batcher = new Batcher(run, { maxBatch: 100, maxInFlight: 1 });
    expect(batcher.oldestWaitMs()).to.equal(0);
    void batcher.add('a');
    await turn();
    // 'a' is in its flush: it no longer waits in the queue
    expect(batcher.oldestWaitMs()).to.equal(0);
    void batcher.add('b');
    await new Promise((resolve) => setTimeout(resolve, 30));
    void batcher.add('c');
    // 'b' waits behind the running flush since before 'c' came
    expect(batcher.oldestWaitMs()).to.be.at.least(25);
    flushes[0]!.resolve(['A']);
    await turn();
    expect(flushes.map((f) => f.items)).to.deep.equal([['a'], ['b', 'c']]);
    expect(batcher.oldestWaitMs()).to.equal(0);
    flushes[1]!.resolve(['B', 'C']);
  });
});
