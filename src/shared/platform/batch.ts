import { performance } from 'node:perf_hooks';
import { isDependencyFailure } from './dependencies.js';

// Natural batching: work items that arrive while earlier ones are being written
// are written together by the next flush, with no timer and no added wait. Under light load
// every batch holds one item; under heavy load one statement (one commit, one round trip)
// carries many, instead of one statement per item. Items that share a key never go
// into the same batch (a set-based statement must not touch one row twice), nor into two
// flushes running at once: a key's items are flushed one after the other, in arrival order.

export type BatchOptions<I> = {
  // most items in one flush
  maxBatch: number;
  // flushes running at once (each holds a database connection)
  maxInFlight: number;
  // items with equal keys are flushed one after the other, in arrival order
  keyOf?: (item: I) => string;
};

// The hot paths' batches, with no timer: an idle batcher flushes at once. Two flushes may
// run at once, so that an item arriving while a statement waits for the disk starts its own
// at once instead of queueing behind that statement's commit. Under load, what comes due
// while both run is still carried by the next statement.
export const HOT_PATH_BATCH = { maxBatch: 200, maxInFlight: 2 } as const;

// at: when the item was added (performance.now()), for the overload bound's queue wait
type Waiting<I, O> = { item: I; at: number; resolve: (result: O) => void; reject: (err: unknown) => void };

export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  // the keys of the items in the flushes running now
  private readonly busyKeys = new Set<string>();
  private scheduled = false;

  // run gets the items of one batch and answers one result per item, in order; a throw
  // fails only the items that fail when run on their own (settle)
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatchOptions<I>,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, at: performance.now(), resolve, reject });
      this.schedule();
    });
  }

  // D37: how long the oldest item not yet in a flush has waited (0: none waits); items
  // keep their arrival order in the queue, held-back keys included
  oldestWaitMs(): number {
    const oldest = this.queue[0];
    return oldest ? performance.now() - oldest.at : 0;
  }

  // items that arrive in the same turn of the event loop (one read of many sockets) share
  // a flush: the flush starts after the I/O callbacks of this turn
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      // every waiting item's key is in a running flush
      if (batch.length === 0) return;
      this.inFlight += 1;
      void this.execute(batch);
    }
  }

  private take(): Waiting<I, O>[] {
    const { maxBatch, keyOf } = this.options;
    if (!keyOf) return this.queue.splice(0, maxBatch);
    const batch: Waiting<I, O>[] = [];
    // a key met once is taken or held back; its later items wait behind it
    const seen = new Set<string>();
    const rest: Waiting<I, O>[] = [];
    for (const waiting of this.queue) {
      const key = keyOf(waiting.item);
      if (batch.length < maxBatch && !seen.has(key) && !this.busyKeys.has(key)) {
        batch.push(waiting);
        this.busyKeys.add(key);
      } else rest.push(waiting);
      seen.add(key);
    }
    this.queue = rest;
    return batch;
  }

  private async execute(batch: Waiting<I, O>[]): Promise<void> {
    try {
      await this.settle(batch);
    } finally {
      this.inFlight -= 1;
      const { keyOf } = this.options;
      if (keyOf) for (const w of batch) this.busyKeys.delete(keyOf(w.item));
      this.schedule();
    }
  }

  // D24: items of many sessions and operators share a statement, and one item's bad value
  // (one Postgres refuses) fails the whole statement. A failed run is retried in halves, one
  // after the other in this flush's slot, down to single items: only an item that fails
  // alone fails, and one bad item among n costs about 2*log2(n) runs, not n. A run that
  // throws must have written nothing (one statement, or its own transaction).
  private async settle(batch: Waiting<I, O>[]): Promise<void> {
    let results: O[];
    try {
      results = await this.run(batch.map((w) => w.item));
    } catch (err) {
      // a dependency that is away would fail every part alike, each after its own wait
      if (batch.length === 1 || isDependencyFailure(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.settle(batch.slice(0, half));
      await this.settle(batch.slice(half));
      return;
    }
    // a run that answered has done its work: a wrong count is a defect, not retried
    if (results.length !== batch.length) {
      const err = new Error(`batch answered ${results.length} results for ${batch.length} items`);
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
  }
}
