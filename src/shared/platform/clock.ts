// Epoch milliseconds with sub-millisecond resolution, comparable with Date.now() and across
// the processes and threads of one machine: the bet steps (bet-steps.ts) and the timestamps
// their subscribers compare them with are differences of this one clock.
export const epochMs = (): number => performance.timeOrigin + performance.now();
