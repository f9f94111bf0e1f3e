import Router from '@koa/router';
import type { ServiceContext } from '../../shared/game/context.js';
import { notFound } from '../../shared/platform/errors.js';
import { BUCKETS } from '../../shared/platform/rate-limit.js';
import { launchSession, replayLaunch } from '../../shared/game/sessions/launch.js';
import { sessionTokens } from '../../shared/game/sessions/token.js';
import { terminateSession } from '../../shared/game/sessions/terminate.js';
import type { BotChallenge } from '../bot-challenge.js';
import { idempotency } from '../middleware/idempotency.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { validateBody } from '../middleware/validate.js';
import { isUuid } from '../schemas/common.js';
import { compile } from '../../shared/platform/validation.js';
import { sessionCreateSchema, sessionTerminateSchema, type SessionCreateBody, type SessionTerminateBody } from '../schemas/session.js';
import { forRequest, type ApiState } from '../state.js';

// Every route runs, after the signed-request stage: idempotency, rate limit, validation,
// handler (D17, 8.1, D9).
export function sessionRoutes(svc: ServiceContext, botChallenge: BotChallenge) {
  const router = new Router<ApiState>();
  // an idempotency claim outlives the slowest handler: the wallet timeout plus a margin
  const leaseMs = svc.config.walletCallTimeoutMs + 10_000;
  const remember = idempotency(svc, leaseMs);
  // D25: a stored launch holds no token; its replay re-mints it
  const rememberLaunch = idempotency(svc, leaseMs, (stored) =>
    stored.status === 200 ? replayLaunch(sessionTokens(svc), stored.body) : stored.body,
  );
  const validCreate = compile(sessionCreateSchema);
  const validTerminate = compile(sessionTerminateSchema);

  router.post(
    '/v1/session',
    rememberLaunch,
    rateLimit(svc.redis, BUCKETS.session),
    validateBody(validCreate, { emptyIsObject: false }),
    async (ctx) => {
      const body = ctx.state.body as SessionCreateBody;
      await botChallenge(body.botChallengeToken ?? (ctx.get('bot-challenge-response') || undefined), ctx.ip, ctx.state.log);
      const { requestUuid: _key, botChallengeToken: _token, ...request } = body;
      ctx.body = await launchSession(forRequest(svc, ctx), ctx.state.operator, request, ctx.state.idempotency);
    },
  );

  router.post(
    '/v1/session/:sessionId/terminate',
    remember,
    rateLimit(svc.redis, BUCKETS.terminate),
    validateBody(validTerminate, { emptyIsObject: true }),
    async (ctx) => {
      const sessionId = ctx.params.sessionId ?? '';
      if (!isUuid(sessionId)) throw notFound('not_found', 'session not found');
      const body = ctx.state.body as SessionTerminateBody;
      ctx.body = await terminateSession(forRequest(svc, ctx), ctx.state.operator.id, sessionId.toLowerCase(), body.reason);
    },
  );
  return router;
}
