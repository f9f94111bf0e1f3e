// Recovery times measured by the fault suite (issue 4: rounds in flight are settled or
// voided within 5 s of the replacement process being up). Collected per run and printed
// by each suite, not asserted: a figure, like the benchmark's, not a timing test.
export const recoveryTimes: { what: string; ms: number }[] = [];

export function recordRecoveryTime(what: string, ms: number): void {
  recoveryTimes.push({ what, ms });
}
