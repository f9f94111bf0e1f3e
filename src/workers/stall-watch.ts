// P08: Redis is the transport, so a worker that stops taking jobs must not stop the work.
// The Redis client under a BullMQ worker can wedge after a Redis Cluster restarts empty: the
// connections report ready, the queue takes jobs, and the worker's blocking read never
// reaches the node that serves the queue again, so jobs wait for good while the worker sits
// idle. Nothing raises an error; what shows it is the queue itself: a job ready to run (waiting,
// or delayed and due) that is still there a check later, while this process's worker took no
// job in between. After STRIKES such checks in a row the worker is replaced by a new one on a
// new connection (pools.ts). A busy worker is never judged: jobs may wait behind a full pool.

export const CHECK_EVERY_MS = 5000;
export const STRIKES = 2;

export class StallWatch {
  private before = new Set<string>();
  private strikes = 0;

  // `ready`: the ids of the queue's jobs ready to run now; `idle`: the worker ran no job and
  // started none since the last check. True when the worker is to be replaced.
  observe(ready: readonly string[], idle: boolean): boolean {
    const stuck = idle && ready.some((id) => this.before.has(id));
    this.before = new Set(ready);
    this.strikes = stuck ? this.strikes + 1 : 0;
    if (this.strikes < STRIKES) return false;
    this.strikes = 0;
    this.before.clear();
    return true;
  }
}
