// Natural batching (issue 6): work items that arrive while earlier ones are being written
// are written together by the next flush, with no timer and no added wait. Under light load
// every batch holds one item; under heavy load one statement (one commit, one round trip)
// carries many, which is what lets a 2-core box keep up. Items that share a key never go
// into the same batch (a set-based statement must not touch one row twice).

export type BatchOptions<I> = {
  // most items in one flush
  maxBatch: number;
  // flushes running at once (each holds a database connection)
  maxInFlight: number;
  // items with equal keys are flushed in separate batches, in arrival order
  keyOf?: (item: I) => string;
};

// The hot paths' batches: one flush at a time per batcher, so that under load each statement
// carries as many rows as came due while the previous one ran (Postgres spends far more per
// statement than per row), with no timer: an idle batcher flushes at once.
export const HOT_PATH_BATCH = { maxBatch: 200, maxInFlight: 1 } as const;

type Waiting<I, O> = { item: I; resolve: (result: O) => void; reject: (err: unknown) => void };

export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  // run gets the items of one batch and answers one result per item, in order; a throw
  // fails every item of that batch
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly options: BatchOptions<I>,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
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
      this.inFlight += 1;
      void this.execute(batch);
    }
  }

  private take(): Waiting<I, O>[] {
    const { maxBatch, keyOf } = this.options;
    if (!keyOf) return this.queue.splice(0, maxBatch);
    const batch: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    const rest: Waiting<I, O>[] = [];
    for (const waiting of this.queue) {
      const key = keyOf(waiting.item);
      if (batch.length < maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(waiting);
      } else rest.push(waiting);
    }
    this.queue = rest;
    return batch;
  }

  private async execute(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.run(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`batch answered ${results.length} results for ${batch.length} items`);
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.inFlight -= 1;
      this.schedule();
    }
  }
}
