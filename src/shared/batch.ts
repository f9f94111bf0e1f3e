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

type Waiting<I, O> = { item: I; resolve: (result: O) => void; reject: (err: unknown) => void };

export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idle: (() => void)[] = [];

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

  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  // resolves once nothing is queued or running (shutdown)
  drained(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
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
      if (this.queue.length > 0) this.schedule();
      else if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}
