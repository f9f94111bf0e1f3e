import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ROUNDS_IN_PLAY } from '../domain/state-machine.js';

// Prometheus metrics (D15), one registry per process, served at GET /metrics.
export type Metrics = ReturnType<typeof createMetrics>;

export function createMetrics() {
  const registry = new Registry();
  // D25: Node's default metrics under their standard names (process_*, nodejs_*), which
  // dashboards and alerts written for any Node service expect; the service's own are rgs_*
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'rgs_http_request_duration_seconds',
      help: 'Inbound HTTP request latency by route',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    walletCallDuration: new Histogram({
      name: 'rgs_wallet_call_duration_seconds',
      help: 'Outbound wallet call latency by endpoint and resulting RS_ status',
      labelNames: ['endpoint', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1, 2, 5],
      registers: [registry],
    }),
    circuitRejections: new Counter({
      name: 'rgs_wallet_circuit_rejections_total',
      help: 'Wallet calls refused at once by an open circuit, by endpoint (contract 3.4)',
      labelNames: ['endpoint'] as const,
      registers: [registry],
    }),
    sessionsCreated: new Counter({
      name: 'rgs_sessions_created_total',
      help: 'Sessions created, by mode',
      labelNames: ['mode'] as const,
      registers: [registry],
    }),
    // where a node debits its own players' bets (BET_HANDOFF=local), they wait in no queue:
    // this says how many of its debits are at the wallet or being recorded now
    localDebitsInFlight: new Gauge({
      name: 'rgs_local_debits_in_flight',
      help: 'Bets this process is debiting for its own players (BET_HANDOFF=local), from placement to verdict',
      registers: [registry],
    }),
    // D37: work refused at once because the process was past its load bound
    overloadRefusals: new Counter({
      name: 'rgs_overload_refusals_total',
      help: 'Work refused service_busy because this process was past its load bound (OVERLOAD_DELAY_MS): kind bet (place_bet) or operator_call (503 of an operator call that starts work, D37)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    sessionRejections: new Counter({
      name: 'rgs_session_rejections_total',
      help: 'Session launches refused with 422, by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    // counted where a placed bet is decided (bets/debit.ts): accepted, or REJECTED with the
    // bet_rejected reason its player was told (contract 8.2, D13, D28), a closed list (the
    // wallet's RS_ status included), so the label stays bounded. A bet refused before its
    // row is written (the placement rules) is not counted here.
    bets: new Counter({
      name: 'rgs_bets_total',
      help: 'Placed bets decided by this process: result accepted, or rejected with the bet_rejected reason (wallet_rejected:<RS_status>, wallet_timeout, phase_not_open, service_unavailable)',
      labelNames: ['result', 'reason'] as const,
      registers: [registry],
    }),
    // counted where a wallet job's attempt ends (wallet-jobs.ts), one per wallet call; not
    // rgs_wallet_jobs_total, which OpenMetrics would read as a counter of the same family as
    // the rgs_wallet_jobs gauge
    walletJobAttempts: new Counter({
      name: 'rgs_wallet_job_attempts_total',
      help: 'Wallet job (win, rollback) attempts by endpoint and outcome: completed, treated_as_settled (the wallet did not know the transaction: alert, contract 7.1), retried, abandoned (the 24 hours are spent: a ticket for a human)',
      labelNames: ['endpoint', 'outcome'] as const,
      registers: [registry],
    }),
    // counted where a webhook attempt ends (game/webhooks/delivery.ts, D31)
    webhookDeliveries: new Counter({
      name: 'rgs_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (a 2xx within 10 s), retried (not acknowledged, due again), failed (72 hours after the event: nothing more is tried; also events failed unsent, their window over before their next attempt), circuit_open (not sent: the endpoint\'s circuit is open)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
  };
}

type GaugeSources = {
  queueCounts: () => Promise<{ queue: string; state: string; count: number }[]>;
  roundsInPlay: () => Promise<{ state: string; count: number }[]>;
  walletJobCounts: () => Promise<{ endpoint: string; state: string; count: number }[]>;
  circuits: () => Promise<{ operatorId: string; endpoint: string; state: string }[]>;
  webhookEvents: () => Promise<{ pending: number; due: number }>;
};

// D15: queue depths, rounds by state, wallet jobs and circuits, read when /metrics is
// scraped (from Postgres and Redis, so every process reports the cluster's state). Every
// source is a bounded read: Redis counters, or Postgres through partial indexes that hold
// only the open rows, never a scan of a table that grows with every round played.
export function registerStateGauges(metrics: Metrics, sources: GaugeSources): void {
  new Gauge({
    name: 'rgs_queue_jobs',
    help: 'BullMQ jobs by queue and state',
    labelNames: ['queue', 'state'] as const,
    registers: [metrics.registry],
    async collect() {
      this.reset();
      for (const { queue, state, count } of await sources.queueCounts()) this.set({ queue, state }, count);
    },
  });
  // Rounds in play only: BETTING_OPEN, ROLLING and RESULT, which the partial index of
  // unsettled rounds holds (a few per connected player, however many rounds were played).
  // SETTLED and VOIDED rounds only ever grow: counting them at each scrape of each process
  // meant reading the whole table; their pace is a counter's job, where they settle or void.
  new Gauge({
    name: 'rgs_rounds',
    help: 'Rounds in play (not yet settled or voided) by state: BETTING_OPEN, ROLLING, RESULT',
    labelNames: ['state'] as const,
    registers: [metrics.registry],
    async collect() {
      const counts = new Map((await sources.roundsInPlay()).map(({ state, count }) => [state, count]));
      this.reset();
      for (const state of ROUNDS_IN_PLAY) this.set({ state }, counts.get(state) ?? 0);
    },
  });
  new Gauge({
    name: 'rgs_wallet_jobs',
    help: 'Wallet jobs (win, rollback) by endpoint and state: pending, stuck (pending over 5 minutes: alert), abandoned (a ticket for a human)',
    labelNames: ['endpoint', 'state'] as const,
    registers: [metrics.registry],
    async collect() {
      this.reset();
      for (const { endpoint, state, count } of await sources.walletJobCounts()) this.set({ endpoint, state }, count);
    },
  });
  new Gauge({
    name: 'rgs_wallet_circuit_state',
    help: 'Wallet circuit breakers that counted a failure, by operator, endpoint and state (closed, open, half_open); 1 marks the current state',
    labelNames: ['operator', 'endpoint', 'state'] as const,
    registers: [metrics.registry],
    async collect() {
      this.reset();
      for (const { operatorId, endpoint, state } of await sources.circuits()) this.set({ operator: operatorId, endpoint, state }, 1);
    },
  });
  // D31: read through the partial index of pending events, which holds only those
  new Gauge({
    name: 'rgs_webhook_events',
    help: 'Webhook events not yet delivered nor failed: pending (all of them), due (their attempt is due now: a backlog when it stays above zero, or endpoints disabled)',
    labelNames: ['state'] as const,
    registers: [metrics.registry],
    async collect() {
      const { pending, due } = await sources.webhookEvents();
      this.reset();
      this.set({ state: 'pending' }, pending);
      this.set({ state: 'due' }, due);
    },
  });
}
