import type { Metrics } from '../../shared/platform/metrics.js';
import type { ApiMiddleware } from '../state.js';
import { routeOf } from './request-log.js';

// D15: request latency histogram by route (the route pattern, never the raw path, so that
// ids do not explode the label set).
export const requestMetrics = (metrics: Metrics): ApiMiddleware => async (ctx, next) => {
  const stop = metrics.httpRequestDuration.startTimer();
  try {
    await next();
  } finally {
    stop({ method: ctx.method, route: routeOf(ctx), status: String(ctx.status) });
  }
};
