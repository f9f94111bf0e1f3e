import { Worker } from 'node:worker_threads';

// A load-generator thread (a load generator that does not limit what it measures):
// its own event loop, told what to do by request messages, each answered by one reply
// message `{ ok, reply }` or `{ ok: false, error }`.

export type Thread<Request> = { worker: Worker; ask: (request: Request) => Promise<unknown> };

// `entry`: the thread's TypeScript module. A worker thread starts without this process's
// loader hooks: it registers tsx itself, then loads the entry.
export function startThread<Request>(entry: URL, workerData: unknown): Thread<Request> {
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  const worker = new Worker(bootstrap, { eval: true, workerData });
  // a thread that died answers its open request, and every later one, with its error, so
  // that the run fails and cleans up instead of the process crashing on the error event
  let died: Error | undefined;
  let failOpen: ((err: Error) => void) | undefined;
  worker.on('error', (err) => {
    died = err;
    failOpen?.(err);
  });
  let queue = Promise.resolve<unknown>(undefined);
  const ask = (request: Request) => {
    // one request at a time: each reply answers the oldest open request
    const next = queue.then(
      () =>
        new Promise<unknown>((resolve, reject) => {
          if (died) return reject(died);
          failOpen = reject;
          worker.once('message', (message: { ok: boolean; reply?: unknown; error?: string }) => {
            failOpen = undefined;
            if (message.ok) resolve(message.reply);
            else reject(new Error(message.error));
          });
          worker.postMessage(request);
        }),
    );
    queue = next.catch(() => undefined);
    return next;
  };
  return { worker, ask };
}

// the thread's side: every request answered by one reply
export function answerRequests<Request>(answer: (request: Request) => Promise<unknown>, port: NonNullable<typeof import('node:worker_threads').parentPort>): void {
  port.on('message', (request: Request) => {
    answer(request).then(
      (reply) => port.postMessage({ ok: true, reply }),
      (err: Error) => port.postMessage({ ok: false, error: err.message }),
    );
  });
}
