// Epoch milliseconds with sub-millisecond resolution, comparable with Date.now() and across
// the processes and threads of one machine: the bet trace's steps and the benchmark's own
// timestamps are differences of this one clock.
export const epochMs = (): number => performance.timeOrigin + performance.now();
