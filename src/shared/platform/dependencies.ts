import type { Db } from './db/client.js';
import type { Logger } from './logger.js';
import type { Redis } from './redis.js';

// Postgres and Redis as this process last saw them (D15, D28). A probe
// every second keeps the answer fresh, so intake can pause at once while a dependency is
// away (bets are refused with `service_unavailable`, sessions with 503) and resume by
// itself when the probe answers again. /readyz reports the same probes.

export type Dependency = 'postgres' | 'redis';
export type DependencyStates = Record<Dependency, 'ok' | 'failed'>;

const PROBE_EVERY_MS = 1000;
const PROBE_TIMEOUT_MS = 1000;
// A busy process can miss one deadline without its dependency being gone: intake pauses
// only after this many probes in a row failed (about 2 s), and resumes on the first success.
const FAILED_PROBES_TO_PAUSE = 2;

function withinDeadline(check: Promise<unknown>, timeoutMs = PROBE_TIMEOUT_MS): Promise<'ok' | 'failed'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'failed'>((resolve) => {
    timer = setTimeout(() => resolve('failed'), timeoutMs);
  });
  return Promise.race([check.then(() => 'ok' as const, () => 'failed' as const), deadline]).finally(() => clearTimeout(timer));
}

export class DependencyMonitor {
  private states: DependencyStates = { postgres: 'ok', redis: 'ok' };
  private failedInARow: Record<Dependency, number> = { postgres: 0, redis: 0 };
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<DependencyStates> | undefined;

  constructor(
    private readonly db: Db,
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.probe(), PROBE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  // Redis's own connection state answers at once; Postgres is as of the last probe
  available(): boolean {
    return this.states.postgres === 'ok' && this.states.redis === 'ok' && this.redis.status === 'ready';
  }

  current(): DependencyStates {
    return { ...this.states, redis: this.redis.status === 'ready' ? this.states.redis : 'failed' };
  }

  // One probe at a time; concurrent callers share it.
  probe(): Promise<DependencyStates> {
    this.probing ??= Promise.all([withinDeadline(this.db.$queryRaw`SELECT 1`), withinDeadline(this.redis.ping())])
      .then(([postgres, redis]) => {
        this.record({ postgres, redis });
        return this.current();
      })
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  private record(probed: DependencyStates): void {
    for (const name of ['postgres', 'redis'] as const) {
      this.failedInARow[name] = probed[name] === 'failed' ? this.failedInARow[name] + 1 : 0;
      const next = this.failedInARow[name] >= FAILED_PROBES_TO_PAUSE ? 'failed' : probed[name] === 'ok' ? 'ok' : this.states[name];
      if (next === this.states[name]) continue;
      if (next === 'failed') this.logger.warn({ dependency: name }, 'dependency lost: intake paused');
      else this.logger.info({ dependency: name }, 'dependency back: intake resumed');
      this.states[name] = next;
    }
  }
}

// Errors that mean "a dependency is away", not "this request is wrong": answered 503.
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'P1001', 'P1002', 'P1017', 'P2024']);
const CONNECTION_MESSAGES = /Connection is closed|Stream isn't writeable|enableOfflineQueue|Reached the max retries|Connection terminated|connection timeout|Can't reach database|ECONNREFUSED|ECONNRESET/i;

export function isDependencyFailure(err: unknown): boolean {
  for (let current = err, depth = 0; current && depth < 5; depth += 1) {
    const { code, name, message, cause } = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (name === 'PrismaClientInitializationError' || name === 'MaxRetriesPerRequestError') return true;
    if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
    current = cause;
  }
  return false;
}
