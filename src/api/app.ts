import Koa from 'koa';
import compose from 'koa-compose';
import type { ServiceContext } from '../shared/game/context.js';
import { createBotChallenge } from './bot-challenge.js';
import { errorBodies } from './middleware/errors.js';
import { serviceBusy } from '../shared/platform/errors.js';
import { ipAllowList } from './middleware/ip-allow-list.js';
import { shedWhileBusy } from './load-shedding.js';
import { rawBody } from './middleware/raw-body.js';
import { requestLog } from './middleware/request-log.js';
import { requestMetrics } from './middleware/request-metrics.js';
import { securityHeaders } from './middleware/security-headers.js';
import { verifySignature } from './middleware/signature.js';
import { PublicKeys } from '../shared/wallet/public-keys.js';
import { sandboxInEffect } from '../shared/game/operators/sandbox.js';
import { healthRoutes, type Listener } from './routes/health.js';
import { keysRoutes } from './routes/keys.js';
import { openApiRoutes } from './routes/openapi.js';
import { proofRoutes } from './routes/proof.js';
import { reconciliationRoutes } from './routes/reconciliation.js';
import { roundRoutes } from './routes/rounds.js';
import { sessionRoutes } from './routes/session.js';
import { webhookRoutes } from './routes/webhooks.js';
import { gameRoutes } from './routes/games.js';
import { freeBetRoutes } from './routes/freebets.js';
import type { ApiMiddleware, ApiState } from './state.js';

// The operator-facing HTTP API. Everything under /v1 passes the signed-request stage
// (IP allow-list, raw body, signature; contract 5.2-5.4) before any route matches, so no
// request reaches a handler unsigned; only /healthz, /readyz, /metrics (in production only to
// METRICS_TOKEN's bearer, D25), the API's description, /v1/openapi.json, and the service's
// public keys, /v1/keys (D32), are open.
// `player` routes (the launch page of the realtime role) are mounted before the signed
// stage: they are authenticated by the session token (D16).
type Routes = { routes: () => Koa.Middleware<any, any> };

export function createApiApp(svc: ServiceContext, player: Routes[] = []): Koa<ApiState> {
  // D12, D24: behind TRUST_PROXY_HOPS proxies, ctx.ip is the X-Forwarded-For entry that many
  // places from the right (Koa keeps the last maxIpsCount entries and takes the first of
  // those); what the client wrote further left is never the caller IP
  const app = new Koa<ApiState>({ proxy: svc.config.trustProxy, maxIpsCount: svc.config.trustProxyHops });
  app.silent = true;

  // D35: whether the verified operator's sandbox powers hold here, for the rate limits
  const sandbox: ApiMiddleware = (ctx, next) => {
    ctx.state.sandbox = sandboxInEffect(ctx.state.operator, svc.config);
    return next() as Promise<void>;
  };
  const signed = compose([ipAllowList(svc.sql), rawBody(), verifySignature(svc.config.masterKey, svc.redis, svc.now, svc.logger, new PublicKeys(svc.config.nodeEnv === 'production', () => svc.now().getTime())), sandbox]) as ApiMiddleware;
  const routers = signedRouters(svc);
  // the pattern of the signed route a refused request was meant for, so that its access
  // line and its latency are filed under that route rather than 'unmatched'
  const routeMeant = (method: string, path: string): string | undefined => {
    for (const router of routers) {
      const layer = router.match(path, method).pathAndMethod.filter((candidate) => candidate.methods.length > 0).at(-1);
      if (layer) return String(layer.path);
    }
    return undefined;
  };
  // The routers match paths case-insensitively (@koa/router's default), so /V1/... reaches
  // the same handlers and must pass the same stage.
  const onlyUnderV1: ApiMiddleware = async (ctx, next) => {
    const path = ctx.path.toLowerCase();
    if (path !== '/v1' && !path.startsWith('/v1/')) return next() as Promise<void>;
    try {
      // D37: past the process's bound an operator call that starts work is refused
      // before its signature is checked (the most expensive step of a refusal); the reads
      // of one record are served (load-shedding.ts)
      if (svc.overload.busy() && shedWhileBusy(ctx.method, routeMeant(ctx.method, ctx.path))) {
        svc.overload.refuse('operator_call', svc);
        throw serviceBusy();
      }
      await signed(ctx, next);
    } catch (err) {
      ctx.state.route ??= routeMeant(ctx.method, ctx.path);
      throw err;
    }
  };

  app.use(securityHeaders());
  app.use(requestLog(svc.logger));
  app.use(requestMetrics(svc.metrics));
  app.use(errorBodies(svc.logger));
  for (const router of openRouters(svc)) app.use(router.routes());
  for (const routes of player) app.use(routes.routes());
  app.use(onlyUnderV1);
  for (const router of routers) app.use(router.routes());
  return app;
}

// the routes open to anyone, mounted before the signed stage
export const openRouters = (svc: ServiceContext) => [healthRoutes(svc, 'public'), openApiRoutes(), keysRoutes(svc)];

// the /v1 routes behind the signed stage
export const signedRouters = (svc: ServiceContext) => [
  sessionRoutes(svc, createBotChallenge(svc.config.botChallenge, svc.logger)),
  roundRoutes(svc),
  proofRoutes(svc),
  reconciliationRoutes(svc),
  webhookRoutes(svc),
  gameRoutes(svc),
  freeBetRoutes(svc),
];

// Processes without the api role answer only /healthz, /readyz and /metrics (D20), on PORT
// (with the launch page of the realtime role) or on HEALTH_PORT.
export function createHealthApp(svc: ServiceContext, listener: Listener, player: Routes[] = []): Koa<ApiState> {
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(securityHeaders());
  app.use(requestLog(svc.logger));
  app.use(errorBodies(svc.logger));
  app.use(healthRoutes(svc, listener).routes());
  for (const routes of player) app.use(routes.routes());
  return app;
}
