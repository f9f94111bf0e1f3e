// The elected scheduler's own clock (issue 6, D1). An engine tick is a delayed BullMQ job,
// which survives the process that scheduled it; but a tick handed out by the queue costs a
// promotion, the worker's wake-up and fetch, and its completion, about three milliseconds
// on a busy box, at every phase end. So a process that schedules a tick also keeps a timer
// for it, and when the timer fires in the process that leads, the tick runs there: taken
// off the queue first (a job the queue has already handed out refuses, and runs there). A
// process that does not lead leaves the tick to the queue, so only the lease holder ever
// advances a cycle, whichever way the tick arrives; and every move is fenced in Postgres.

export class LocalTicks {
  private leading = false;
  private readonly running = new Set<Promise<void>>();

  // set by the scheduler role on election, deposition and shutdown
  lead(leading: boolean): void {
    this.leading = leading;
  }

  get isLeading(): boolean {
    return this.leading;
  }

  // a tick this process runs itself; a clean handover waits for it (D12)
  run(tick: () => Promise<void>): Promise<void> {
    const running = tick().finally(() => this.running.delete(running));
    this.running.add(running);
    return running;
  }

  async finish(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
