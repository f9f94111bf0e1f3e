import type { ServiceContext } from '../shared/game/context.js';
import { startHttpServer, type RunningHttp } from '../shared/platform/http.js';
import { createApiApp } from './app.js';

// The api role: the Koa app on PORT, plus the hourly sweep of expired idempotency entries
// (D17 keeps them 24 hours; any node may sweep, the DELETE is idempotent).
const IDEMPOTENCY_SWEEP_MS = 60 * 60 * 1000;

export type RunningApi = RunningHttp;

export async function startApi(svc: ServiceContext, port = svc.config.port, player: Parameters<typeof createApiApp>[1] = []): Promise<RunningApi> {
  const http = await startHttpServer(port, createApiApp(svc, player).callback());
  const sweep = setInterval(() => {
    svc.db.idempotencyEntry
      .deleteMany({ where: { expiresAt: { lt: svc.now() } } })
      .catch((err: unknown) => svc.logger.warn({ err }, 'idempotency sweep failed'));
  }, IDEMPOTENCY_SWEEP_MS);
  sweep.unref();
  svc.logger.info({ url: http.url }, 'api listening');
  return {
    ...http,
    close: async () => {
      clearInterval(sweep);
      await http.close();
    },
  };
}
