import Router from '@koa/router';
import type { ServiceContext } from '../../shared/game/context.js';
import { conflict, notFound } from '../../shared/platform/errors.js';
import { BUCKETS } from '../../shared/platform/rate-limit.js';
import { compile } from '../../shared/platform/validation.js';
import { listDeliveries, redeliver, sendTestEvent } from '../../shared/game/webhooks/deliveries.js';
import { idempotency } from '../middleware/idempotency.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { validateBody } from '../middleware/validate.js';
import { isUuid } from '../schemas/common.js';
import { readDeliveriesQuery, webhookPostSchema } from '../schemas/webhooks.js';
import type { ApiState } from '../state.js';

// D31, D38: the operator's webhook deliveries. Every route, after the signed-request stage:
// (the POSTs: idempotency, D17), rate limit, validation, handler. An event of another
// operator reads as unknown (D10).
export function webhookRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  const remember = idempotency(svc, 10_000);
  const send = rateLimit(svc.redis, BUCKETS.webhooks);
  const validPost = compile(webhookPostSchema);
  const notConfigured = () => conflict('webhook_not_configured', 'the operator has no enabled webhook endpoint');

  router.post('/v1/webhooks/test', remember, send, validateBody(validPost, { emptyIsObject: true }), async (ctx) => {
    const eventId = await sendTestEvent(svc, ctx.state.operator.id);
    if (!eventId) throw notConfigured();
    ctx.status = 202;
    ctx.body = { eventId };
  });

  router.get('/v1/webhooks/deliveries', rateLimit(svc.redis, BUCKETS.read), async (ctx) => {
    ctx.body = await listDeliveries(svc, ctx.state.operator.id, readDeliveriesQuery(ctx.query));
  });

  router.post('/v1/webhooks/deliveries/:eventId/redeliver', remember, send, validateBody(validPost, { emptyIsObject: true }), async (ctx) => {
    const eventId = (ctx.params.eventId ?? '').toLowerCase();
    const outcome = isUuid(eventId) ? await redeliver(svc, ctx.state.operator.id, eventId) : 'not_found';
    if (outcome === 'not_found') throw notFound('not_found', 'webhook event not found');
    if (outcome === 'not_configured') throw notConfigured();
    ctx.status = 202;
    ctx.body = { eventId };
  });
  return router;
}
