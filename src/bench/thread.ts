import { Worker } from 'node:worker_threads';

// A load-generator thread (issue 6: a load generator that does not limit what it measures):
// its own event loop, told what to do by request messages, each answered by one reply
// message `{ ok, reply }` or `{ ok: false, error }`.

export type Thread<Request> = { worker: Worker; ask: (request: Request) => Promise<unknown> };

// `entry`: the thread's TypeScript module. A worker thread starts without this process's
// loader hooks: it registers tsx itself, then loads the entry.
export function startThread<Request>(entry: URL, workerData: unknown): Thread<Request> {
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  const worker = new Worker(bootstrap, { eval: true, workerData });
  let queue = Promise.resolve<unknown>(undefined);
  const ask = (request: Request) => {
    // one request at a time: each reply answers the oldest open request
    const next = queue.then(
      () =>
        new Promise<unknown>((resolve, reject) => {
          worker.once('message', (message: { ok: boolean; reply?: unknown; error?: string }) =>
            message.ok ? resolve(message.reply) : reject(new Error(message.error)),
          );
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
