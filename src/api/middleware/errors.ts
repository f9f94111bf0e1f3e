import { AppError, notFound, serviceUnavailable, toAppError } from '../../platform/errors.js';
import { isDependencyFailure } from '../../platform/dependencies.js';
import type { Logger } from '../../platform/logger.js';
import type { ApiMiddleware } from '../state.js';

// Renders every failure as a D3 body. Known errors carry their own status and code; anything
// else is logged here and answered with a bare internal_error (no stack, no SQL), except a
// lost Postgres or Redis connection, which is the service's own outage: 503 with
// Retry-After, so that the operator retries.
export function errorBodies(logger: Logger): ApiMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw notFound('not_found', 'no such route'); // D3: the path is not echoed
    } catch (err) {
      const outage = !(err instanceof AppError) && isDependencyFailure(err);
      const appError = outage ? serviceUnavailable('a dependency of the service is unavailable; retry shortly') : toAppError(err);
      const log = ctx.state.log ?? logger;
      if (outage) log.warn({ err: (err as Error).message, method: ctx.method, path: ctx.path }, 'request failed: dependency unavailable');
      else if (!(err instanceof AppError)) log.error({ err, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = appError.status;
      ctx.body = appError.body();
      ctx.set(appError.headers);
    }
  };
}
