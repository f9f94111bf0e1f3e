import { QueueEvents } from 'bullmq';
import type { Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import type { ServiceContext } from '../shared/context.js';
import { placeBet, rejectWithRollback, type BetAck } from '../shared/game/bets.js';
import { currentCycle, ensureEngine, roundState } from '../shared/game/engine.js';
import { engineKeyOf, type EngineKey } from '../shared/game/engine-key.js';
import { loadGameConfig, formatMultiplier } from '../shared/operators/game-config.js';
import { QUEUE_NAMES } from '../shared/queues.js';
import { engineRoom, redisAdapter, sessionRoom } from '../shared/realtime/emitter.js';
import { createRedis } from '../shared/redis.js';
import { PRESENCE_REFRESH_MS, markAbsent, markPresent } from '../shared/realtime/presence.js';
import { isDependencyFailure } from '../shared/health/dependencies.js';
import { endSession } from '../shared/session/end.js';
import { verifySessionToken, type SessionClaims } from '../shared/session/token.js';
import { walletTarget } from '../shared/wallet/target.js';
import { MessageThrottle } from './throttle.js';
import { clientBetIdOf, parsePlaceBet, parseRotateSeed } from './messages.js';
import { rotateSeed } from '../shared/fairness/rotation.js';

// The player channel (contract 4.4, D4): Socket.IO on /socket.io with the Redis adapter, so
// that any node reaches any player. The session token (auth.token) is checked at the
// handshake and again on every message; rooms per engine and per session. A disconnect
// never cancels an acknowledged bet (8.6): the bet lives in Postgres and its worker.

type SocketData = { claims: SessionClaims; engine: EngineKey; throttle: MessageThrottle };
type PlayerSocket = Socket & { data: SocketData };
type Ack = (answer: unknown) => void;

export type RunningRealtime = { io: Server; close: () => Promise<void> };

export function attachRealtime(svc: ServiceContext, httpServer: HttpServer): RunningRealtime {
  const redisBus = redisAdapter(svc.config.redisUrl, svc.config.redisKeyPrefix);
  // WebSocket only: a connection is one TCP stream to one node, so the nodes need no sticky
  // sessions behind a load balancer (HTTP long-polling would need them)
  const io = new Server(httpServer, {
    path: '/socket.io',
    // the launch page loads the client from here: no request leaves the service
    serveClient: true,
    transports: ['websocket'],
    adapter: redisBus.adapter,
  });
  const eventsConnection = createRedis(svc.config.redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: null });
  const betEvents = new QueueEvents(QUEUE_NAMES.bet, { connection: eventsConnection, prefix: svc.config.redisKeyPrefix });
  const nowSeconds = () => Math.floor(svc.now().getTime() / 1000);

  // D4: a bad, expired or revoked token is refused with connect_error naming why
  io.use((socket, next) => {
    const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
    const check = typeof token === 'string' ? verifySessionToken(svc.config.jwtSecret, token, nowSeconds()) : null;
    if (!check?.ok) return next(new Error(check?.reason ?? 'invalid_token'));
    sessionRefusal(svc, check.claims.sessionId)
      .then(async (refusal) => {
        if (refusal) return next(new Error(refusal));
        const session = await svc.db.session.findUniqueOrThrow({ where: { id: check.claims.sessionId } });
        socket.data = { claims: check.claims, engine: engineKeyOf(session), throttle: new MessageThrottle() };
        next();
      })
      .catch((err: unknown) => {
        svc.logger.warn({ err }, 'realtime handshake failed');
        next(new Error('service_unavailable'));
      });
  });

  // set on SIGTERM (D12): no new bets are taken while the node closes
  const intake = { open: true };
  io.on('connection', (socket: PlayerSocket) => {
    void onConnection(svc, socket, betEvents, nowSeconds, intake).catch((err: unknown) => {
      svc.logger.error({ err }, 'realtime connection setup failed');
      socket.disconnect(true);
    });
  });

  // presence entries expire unless refreshed (D1: the clock runs while players are here),
  // and the clocks of the players here are kept running: a clock that stopped while
  // presence was unknown (Redis lost it, issue 4) starts again with the next refresh
  const refreshPresence = async () => {
    const engines = new Map<string, { engine: EngineKey; socketIds: string[] }>();
    for (const socket of io.of('/').sockets.values() as IterableIterator<PlayerSocket>) {
      const { engine } = socket.data;
      if (!engine) continue;
      const room = engineRoom(engine.operatorId, engine.gameCode, engine.currency);
      const entry = engines.get(room) ?? engines.set(room, { engine, socketIds: [] }).get(room)!;
      entry.socketIds.push(socket.id);
    }
    for (const { engine, socketIds } of engines.values()) {
      await markPresent(svc.redis, engine, ...socketIds);
      await ensureEngine(svc, engine);
    }
  };
  const refresh = setInterval(() => void refreshPresence().catch(() => undefined), PRESENCE_REFRESH_MS);
  refresh.unref();
  // Redis back after an outage (it may have lost every key): presence at once
  const onRedisReady = () => void refreshPresence().catch(() => undefined);
  svc.redis.on('ready', onRedisReady);

  return {
    io,
    // D12: intake stops, every player here is told to reconnect (the client does so with
    // the same token, to any node, and gets the current state in `connected`), then the
    // sockets close; bets already taken go on in the bet workers
    close: async () => {
      intake.open = false;
      clearInterval(refresh);
      svc.redis.off('ready', onRedisReady);
      io.local.emit('service_restarting', { reconnect: true, ts: new Date().toISOString() });
      await io.close();
      await betEvents.close();
      eventsConnection.disconnect();
      redisBus.close();
    },
  };
}

async function sessionRefusal(svc: ServiceContext, sessionId: string): Promise<'invalid_token' | 'session_terminated' | 'session_expired' | null> {
  const session = await svc.db.session.findUnique({ where: { id: sessionId }, select: { state: true, expiresAt: true } });
  if (!session) return 'invalid_token';
  if (session.state === 'TERMINATED') return 'session_terminated';
  if (session.state === 'EXPIRED' || session.expiresAt <= svc.now()) return 'session_expired';
  return null;
}

async function onConnection(svc: ServiceContext, socket: PlayerSocket, betEvents: QueueEvents, nowSeconds: () => number, intake: { open: boolean }) {
  const { claims, engine } = socket.data;
  const sessionId = claims.sessionId;
  await socket.join([engineRoom(engine.operatorId, engine.gameCode, engine.currency), sessionRoom(sessionId)]);
  // presence first, then the clock: see engine.ts finish()
  await markPresent(svc.redis, engine, socket.id);
  await ensureEngine(svc, engine);

  // the token's own expiry ends the session even if the player sends nothing (contract 3.3)
  const untilExpiry = claims.exp * 1000 - svc.now().getTime();
  const expiry = setTimeout(() => void endSession(svc, sessionId, { kind: 'expired' }), Math.max(0, untilExpiry));
  socket.on('disconnect', () => {
    clearTimeout(expiry);
    void markAbsent(svc.redis, engine, socket.id).catch(() => undefined);
  });

  // D4: every message re-checks the token and the session; a refusal ends the socket
  const guard = async (event: string, payload: unknown, ack: unknown): Promise<Ack | null> => {
    const reply: Ack = typeof ack === 'function' ? (ack as Ack) : () => undefined;
    if (!socket.data.throttle.take()) {
      reply({ ok: false, reason: 'rate_limited' });
      return null;
    }
    const refusal = claims.exp <= nowSeconds() ? 'session_expired' : await sessionRefusal(svc, sessionId);
    if (refusal) {
      reply({ ok: false, reason: refusal });
      // contract 6.3: a place_bet refused here is a bet rejection like any other (D4)
      if (event === 'place_bet') emitBetRejected(socket, refusal, clientBetIdOf(payload));
      if (refusal === 'session_expired') await endSession(svc, sessionId, { kind: 'expired' });
      socket.emit('session_ended', { reason: refusal === 'session_expired' ? 'expired' : 'terminated', ts: new Date().toISOString() });
      socket.disconnect(true);
      return null;
    }
    return reply;
  };

  // a handler that fails answers service_unavailable rather than leaving the ack hanging
  const handle = (event: string, run: (payload: unknown, reply: Ack) => Promise<void>) =>
    socket.on(event, async (...args: unknown[]) => {
      // the ack callback comes last: a message sent without a payload carries only the callback
      const ack = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
      const payload = args[0];
      const unavailable = () => {
        if (typeof ack === 'function') (ack as Ack)({ ok: false, reason: 'service_unavailable' });
        if (event === 'place_bet') emitBetRejected(socket, 'service_unavailable', clientBetIdOf(payload));
      };
      // issue 4: while Postgres or Redis is away, or the node is closing, intake pauses
      // with a reason the player can act on (retry shortly); it resumes by itself when the
      // dependency probe answers again
      if (!intake.open || !svc.dependencies.available()) return unavailable();
      const reply = await guard(event, payload, ack).catch((err: unknown) => {
        svc.logger.warn({ err: (err as Error).message, event, sessionId }, 'player message could not be checked');
        unavailable();
        return null;
      });
      if (!reply) return;
      await run(payload, reply).catch((err: unknown) => {
        if (isDependencyFailure(err)) svc.logger.warn({ err: (err as Error).message, event, sessionId }, 'player message failed: dependency unavailable');
        else svc.logger.error({ err, event, sessionId }, 'player message failed');
        unavailable();
      });
    });

  handle('place_bet', async (payload, reply) => reply(await handlePlaceBet(svc, socket, betEvents, payload)));

  handle('rotate_seed', async (payload, reply) => {
    const request = parseRotateSeed(payload);
    if (!request) return reply({ ok: false, reason: 'invalid_payload' });
    const rotated = await rotateSeed(svc, sessionId, request.clientSeed);
    reply(rotated);
    if (rotated.ok) {
      svc.emitter.toSession(sessionId, 'seed_rotated', { serverSeedHash: rotated.serverSeedHash, clientSeed: rotated.clientSeed, nonce: 0 });
    }
  });

  socket.emit('connected', { ...(await connectedPayload(svc, sessionId, engine)), ts: new Date().toISOString() });
}

// D4 bet_rejected, told to this socket (the worker's verdicts go to the session room)
function emitBetRejected(socket: PlayerSocket, reason: string, clientBetId: string | undefined): void {
  socket.emit('bet_rejected', { reason, ...(clientBetId ? { clientBetId } : {}), ts: new Date().toISOString() });
}

async function handlePlaceBet(svc: ServiceContext, socket: PlayerSocket, betEvents: QueueEvents, payload: unknown): Promise<BetAck> {
  const sessionId = socket.data.claims.sessionId;
  const parsed = parsePlaceBet(payload);
  const rejected = (reason: Exclude<BetAck, { ok: true }>['reason'], clientBetId?: string): BetAck => {
    emitBetRejected(socket, reason, clientBetId);
    return { ok: false, reason };
  };
  if (!parsed.ok) return rejected(parsed.reason, parsed.clientBetId);
  const placed = await placeBet(svc, sessionId, parsed.request);
  if (!placed.ok) return rejected(placed.reason, parsed.request.clientBetId);
  // the debit runs in the bet worker pool, which also tells the player (bet_placed or
  // bet_rejected) through Redis; the acknowledgement waits for its verdict
  let job;
  try {
    job = await svc.queues.bet.add('bet', { betId: placed.betId }, { jobId: placed.betId });
  } catch (err) {
    // the queue may have taken it all the same: resolved as uncertain, so a debit that did
    // happen is rolled back
    svc.logger.warn({ betId: placed.betId, err: (err as Error).message }, 'bet could not be queued');
    const bet = await svc.db.bet.findUniqueOrThrow({ where: { id: placed.betId } });
    return rejectWithRollback(svc, bet, 'service_unavailable', 'uncertain_bet');
  }
  try {
    return (await job.waitUntilFinished(betEvents, svc.config.walletCallTimeoutMs + 10_000)) as BetAck;
  } catch (err) {
    svc.logger.warn({ betId: placed.betId, err: (err as Error).message }, 'bet verdict not received in time');
    return { ok: false, reason: 'wallet_timeout' };
  }
}

// D4 `connected`: the session's seed commitment, balance, config and the engine's state.
async function connectedPayload(svc: ServiceContext, sessionId: string, engine: EngineKey) {
  const session = await svc.db.session.findUniqueOrThrow({
    where: { id: sessionId },
    include: { seeds: { where: { current: true }, take: 1 } },
  });
  const seed = session.seeds[0];
  const cycle = await currentCycle(svc, engine);
  const config = cycle ?? (await loadGameConfig(svc.db, engine.operatorId, engine.gameCode, engine.currency));
  return {
    sessionId,
    serverSeedHash: seed?.serverSeedHash ?? null,
    clientSeed: seed?.clientSeed ?? null,
    nonce: seed?.nextNonce ?? 0,
    balanceMicro: session.mode === 'DEMO' ? (session.demoBalanceMicro?.toString() ?? '0') : await walletBalance(svc, session),
    currency: session.currency,
    config: {
      minBetMicro: config.minBetMicro.toString(),
      maxBetMicro: config.maxBetMicro.toString(),
      payoutMultiplier: formatMultiplier(config.payoutMultiplierScaled),
      commissionMicro: config.commissionMicro.toString(),
    },
    roundState: cycle ? roundState(cycle) : null,
    mode: session.mode === 'DEMO' ? 'demo' : 'real',
    lang: session.lang,
    returnUrl: session.returnUrl,
  };
}

// contract 4.2: /wallet/balance is called at session start and optionally on reconnect;
// a balance that cannot be read is shown as unknown (null), never guessed.
async function walletBalance(svc: ServiceContext, session: { id: string; operatorId: string; playerRef: string; currency: string; gameCode: string }) {
  try {
    const result = await svc.wallet.call({
      target: await walletTarget(svc, session.operatorId),
      endpoint: 'balance',
      sessionId: session.id,
      fields: { operatorId: session.operatorId, playerRef: session.playerRef, currency: session.currency, gameCode: session.gameCode },
    });
    return result.statusClass === 'success' && result.balanceMicro !== undefined ? result.balanceMicro.toString() : null;
  } catch (err) {
    svc.logger.warn({ err, sessionId: session.id }, 'balance for connected could not be read');
    return null;
  }
}
