import Router from '@koa/router';
import type { ServiceContext } from '../../shared/game/context.js';
import { notFound, operatorMismatch } from '../../shared/platform/errors.js';
import { BUCKETS } from '../../shared/platform/rate-limit.js';
import { ggrReport, jackpotReport } from '../../shared/game/reports/ggr.js';
import { findRound, listFinishedRounds } from '../../shared/game/reports/rounds.js';
import { walletCallsReport } from '../../shared/game/reports/wallet-calls.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { isUuid } from '../schemas/common.js';
import { readListQuery, readReportQuery, readRoundQuery } from '../schemas/reconciliation.js';
import type { ApiContext, ApiState } from '../state.js';

// The reconciliation reads of D10 (contract 4.1 "not shown"). Every one shares the read
// bucket (8.1, D10), sees only the signing operator's rows, and accepts an `operatorId`
// query parameter only when it names that operator (403 operator_mismatch otherwise).
// D36: they read the replica when DATABASE_REPLICA_URL is set, once it has caught up with
// the primary (db/replica.ts): a replica behind or away answers 503, never an older state.
export function reconciliationRoutes(svc: ServiceContext) {
  const router = new Router<ApiState>();
  const read = rateLimit(svc.redis, BUCKETS.read);

  // the key's operator is the scope; a different operatorId asks for another tenant
  const scope = (ctx: ApiContext, query: { operatorId?: string }): string => {
    if (query.operatorId !== undefined && query.operatorId !== ctx.state.operator.id) throw operatorMismatch();
    return ctx.state.operator.id;
  };

  router.get('/v1/rounds', read, async (ctx) => {
    const query = readListQuery(ctx.query);
    const operatorId = scope(ctx, query);
    ctx.body = await svc.replica.read((db) => listFinishedRounds(db, operatorId, { from: query.from, to: query.to }, query.after, query.limit));
  });

  // D10: a round of another operator is indistinguishable from an unknown one
  router.get('/v1/rounds/:roundId', read, async (ctx) => {
    const operatorId = scope(ctx, readRoundQuery(ctx.query));
    const roundId = ctx.params.roundId ?? '';
    const round = isUuid(roundId) ? await svc.replica.read((db) => findRound(db, operatorId, roundId.toLowerCase())) : undefined;
    if (!round) throw notFound('not_found', 'round not found');
    ctx.body = round;
  });

  router.get('/v1/reports/ggr', read, async (ctx) => {
    const query = readReportQuery(ctx.query, svc.now());
    const operatorId = scope(ctx, query);
    const [games, jackpots] = await svc.replica.read((db) => Promise.all([ggrReport(db, operatorId, query), jackpotReport(db, operatorId)]));
    ctx.body = { from: query.from.toISOString(), to: query.to.toISOString(), games, jackpots };
  });

  router.get('/v1/reports/wallet-calls', read, async (ctx) => {
    const query = readReportQuery(ctx.query, svc.now());
    const operatorId = scope(ctx, query);
    const rows = await svc.replica.read((db) => walletCallsReport(db, operatorId, query));
    // contract 3.4: the circuit of each endpoint as it stands now (not over the range)
    const endpoints = await Promise.all(rows.map(async (row) => ({ ...row, circuit: await svc.wallet.circuit.state(operatorId, row.endpoint) })));
    // D35: a sandbox operator's wallet is a test wallet, so the whole report is a sandbox one
    ctx.body = { from: query.from.toISOString(), to: query.to.toISOString(), sandbox: ctx.state.sandbox === true, endpoints };
  });
  return router;
}
