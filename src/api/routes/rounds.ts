import Router from '@koa/router';
import type { ServiceContext } from '../../shared/game/context.js';
import { notFound, roundNotSettledYet } from '../../shared/platform/errors.js';
import { BUCKETS } from '../../shared/platform/rate-limit.js';
import { disputePack } from '../../shared/game/evidence/dispute-pack.js';
import { isLive, recallRound } from '../../shared/game/reports/recall.js';
import { recallLink } from '../../shared/game/reports/recall-link.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { isUuid } from '../schemas/common.js';
import type { ApiState } from '../state.js';

// GET /v1/rounds/{roundId}/dispute-pack (contract 4.1, D32): the signed evidence of a
// finished round of the calling operator, as a ZIP. 404 round_not_found for an unknown round
// or another operator's (D10), 409 round_not_settled while it is played; a roundId whose bet
// the wallet refused reads as a voided round (D22) and has its pack. Shares the read bucket.
export function roundRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  router.get('/v1/rounds/:roundId/dispute-pack', rateLimit(svc.redis, BUCKETS.read), async (ctx) => {
    const roundId = ctx.params.roundId ?? '';
    const answer = isUuid(roundId)
      ? await disputePack({ db: svc.db, sql: svc.sql, masterKey: svc.config.masterKey, now: svc.now() }, ctx.state.operator.id, roundId.toLowerCase())
      : ({ kind: 'not_found' } as const);
    if (answer.kind === 'not_found') throw notFound('round_not_found', 'round not found');
    if (answer.kind === 'live') throw roundNotSettledYet('the round is still being played: its pack is made once it is settled or voided');
    ctx.type = 'application/zip';
    ctx.set('Content-Disposition', `attachment; filename="dispute-pack-${answer.manifest.roundId}.zip"`);
    ctx.body = answer.archive;
  });

  // D33: a link, valid 24 hours, to the page that shows a finished round as the player lived
  // it. Another operator's round reads as unknown (D10). A round still in play is refused
  // 409 round_not_settled, as its dispute pack is (D32): the page shows what the wallet
  // answered and the proof, and neither is final before the round is.
  router.get('/v1/rounds/:roundId/replay-url', rateLimit(svc.redis, BUCKETS.read), async (ctx) => {
    const roundId = (ctx.params.roundId ?? '').toLowerCase();
    const operatorId = ctx.state.operator.id;
    const round = isUuid(roundId) ? await recallRound(svc, operatorId, roundId) : undefined;
    if (!round) throw notFound('round_not_found', 'round not found');
    if (isLive(round)) throw roundNotSettledYet('the round is still being played: its recall link is made once it is settled or voided');
    ctx.body = recallLink(svc.config.masterKey, svc.config.publicUrl, { roundId, operatorId }, svc.now());
  });
  return router;
}
