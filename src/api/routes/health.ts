import Router from '@koa/router';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiState } from '../state.js';

// D15: liveness, readiness and metrics; the only routes that need no signature.
export function healthRoutes(svc: Pick<ServiceContext, 'dependencies' | 'metrics'>) {
  const router = new Router<ApiState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const { postgres, redis } = await svc.dependencies.probe();
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
