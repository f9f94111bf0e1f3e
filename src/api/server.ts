import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceContext } from '../shared/context.js';
import { createApiApp } from './app.js';

// The api role: the Koa app on PORT, plus the hourly sweep of expired idempotency entries
// (D17 keeps them 24 hours; any node may sweep, the DELETE is idempotent).
const IDEMPOTENCY_SWEEP_MS = 60 * 60 * 1000;

export type RunningApi = { server: Server; url: string; close: () => Promise<void> };

export async function startApi(svc: ServiceContext, port = svc.config.port): Promise<RunningApi> {
  const app = createApiApp(svc);
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve());
  });
  const sweep = setInterval(() => {
    svc.db.idempotencyEntry
      .deleteMany({ where: { expiresAt: { lt: svc.now() } } })
      .catch((err: unknown) => svc.logger.warn({ err }, 'idempotency sweep failed'));
  }, IDEMPOTENCY_SWEEP_MS);
  sweep.unref();
  const { port: bound } = server.address() as AddressInfo;
  svc.logger.info({ port: bound }, 'api listening');
  return {
    server,
    url: `http://127.0.0.1:${bound}`,
    close: async () => {
      clearInterval(sweep);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}
