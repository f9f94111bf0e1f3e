import Router from '@koa/router';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiState } from '../state.js';

// D15: liveness, readiness and metrics; the only routes that need no signature.
const READINESS_TIMEOUT_MS = 1000;

function withinDeadline(check: Promise<unknown>): Promise<'ok' | 'failed'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'failed'>((resolve) => {
    timer = setTimeout(() => resolve('failed'), READINESS_TIMEOUT_MS);
  });
  return Promise.race([check.then(() => 'ok' as const, () => 'failed' as const), deadline]).finally(() => clearTimeout(timer));
}

export function healthRoutes(svc: Pick<ServiceContext, 'db' | 'redis' | 'metrics'>) {
  const router = new Router<ApiState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const [postgres, redis] = await Promise.all([withinDeadline(svc.db.$queryRaw`SELECT 1`), withinDeadline(svc.redis.ping())]);
    const ready = postgres === 'ok' && redis === 'ok';
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks: { postgres, redis } };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = svc.metrics.registry.contentType;
    ctx.body = await svc.metrics.registry.metrics();
  });
  return router;
}
