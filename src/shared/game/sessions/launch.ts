import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import type { Operator } from '../../platform/db/client.js';
import {
  AppError,
  SESSION_REJECTION_REASONS,
  badGateway,
  gameNotAvailable,
  notFound,
  operatorMismatch,
  sandboxOnly,
  sessionRejected,
  type SessionRejectionReason,
} from '../../platform/errors.js';
import { params, statement } from '../../platform/db/sql.js';
import { generateClientSeed, generateServerSeed, serverSeedHash } from '../../domain/seeds.js';
import { sealServerSeed } from '../fairness/seed-vault.js';
import { sandboxInEffect } from '../operators/sandbox.js';
import { gameAvailable } from '../operators/game-config.js';
import { completeIdempotencySql, completionParams, IDEMPOTENCY_PARAM_COUNT, type IdempotencyClaim } from '../../platform/idempotency.js';
import { parseMicro } from '../../domain/money.js';
import { looseRgFields, maximaFor } from '../../domain/rg-limits.js';
import { SESSION_LIFETIME_SECONDS, sessionTokens, type SessionTokens, type SessionClaims } from './token.js';
import { WalletAddressRefusedError, WalletTargetError } from '../../wallet/client.js';
import { AUDIT_PARAM_COUNT, auditParams, completeAuditsSql, type AuditCompletion } from '../../wallet/audit.js';
import { balanceRequest } from '../../wallet/requests.js';
import { launchedProfile } from './jurisdiction.js';

// POST /v1/session (contract 4.1, 2.2-2.4, 5.6, DECISIONS D2, D7, D8).

export type LaunchRequest = {
  operatorId: string;
  playerRef: string;
  gameCode: string;
  currency: string;
  lang: string;
  jurisdiction: string;
  mode?: 'real' | 'demo';
  returnUrl?: string;
  clientSeed?: string;
  rgLimits?: { dailyLossMicro?: string; dailyWagerMicro?: string; sessionTimeSeconds?: number };
  // D35: a sandbox operator's fixed seeds, so that the session's outcomes are reproducible
  sandboxSeeds?: { serverSeed: string; clientSeed: string };
};

export type LaunchResponse = {
  sessionId: string;
  sessionToken: string;
  launchUrl: string;
  expiresAt: string;
  serverSeedHash: string;
  // D35: launched as a sandbox session
  sandbox: boolean;
};

// D25: what the idempotency store keeps of a launch: the answer without the token (neither
// sessionToken nor the token in launchUrl) and the claims that a replay re-mints it from
export type StoredLaunch = Omit<LaunchResponse, 'sessionToken' | 'sandbox'> & { sandbox?: boolean; sessionClaims: SessionClaims };

// The answer to a launch, from what is stored of it: the first answer and every replay
// (same claims, same key order, same token)
async function launchResponse(tokens: SessionTokens, stored: StoredLaunch): Promise<LaunchResponse> {
  const sessionToken = await tokens.sign(stored.sessionClaims);
  return {
    sessionId: stored.sessionId,
    sessionToken,
    launchUrl: `${stored.launchUrl}?token=${sessionToken}`,
    expiresAt: stored.expiresAt,
    serverSeedHash: stored.serverSeedHash,
    // a launch stored before D35 was never a sandbox one
    sandbox: stored.sandbox ?? false,
  };
}

// A stored 200 of POST /v1/session, as replayed to a retry (D17, D25)
export async function replayLaunch(tokens: SessionTokens, stored: unknown): Promise<unknown> {
  // an entry stored with its token (before D25) holds no claims: replayed as it is
  if (stored === null || typeof stored !== 'object' || !('sessionClaims' in stored)) return stored;
  return launchResponse(tokens, stored as StoredLaunch);
}

// the session and its first seed (D5), in one statement, which also completes the audit
// row of the balance call that allowed it (2.13) and the request's idempotency key with
// the response (D17): a session exists exactly when its answer is stored for retries, and
// the answer waits for one commit instead of three
// its parameters, in the order launchSession gives their values
const C = (() => {
  const p = params();
  const session = {
    id: p.one(), operatorId: p.one(), playerRef: p.one(), gameCode: p.one(), currency: p.one(), lang: p.one(),
    jurisdiction: p.one(), mode: p.one(), returnUrl: p.one(), dailyLoss: p.one(), dailyWager: p.one(),
    sessionTime: p.one(), demoBalance: p.one(), createdAt: p.one(), expiresAt: p.one(),
    profile: p.one(), binds: p.one(), playStartedAt: p.one(), realityCheckDueAt: p.one(),
  };
  const seed = { id: p.one(), encrypted: p.one(), hash: p.one(), clientSeed: p.one() };
  return { session, seed, audit: p.many(AUDIT_PARAM_COUNT), idempotency: p.many(IDEMPOTENCY_PARAM_COUNT), sandbox: p.one() };
})();
const S = C.session;

const CREATE_SESSION = statement(
  'session_create',
  `WITH audit AS (${completeAuditsSql(C.audit)}),
   idempotency AS (${completeIdempotencySql(C.idempotency)}),
   session AS (
     INSERT INTO sessions (id, operator_id, player_ref, game_code, currency, lang, jurisdiction, mode, return_url, daily_loss_micro,
                           daily_wager_micro, session_time_seconds, demo_balance_micro, created_at, expires_at, sandbox,
                           jurisdiction_profile, jurisdiction_binds, play_started_at, reality_check_due_at)
     VALUES (${S.id}, ${S.operatorId}, ${S.playerRef}, ${S.gameCode}, ${S.currency}, ${S.lang}, ${S.jurisdiction},
             ${S.mode}::session_mode, ${S.returnUrl}, ${S.dailyLoss}, ${S.dailyWager}, ${S.sessionTime}, ${S.demoBalance},
             ${S.createdAt}, ${S.expiresAt}, ${C.sandbox}::boolean, ${S.profile}::jsonb, ${S.binds}::boolean, ${S.playStartedAt},
             ${S.realityCheckDueAt})
     RETURNING id
   )
   INSERT INTO seeds (id, session_id, encrypted_server_seed, server_seed_hash, client_seed, created_at)
   SELECT ${C.seed.id}, id, ${C.seed.encrypted}, ${C.seed.hash}, ${C.seed.clientSeed}, ${S.createdAt} FROM session`,
);

// D8: a demo session plays against 1,000 major units kept by the service.
export const DEMO_BALANCE_MICRO = 100_000_000n;

// `claim`: the request's idempotency key, completed with the response by the statement
// that creates the session
export async function launchSession(
  ctx: ServiceContext,
  operator: Operator,
  request: LaunchRequest,
  claim?: IdempotencyClaim,
): Promise<LaunchResponse> {
  // contract 4.1 rule 3. D3: no message below echoes a value of the request (a body may be
  // stored for replay, D17; only field names and the service's own words appear)
  if (request.operatorId !== operator.id) throw operatorMismatch();
  // D39: the catalogue, and the operator's configurations of the games not every operator has
  if (!(await gameAvailable(ctx.db, operator.id, request.gameCode, request.currency))) {
    throw gameNotAvailable('gameCode names no game available to this operator in this currency (GET /v1/games lists them)');
  }
  // D35: every session of a sandbox operator is a sandbox session; only those may fix their
  // seeds, and only where sandbox is enabled (production refuses known seeds unless told)
  const sandbox = sandboxInEffect(operator, ctx.config);
  if (request.sandboxSeeds !== undefined && !sandbox) {
    throw sandboxOnly(
      operator.sandbox
        ? 'sandboxSeeds are refused: sandbox is not enabled on this deployment (SANDBOX_ENABLED)'
        : 'sandboxSeeds are accepted from sandbox operators only',
    );
  }
  const reject = (reason: SessionRejectionReason, message: string): AppError => {
    ctx.metrics.sessionRejections.inc({ reason });
    return sessionRejected(reason, message);
  };
  if (operator.suspended) throw reject('operator_suspended', 'the operator is suspended');
  // An empty permitted list places no restriction on currency.
  if (operator.currencies.length > 0 && !operator.currencies.includes(request.currency)) {
    throw reject('currency_not_permitted', 'the currency is not permitted for this operator');
  }
  if (operator.jurisdictionsBlocked.includes(request.jurisdiction)) {
    throw reject('jurisdiction_blocked', 'the jurisdiction is blocked');
  }
  const limits = {
    dailyLossMicro: request.rgLimits?.dailyLossMicro === undefined ? undefined : parseMicro(request.rgLimits.dailyLossMicro),
    dailyWagerMicro: request.rgLimits?.dailyWagerMicro === undefined ? undefined : parseMicro(request.rgLimits.dailyWagerMicro),
    sessionTimeSeconds: request.rgLimits?.sessionTimeSeconds,
  };
  const loose = looseRgFields(limits, maximaFor(operator.rgMaxima, request.jurisdiction));
  if (loose.length > 0) {
    throw reject('rg_limit_set_too_loose', `rgLimits missing or above the jurisdiction's maximum: ${loose.join(', ')}`);
  }

  const mode = request.mode ?? 'real';
  const balanceAudit = mode === 'real' ? await checkWalletBalance(ctx, operator, request, reject) : undefined;

  const now = ctx.now();
  // D44: the profile the session plays under, fixed now (every read of its rounds names it)
  const jurisdiction = await launchedProfile(
    ctx,
    { operatorId: operator.id, playerRef: request.playerRef, jurisdiction: request.jurisdiction, currency: request.currency, overrides: operator.jurisdictionOverrides },
    now,
  );
  const sessionId = randomUUID();
  const seedId = randomUUID();
  // D35: a fixed seed is sealed and committed to like a generated one, so proofs still verify
  const serverSeed = request.sandboxSeeds?.serverSeed ?? generateServerSeed();
  const hash = serverSeedHash(serverSeed);
  const clientSeed = request.sandboxSeeds?.clientSeed ?? request.clientSeed ?? generateClientSeed();
  const issuedAt = Math.floor(now.getTime() / 1000);
  const expiresAtSeconds = issuedAt + SESSION_LIFETIME_SECONDS;
  const expiresAt = new Date(expiresAtSeconds * 1000);

  const sessionClaims: SessionClaims = {
    sub: request.playerRef,
    operatorId: operator.id,
    sessionId,
    currency: request.currency,
    jurisdiction: request.jurisdiction,
    lang: request.lang,
    mode,
    rgLimits: {
      dailyLossMicro: request.rgLimits?.dailyLossMicro,
      dailyWagerMicro: request.rgLimits?.dailyWagerMicro,
      sessionTimeSeconds: request.rgLimits?.sessionTimeSeconds,
    },
    iat: issuedAt,
    exp: expiresAtSeconds,
  };
  const stored: StoredLaunch = {
    sessionId,
    launchUrl: `${ctx.config.publicUrl}/play/${encodeURIComponent(request.gameCode)}`,
    expiresAt: expiresAt.toISOString(),
    serverSeedHash: hash,
    sandbox,
    sessionClaims,
  };
  const response = await launchResponse(sessionTokens(ctx), stored);

  await ctx.sql
    .query(CREATE_SESSION, [
      sessionId,
      operator.id,
      request.playerRef,
      request.gameCode,
      request.currency,
      request.lang,
      request.jurisdiction,
      mode === 'demo' ? 'DEMO' : 'REAL',
      request.returnUrl ?? null,
      limits.dailyLossMicro ?? null,
      limits.dailyWagerMicro ?? null,
      limits.sessionTimeSeconds ?? null,
      mode === 'demo' ? DEMO_BALANCE_MICRO : null,
      now,
      expiresAt,
      JSON.stringify(jurisdiction.profile),
      jurisdiction.binds,
      jurisdiction.playStartedAt,
      jurisdiction.realityCheckDueAt,
      seedId,
      Buffer.from(sealServerSeed(ctx.config.masterKey, seedId, serverSeed)),
      hash,
      clientSeed,
      ...auditParams(balanceAudit ? [balanceAudit] : []),
      ...completionParams(claim, 200, stored),
      sandbox,
    ])
    // the call's answer is recorded even when the session could not be written
    .catch(async (err: unknown) => {
      if (balanceAudit) await ctx.wallet.audit.complete(balanceAudit);
      throw err;
    });
  if (claim) claim.completed = true;
  ctx.metrics.sessionsCreated.inc({ mode });
  return response;
}

// D7: the wallet is asked for the balance before a real session exists. A success leaves
// its audit row to the statement that creates the session; any other answer completes it here.
async function checkWalletBalance(
  ctx: ServiceContext,
  operator: Operator,
  request: LaunchRequest,
  reject: (reason: SessionRejectionReason, message: string) => AppError,
): Promise<AuditCompletion> {
  const { audit, ...result } = await ctx.wallet
    .call(
      {
        operatorId: operator.id,
        endpoint: 'balance',
        fields: balanceRequest({ operatorId: operator.id, playerRef: request.playerRef, currency: request.currency, gameCode: request.gameCode }),
      },
      { deferAudit: true },
    )
    .catch((err: unknown) => {
      if (!(err instanceof WalletTargetError)) throw err;
      ctx.logger.error({ operatorId: operator.id }, err.message);
      // D25: a wallet URL whose address is not public is not called in production
      const why = err instanceof WalletAddressRefusedError ? 'the operator wallet URL does not resolve to a public address' : 'the operator has no valid wallet credential';
      throw badGateway('wallet_unavailable', why);
    });
  if (result.statusClass === 'success') return audit;
  await ctx.wallet.audit.complete(audit);
  switch (result.statusClass) {
    case 'uncertain':
      // D13: no session is created when the balance call fails uncertainly
      throw badGateway('wallet_unavailable', `the operator wallet did not answer the balance call (${result.status})`);
    default:
      if (result.status === 'RS_ERROR_USER_DISABLED') {
        // D7: self_excluded, unless the wallet's message names another 2.4 reason exactly
        const named = SESSION_REJECTION_REASONS.find((reason) => reason === result.message);
        throw reject(named ?? 'self_excluded', 'the operator wallet refused the player');
      }
      ctx.logger.error({ operatorId: operator.id, status: result.status, requestUuid: result.requestUuid }, 'wallet refused the balance call');
      throw badGateway('wallet_rejected', `the operator wallet answered ${result.status} to the balance call`, {
        walletStatus: result.status,
      });
  }
}
