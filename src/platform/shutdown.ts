// D12: on SIGTERM a process lets the work it has in flight finish (a wallet call ends
// within its timeout), for at most this long; what is still running after that is left to
// another process (a queue job's lock lapses) or to recovery (a node's own debits).
export const FINISH_IN_FLIGHT_MS = 7000;

// true when the work finished within FINISH_IN_FLIGHT_MS, false when it was still running
export async function finishedInTime(work: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), FINISH_IN_FLIGHT_MS);
  });
  const finished = await Promise.race([work.then(() => true as const), deadline]);
  clearTimeout(timer);
  return finished;
}
