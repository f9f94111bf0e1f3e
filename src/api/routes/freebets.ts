import Router from '@koa/router';
import type { ServiceContext } from '../../shared/game/context.js';
import { notFound } from '../../shared/platform/errors.js';
import { BUCKETS } from '../../shared/platform/rate-limit.js';
import { compile } from '../../shared/platform/validation.js';
import { campaignTotals, cancelCampaign, createCampaign, listGrants } from '../../shared/game/freebets/campaigns.js';
import type { CampaignTermsInput } from '../../shared/game/freebets/terms.js';
import { tellCampaignSessions } from '../../shared/game/freebets/usable.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { validateBody } from '../middleware/validate.js';
import { isUuid } from '../schemas/common.js';
import { freeBetCreateSchema, readGrantsQuery } from '../schemas/freebets.js';
import type { ApiState } from '../state.js';

// D42: free-bet campaigns, the operator's side. Every route, after the signed-request stage:
// rate limit, validation, handler. The create is idempotent on campaignRef itself (the same
// terms answer the same 201 body, other terms 409 campaign_conflict), so it needs no
// requestUuid (D17). A campaign of another operator reads as unknown (D10). The writes have
// the freebets bucket, the reads share the read bucket (contract 8.1, D10).
export function freeBetRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  const read = rateLimit(svc.redis, BUCKETS.read);
  const write = rateLimit(svc.redis, BUCKETS.freebets);
  const validCreate = compile(freeBetCreateSchema);
  const context = () => ({ db: svc.db, sql: svc.sql, now: svc.now() });
  const campaignIdOf = (id: string | undefined): string => {
    if (!isUuid(id ?? '')) throw notFound('campaign_not_found', 'free-bet campaign not found');
    return id!.toLowerCase();
  };

  router.post('/v1/freebets', write, validateBody(validCreate, { emptyIsObject: false }), async (ctx) => {
    const created = await createCampaign(context(), ctx.state.operator.id, ctx.state.body as CampaignTermsInput);
    ctx.status = 201;
    ctx.body = { campaignId: created.campaignId, grants: created.grants };
  });

  router.get('/v1/freebets', read, async (ctx) => {
    ctx.body = await listGrants(context(), ctx.state.operator.id, readGrantsQuery(ctx.query));
  });

  router.get('/v1/freebets/:campaignId', read, async (ctx) => {
    ctx.body = await campaignTotals(context(), ctx.state.operator.id, campaignIdOf(ctx.params.campaignId));
  });

  router.delete('/v1/freebets/:campaignId', write, async (ctx) => {
    const campaignId = campaignIdOf(ctx.params.campaignId);
    ctx.body = await cancelCampaign(context(), ctx.state.operator.id, campaignId);
    // D42: the players' live sessions are told their grants changed; the answer does not wait
    const operatorId = ctx.state.operator.id;
    void tellCampaignSessions(svc, operatorId, campaignId).catch((err: unknown) =>
      svc.logger.warn({ err: (err as Error).message, campaignId }, 'free_bets after a cancellation not sent'),
    );
  });
  return router;
}
