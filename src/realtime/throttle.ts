// Per-socket message throttle: a client sending faster than a person could is refused,
// not served (D28: rate_limited). A token bucket of 10, refilled at 5 per second.
export class MessageThrottle {
  private tokens: number;
  private at: number;

  constructor(
    private readonly burst = 10,
    private readonly perSecond = 5,
    private readonly clock: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.at = clock();
  }

  take(): boolean {
    const now = this.clock();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.perSecond) / 1000);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
