// Recovery times measured by the fault suite: from the replacement process being up to the
// rounds in flight settled or voided (contract 3.1). Each suite collects its own and
// prints them when it ends: a figure, like the benchmark's, not a timing assertion.
export class RecoveryTimes {
  private readonly times: { what: string; ms: number }[] = [];

  record(what: string, ms: number): void {
    this.times.push({ what, ms });
  }

  print(): void {
    if (this.times.length > 0) process.stdout.write(`      recovery after restart (ms): ${this.times.map((t) => `${t.what} ${t.ms}`).join(', ')}\n`);
  }
}
