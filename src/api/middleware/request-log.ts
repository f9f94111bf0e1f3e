import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../shared/platform/logger.js';
import type { ApiContext, ApiMiddleware } from '../state.js';

// One access line per request, and a logger bound to the request's id (ctx.state.log), which
// the stages and handlers after this one log through, so that every line of a request names
// it. The id is the caller's X-Request-Id when that is a bounded token of safe characters (a
// UUID, a proxy's or the operator's own trace id: one id then follows the request through
// their logs and ours), else a fresh UUID; anything else the caller wrote is neither echoed
// nor logged (D24). The id is answered in X-Request-Id, on errors too.
//
// The line names the method, the route (its pattern, never the raw path with its ids), the
// status, the duration and, once the signature is verified, the operator; never the body, a
// header, a signature or a token (D25). The bound logger is passed explicitly rather than
// kept in an AsyncLocalStorage: that would track every promise of the process, the bet path
// of a realtime node included, and would lend a request's id to any connection or timer the
// request happened to start.
export const REQUEST_ID_HEADER = 'X-Request-Id';
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

// probes and scrapes, every few seconds from each load balancer and Prometheus (D15): debug
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

// The route pattern a request matched; for a /v1 request that the signed stage refused
// before any route matched, the pattern it was meant for (app.ts). Bounded: fit for a label.
export const routeOf = (ctx: ApiContext): string =>
  (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? ctx.state.route ?? 'unmatched';

export const requestLog = (logger: Logger): ApiMiddleware => async (ctx, next) => {
  const presented = ctx.get(REQUEST_ID_HEADER);
  const requestId = REQUEST_ID.test(presented) ? presented : randomUUID();
  ctx.set(REQUEST_ID_HEADER, requestId);
  const log = logger.child({ reqId: requestId });
  ctx.state.log = log;
  const started = performance.now();
  let escaped: number | undefined;
  try {
    await next();
  } catch (err) {
    // errorBodies answers every failure; one past it is answered by Koa with its status
    escaped = (err as { status?: number }).status ?? 500;
    throw err;
  } finally {
    const route = routeOf(ctx);
    const line = {
      method: ctx.method,
      route,
      status: escaped ?? ctx.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      ...(ctx.state.operator ? { operatorId: ctx.state.operator.id } : {}),
    };
    if (QUIET_ROUTES.has(route)) log.debug(line, 'request');
    else log.info(line, 'request');
  }
};
