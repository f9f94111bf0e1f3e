import type { Job, WorkerOptions } from 'bullmq';
import { betStep } from '../platform/bet-steps.js';
import type { Role } from '../platform/config.js';
import type { ServiceContext } from '../platform/context.js';
import {
  QUEUES,
  QUEUE_KEYS,
  WALLET_BACKOFF,
  walletRetryDelayMs,
  type BetJob,
  type EngineJob,
  type JobData,
  type JobName,
  type QueueKey,
  type WalletJobRef,
  type WebhookJob,
} from '../platform/queues.js';
import { advanceCycle } from '../game/rounds/clock.js';
import type { BetAck, BetDesk } from '../game/bets/debit.js';
import { enqueueWalletJob, type WalletJobDesk } from '../game/wallet-jobs/wallet-jobs.js';
import type { WebhookDeliverer } from '../game/webhooks/delivery.js';

// The job registry. platform/queues.ts names every queue, the jobs each carries, their
// payloads and retries (the side the game adds jobs through); this file binds each of those
// jobs to the one handler that runs it, and each queue to the role whose worker pool takes
// its jobs (pools.ts, scheduler.ts). Before a process starts any role it checks the
// bindings (roles.ts), as immich's job repository does: a job with no handler or with two,
// or a handler for a job no queue carries, stops it with an error naming the job.
//
// BullMQ delivers at least once: every handler is fenced on its Postgres row's state, so a
// second delivery books nothing twice.

// What the handlers of one worker share: the service, the desk that batches their
// statements (one per worker), and for the ticks the scheduler's term (D29).
export type WorkerScope = {
  engine: { svc: ServiceContext; epoch: bigint };
  bet: { svc: ServiceContext; desk: BetDesk };
  settle: { svc: ServiceContext; desk: WalletJobDesk };
  rollback: { svc: ServiceContext; desk: WalletJobDesk };
  webhooks: { svc: ServiceContext; deliverer: WebhookDeliverer };
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

// One tick of an engine clock, under the term of the scheduler that runs it (D1, D29).
function runTick({ svc, epoch }: WorkerScope['engine'], job: Job<EngineJob>): Promise<unknown> {
  return advanceCycle(svc, job.data, epoch);
}

// Each bet of a job is debited on its own, and its verdict goes back to the realtime node
// that placed it as soon as it is known. A bet whose handling fails is answered
// wallet_timeout and stays PENDING: recovery resolves it as uncertain (recovery.ts). A job
// handed out before (its worker died or stalled) tells the desk so: a debit that attempt
// left in flight is resolved as uncertain, not sent again (contract 7.1).
function debitBets({ svc, desk }: WorkerScope['bet'], job: Job<BetJob>): Promise<BetAck[]> {
  const redelivered = job.attemptsStarted > 1 || job.stalledCounter > 0;
  return Promise.all(
    job.data.tickets.map(async (ticket) => {
      betStep(ticket.betId, 'picked_up');
      const ack = await desk.process(ticket, { redelivered }).catch((err: unknown): BetAck => {
        svc.logger.error({ err, betId: ticket.betId }, 'bet could not be handled; recovery resolves it');
        return { ok: false, reason: 'wallet_timeout' };
      });
      svc.emitter.verdict(job.data.node, ticket.betId, ack);
      return ack;
    }),
  );
}

// A queue job of one wallet job retries itself with the delay the job computed (contract
// 3.4, the wallet backoff below).
async function runOneWalletJob({ desk }: WorkerScope['settle' | 'rollback'], job: Job<WalletJobRef>): Promise<string> {
  const outcome = await desk.run(job.data.walletJobIds[0]!);
  if (outcome.kind === 'retry') {
    await job.updateData({ ...job.data, retryDelayMs: outcome.delayMs });
    throw new Error(outcome.error);
  }
  return outcome.kind;
}

// In a batch of first attempts, each wallet job that must be retried is queued on its own,
// so that the others are not held back or repeated.
const walletBatch = (endpoint: 'win' | 'rollback') =>
  async function runWalletBatch({ svc, desk }: WorkerScope['settle' | 'rollback'], job: Job<WalletJobRef>): Promise<'batch'> {
    await Promise.all(
      job.data.walletJobIds.map(async (id) => {
        const outcome = await desk.run(id).catch((err: unknown) => {
          svc.logger.warn({ walletJobId: id, err: (err as Error).message }, 'wallet job failed; retried on its own');
          return { kind: 'retry', delayMs: walletRetryDelayMs(1) } as const;
        });
        if (outcome.kind === 'retry') await enqueueWalletJob(svc, { id, endpoint }, outcome.delayMs);
      }),
    );
    return 'batch';
  };

// D31: one attempt of a webhook event; the attempt schedules its own retry (delivery.ts), so
// the job itself is never retried
function deliverWebhook({ deliverer }: WorkerScope['webhooks'], job: Job<WebhookJob>): Promise<string> {
  return deliverer.deliver(job.data.eventId);
}

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
