import { AppError, notFound, toAppError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { ApiMiddleware } from '../state.js';

// Renders every failure as a D3 body. Known errors carry their own status and code; anything
// else is logged here and answered with a bare internal_error (no stack, no SQL).
export function errorBodies(logger: Logger): ApiMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw notFound('not_found', `no route for ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const appError = toAppError(err);
      if (!(err instanceof AppError)) logger.error({ err, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = appError.status;
      ctx.body = appError.body();
      ctx.set(appError.headers);
    }
  };
}
