import Router from '@koa/router';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../shared/platform/config.js';
import type { ServiceContext } from '../../shared/game/context.js';
import type { LiveBody, ReadyBody } from '../schemas/health.js';
import type { ApiState } from '../state.js';

// D15: liveness, readiness and metrics; the only routes that need no signature.

// Where a health app listens: the public port (PORT) or HEALTH_PORT (D20).
export type Listener = 'public' | 'health';

export type MetricsAccess = { kind: 'open' } | { kind: 'bearer'; token: string } | { kind: 'hidden' };

// D25: in production the public port serves /metrics only to the bearer of METRICS_TOKEN,
// and not at all without one; HEALTH_PORT is not public and serves it openly.
export function metricsAccess(config: Pick<Config, 'nodeEnv' | 'metricsToken'>, listener: Listener): MetricsAccess {
  if (listener === 'health' || config.nodeEnv !== 'production') return { kind: 'open' };
  return config.metricsToken ? { kind: 'bearer', token: config.metricsToken } : { kind: 'hidden' };
}

// compared as digests, so that neither the length nor the content of the token leaks through timing
const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

function bearerMatches(authorization: string, expected: Buffer): boolean {
  const presented = /^Bearer (.+)$/i.exec(authorization)?.[1];
  return presented !== undefined && timingSafeEqual(digest(presented), expected);
}

export function healthRoutes(svc: Pick<ServiceContext, 'dependencies' | 'metrics' | 'config'>, listener: Listener) {
  const router = new Router<ApiState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' } satisfies LiveBody;
  });
  router.get('/readyz', async (ctx) => {
    const { postgres, redis } = await svc.dependencies.probe();
    const ready = postgres === 'ok' && redis === 'ok';
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks: { postgres, redis } } satisfies ReadyBody;
  });
  const access = metricsAccess(svc.config, listener);
  if (access.kind === 'hidden') return router;
  const expected = access.kind === 'bearer' ? digest(access.token) : undefined;
  router.get('/metrics', async (ctx) => {
    // a refused bearer gets the 404 of an unknown path, like a port without METRICS_TOKEN
    if (expected && !bearerMatches(ctx.get('authorization'), expected)) return;
    ctx.type = svc.metrics.registry.contentType;
    ctx.body = await svc.metrics.registry.metrics();
  });
  return router;
}
