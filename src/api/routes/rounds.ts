import Router from '@koa/router';
import type { ServiceContext } from '../../platform/context.js';
import { notImplemented } from '../../platform/errors.js';
import { BUCKETS } from '../../platform/rate-limit.js';
import { rateLimit } from '../middleware/rate-limit.js';
import type { ApiState } from '../state.js';

export function roundRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  // contract 4.1 and 9: the dispute pack is planned for v1.1; D3: 501 not_implemented
  router.get('/v1/rounds/:roundId/dispute-pack', rateLimit(svc.redis, BUCKETS.read), () => {
    throw notImplemented('the dispute pack is planned for a later version (contract 9)');
  });
  return router;
}
