import Router from '@koa/router';
import type { ServiceContext } from '../../shared/game/context.js';
import { notFound } from '../../shared/platform/errors.js';
import { PROVABLE, roundProof } from '../../shared/game/fairness/round-proof.js';
import { findRejectedBetRound } from '../../shared/game/reports/rounds.js';
import { BUCKETS } from '../../shared/platform/rate-limit.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { isUuid } from '../schemas/common.js';
import type { ApiState } from '../state.js';

// GET /v1/rounds/{roundId}/proof (contract 4.1, 2.11; DECISIONS D2, D19). 200 only for a
// round of the calling operator that is SETTLED or VOIDED with an outcome, and whose seed is
// retired; otherwise 404 round_not_found | round_not_settled | seed_not_revealed (D22: also
// for the roundId of a bet refused at the wallet, which never has an outcome).
export function proofRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  // D10: the proof endpoint shares the read rate limit
  router.get('/v1/rounds/:roundId/proof', rateLimit(svc.redis, BUCKETS.read), async (ctx) => {
    const roundId = ctx.params.roundId ?? '';
    // an operator never learns whether another operator's round exists
    const round = isUuid(roundId)
      ? await svc.db.round.findFirst({
          where: { id: roundId.toLowerCase(), operatorId: ctx.state.operator.id },
          include: PROVABLE,
        })
      : null;
    if (!round) {
      // D22: a roundId sent to the wallet with a bet that never became a round is known, and
      // never settles
      if (isUuid(roundId) && (await findRejectedBetRound(svc.db, ctx.state.operator.id, roundId.toLowerCase()))) {
        throw notFound('round_not_settled', 'the round is not settled yet');
      }
      throw notFound('round_not_found', 'round not found');
    }

    const proven = roundProof(svc.config.masterKey, svc.now(), round);
    if (proven.kind === 'no_outcome') throw notFound('round_not_settled', 'the round is not settled yet');
    if (proven.kind === 'not_revealed') {
      throw notFound('seed_not_revealed', 'the server seed is revealed when the session ends or the seed is rotated', {
        revealableAfter: proven.revealableAfter.toISOString(),
      });
    }
    ctx.body = proven.proof;
  });
  return router;
}
