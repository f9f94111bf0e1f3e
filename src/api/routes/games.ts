import Router from '@koa/router';
import type { ServiceContext } from '../../shared/game/context.js';
import { BUCKETS } from '../../shared/platform/rate-limit.js';
import { gameCatalogue } from '../../shared/game/operators/game-config.js';
import { rateLimit } from '../middleware/rate-limit.js';
import type { ApiState } from '../state.js';

// D39: the catalogue of the calling operator, after the signed-request stage and its read
// rate limit
export function gameRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  router.get('/v1/games', rateLimit(svc.redis, BUCKETS.read), async (ctx) => {
    ctx.body = await gameCatalogue(svc.db, ctx.state.operator.id);
  });
  return router;
}
