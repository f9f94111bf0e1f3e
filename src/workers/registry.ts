import type { Job, WorkerOptions } from 'bullmq';
import type { Role } from '../shared/platform/config.js';
import { QUEUES, QUEUE_KEYS, WALLET_BACKOFF, type JobData, type JobName, type QueueKey, type WalletJobRef } from '../shared/platform/queues.js';
import { runTick, type EngineScope } from '../shared/game/rounds/clock.js';
import { debitBets, type BetScope } from '../shared/game/bets/debit.js';
import { runOneWalletJob, walletBatch, type WalletJobScope } from '../shared/game/wallet-jobs/wallet-jobs.js';
import { deliverWebhook, type WebhookScope } from '../shared/game/webhooks/delivery.js';

// The job registry, a table in the shape of immich's: platform/queues.ts names every queue,
// the jobs each carries, their payloads and retries (the side the game adds jobs through);
// this file binds each of those jobs to the one handler that runs it (HANDLERS), and each
// queue to the role whose worker pool takes its jobs (POOLS; pools.ts, scheduler.ts). The
// handlers themselves live with the desks whose work they do (game/). Before a process
// starts any role it checks the bindings (roles.ts), as immich's job repository does: a job
// with no handler or with two, or a handler for a job no queue carries, stops it with an
// error naming the job.
//
// BullMQ delivers at least once: every handler is fenced on its Postgres row's state, so a
// second delivery books nothing twice.

// What the handlers of one worker share: the service, the desk that batches their
// statements (one per worker), and for the ticks the scheduler's term (D29).
export type WorkerScope = {
  engine: EngineScope;
  bet: BetScope;
  settle: WalletJobScope;
  rollback: WalletJobScope;
  webhooks: WebhookScope;
};

type Handler<Q extends QueueKey, N extends JobName<Q>> = (scope: WorkerScope[Q], job: Job<JobData<Q, N>, unknown, N>) => Promise<unknown>;

export type Registration = {
  queue: QueueKey;
  name: string;
  // typed where it is bound (on)
  run(scope: WorkerScope[QueueKey], job: Job): Promise<unknown>;
};

const on = <Q extends QueueKey, N extends JobName<Q>>(queue: Q, name: N, handler: Handler<Q, N>): Registration => ({
  queue,
  name,
  run: handler,
});

// every job of every queue, and the handler that runs it
export const HANDLERS: readonly Registration[] = [
  on('engine', 'tick', runTick),
  on('bet', 'bets', debitBets),
  on('settle', 'win', runOneWalletJob),
  on('settle', 'batch', walletBatch('win')),
  on('rollback', 'rollback', runOneWalletJob),
  on('rollback', 'batch', walletBatch('rollback')),
  on('webhooks', 'deliver', deliverWebhook),
];

// contract 3.4: a wallet job's attempt that failed is tried again after the delay it set
const walletBackoff: WorkerOptions['settings'] = {
  backoffStrategy: (_attempts, type, _err, job) => (type === WALLET_BACKOFF ? ((job?.data as WalletJobRef | undefined)?.retryDelayMs ?? 1000) : 1000),
};

// each queue's worker pool: the role that runs it (D12), how many of its jobs one process
// runs at once, and its BullMQ settings
export type Pool = { role: Role; concurrency: number; settings?: WorkerOptions['settings'] };

export const POOLS: { [Q in QueueKey]: Pool } = {
  engine: { role: 'scheduler', concurrency: 16 },
  bet: { role: 'bet', concurrency: 64 },
  settle: { role: 'settle', concurrency: 64, settings: walletBackoff },
  rollback: { role: 'rollback', concurrency: 32, settings: walletBackoff },
  webhooks: { role: 'webhooks', concurrency: 32 },
};

export class RegistryError extends Error {
  constructor(readonly problems: string[]) {
    super(`the job registry is broken: ${problems.join('; ')}`);
    this.name = 'RegistryError';
  }
}

// Exactly one handler for every job a queue carries, and none for anything else.
export function checkRegistry(registrations: readonly Registration[] = HANDLERS): void {
  const problems: string[] = [];
  for (const queue of QUEUE_KEYS) {
    for (const name of Object.keys(QUEUES[queue].jobs)) {
      const count = registrations.filter((r) => r.queue === queue && r.name === name).length;
      if (count === 0) problems.push(`job "${name}" of queue ${QUEUES[queue].name} has no handler`);
      else if (count > 1) problems.push(`job "${name}" of queue ${QUEUES[queue].name} has ${count} handlers`);
    }
  }
  for (const { queue, name } of registrations) {
    if (!Object.hasOwn(QUEUES, queue)) problems.push(`a handler is registered for job "${name}" of queue "${queue}", which does not exist`);
    else if (!Object.hasOwn(QUEUES[queue].jobs, name)) {
      problems.push(`a handler is registered for job "${name}" of queue ${QUEUES[queue].name}, which that queue does not carry`);
    }
  }
  if (problems.length > 0) throw new RegistryError(problems);
}

// What a queue's Worker runs for each job it takes: the handler the job's name is bound to,
// with this worker's scope. Producers add only the names their queue carries (typed,
// platform/queues.ts); a job of any other name fails.
export function processorFor<Q extends QueueKey>(queue: Q, scope: WorkerScope[Q]): (job: Job) => Promise<unknown> {
  const byName = new Map(HANDLERS.filter((r) => r.queue === queue).map((r) => [r.name, r]));
  return (job) => {
    const registration = byName.get(job.name);
    if (!registration) return Promise.reject(new Error(`no handler for job "${job.name}" of queue ${QUEUES[queue].name}`));
    return registration.run(scope, job);
  };
}

// The queue table (docs/architecture.md): one row per job of each queue.
export type JobTableRow = { queue: string; job: string; payload: string; handler: string; role: Role; attempts: string; backoff: string };

export function jobTable(registrations: readonly Registration[] = HANDLERS): JobTableRow[] {
  return QUEUE_KEYS.flatMap((queue) => {
    const { name, jobs, options } = QUEUES[queue];
    return Object.entries<string>(jobs).map(([job, payload]) => ({
      queue: name,
      job,
      payload,
      handler: registrations
        .filter((r) => r.queue === queue && r.name === job)
        .map((r) => r.run.name)
        .join(', '),
      role: POOLS[queue].role,
      attempts: String(options.attempts ?? 1),
      backoff: backoffOf(options.backoff),
    }));
  });
}

function backoffOf(backoff: (typeof QUEUES)[QueueKey]['options']['backoff']): string {
  if (backoff === undefined) return 'none';
  if (typeof backoff === 'number') return `${backoff} ms`;
  if (backoff.type === WALLET_BACKOFF) return 'the delay the job computed: 1 s doubling to 60 s, jittered, for 24 h (contract 3.4)';
  return `${backoff.type} from ${backoff.delay ?? 0} ms`;
}

export function jobTableMarkdown(rows: JobTableRow[] = jobTable()): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const header = ['Queue', 'Job', 'Payload', 'Handler', 'Role', 'Attempts', 'Backoff'];
  return [
    line(header),
    line(header.map(() => '---')),
    ...rows.map((r) => line([r.queue, r.job, r.payload, r.handler, r.role, r.attempts, r.backoff])),
  ].join('\n');
}
