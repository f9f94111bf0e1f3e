import { AppError, notFound, serviceUnavailable, toAppError } from '../../shared/platform/errors.js';
import { isDependencyFailure } from '../../shared/platform/dependencies.js';
import { TokenKeyMismatchError } from '../../shared/game/sessions/token.js';
import type { Logger } from '../../shared/platform/logger.js';
import type { ApiMiddleware } from '../state.js';

// Renders every failure as a D3 body. Known errors carry their own status and code; anything
// else is logged here and answered with a bare internal_error (no stack, no SQL), except a
// lost Postgres or Redis connection, which is the service's own outage: 503 with
// Retry-After, so that the operator retries. So is a node that would sign session tokens
// otherwise than configured (a migrate rotated the token key while it ran with another
// SESSION_TOKEN_ALG, D38): it signs nothing until it is restarted as configured, and the
// operator's retry of the same launch (D17) is served then or by another node; the reason
// is logged at error, for the operations engineer who rolls the change out.
export function errorBodies(logger: Logger): ApiMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw notFound('not_found', 'no such route'); // D3: the path is not echoed
    } catch (err) {
      const misconfigured = err instanceof TokenKeyMismatchError;
      const outage = !(err instanceof AppError) && !misconfigured && isDependencyFailure(err);
      const appError = misconfigured
        ? serviceUnavailable('this node cannot sign session tokens until it is restarted; retry shortly')
        : outage
          ? serviceUnavailable('a dependency of the service is unavailable; retry shortly')
          : toAppError(err);
      const log = ctx.state.log ?? logger;
      if (misconfigured) log.error({ err: err.message, method: ctx.method, path: ctx.path }, 'request refused: session-token key of another algorithm');
      else if (outage) log.warn({ err: (err as Error).message, method: ctx.method, path: ctx.path }, 'request failed: dependency unavailable');
      else if (!(err instanceof AppError)) log.error({ err, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = appError.status;
      ctx.body = appError.body();
      ctx.set(appError.headers);
    }
  };
}
