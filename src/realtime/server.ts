import type { Server as HttpServer } from 'node:http';
import type { Socket } from 'socket.io';
import type { ServiceContext } from '../shared/game/context.js';
import { betStep } from '../shared/platform/bet-steps.js';
import { epochMs } from '../shared/platform/clock.js';
import type { BetAck, LocalDebits } from '../shared/game/bets/debit.js';
import { ensureEngine } from '../shared/game/rounds/clock.js';
import type { EngineKey } from '../shared/domain/engine-key.js';
import type {
  BetRejected,
  ChannelRefused,
  ClientEvent,
  ClientMessages,
  ClientToServerEvents,
  ServerToClientEvents,
  SessionEnded,
  Stamped,
} from '../shared/domain/player-channel.js';
import { engineRoom, sessionRoom, type InterNodeEvents } from '../shared/game/players/emitter.js';
import { connectedMessage } from '../shared/game/players/connected.js';
import { tellFreeBets } from '../shared/game/freebets/usable.js';
import { PRESENCE_REFRESH_MS, markAbsent, markPresent } from '../shared/game/players/presence.js';
import { admitSocket, forgetSocket, refreshSockets } from '../shared/game/players/session-sockets.js';
import { isRefusal, sessionStanding, type Refusal } from '../shared/game/sessions/standing.js';
import { acknowledgeRealityCheck, playerPosition } from '../shared/game/sessions/jurisdiction.js';
import { isDependencyFailure } from '../shared/platform/dependencies.js';
import { endSession, endedNotice } from '../shared/game/sessions/end.js';
import { sessionTokens, type SessionClaims } from '../shared/game/sessions/token.js';
import { BetIntake, verdictWaitMs, type Payer } from '../shared/game/bets/place.js';
import { MessageThrottle } from './throttle.js';
import { coalesceWrites } from './write-coalescing.js';
import { clientBetIdOf, isCashOutRequest, isEmptyRequest, parsePlaceBet, parsePlay, parseRotateSeed } from './messages.js';
import { resolvePlay } from '../shared/game/plays/resolve.js';
import { cashOut } from '../shared/game/rounds/flight.js';
import { recentRounds } from '../shared/game/reports/recall.js';
import { rotateSeed } from '../shared/game/fairness/rotation.js';

// The player channel (contract 4.4, D4): Socket.IO on /socket.io with the Redis adapter, so
// that any node reaches any player (the process's one server, emitter.ts). The session
// token (auth.token) is checked at the handshake and again on every message, the session
// itself on every message too (a bet's own placement reads it); rooms per engine and per
// session. A disconnect never cancels an acknowledged bet (8.6): the bet lives in Postgres
// and its worker. Every message in and out is one of the player channel's map
// (src/shared/domain/player-channel.ts); the session reads and the wallet's balance are the game
// layer's (game/sessions/standing.ts, game/players/connected.ts): here sockets meet them.

// pending: the socket's messages being handled (their acks not yet sent); seat: its entry
// among the session's live sockets (session-sockets.ts)
type SocketData = { claims: SessionClaims; engine: EngineKey; throttle: MessageThrottle; pending: Set<Promise<void>>; seat?: string };
type PlayerSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterNodeEvents, SocketData>;
// the acknowledgement of a player message, as the map types it
type Reply<E extends ClientEvent> = (answer: ClientMessages[E]['ack']) => void;
// every ack of the map answers a refusal before handling the same way (D28)
type Refuse = (answer: ChannelRefused) => void;

export type RunningRealtime = { close: () => Promise<void> };

// localDebits: given when this process also runs the bet role; its players' bets are then
// debited here, not through the bet queue (debit.ts)
export function attachRealtime(svc: ServiceContext, httpServer: HttpServer, localDebits?: LocalDebits): RunningRealtime {
  const io = svc.emitter.io;
  io.attach(httpServer);
  coalesceWrites(io);
  const intake = new BetIntake(svc, localDebits);
  const nowSeconds = () => Math.floor(svc.now().getTime() / 1000);
  // session_ended for the sockets here in a room (a session's, or one socket's own)
  svc.emitter.onEnd((room, payload) => {
    for (const id of io.of('/').adapter.rooms.get(room) ?? []) {
      const socket = io.of('/').sockets.get(id) as PlayerSocket | undefined;
      if (socket) endSocket(svc, socket, payload);
    }
  });

  // D4: a bad, expired or revoked token is refused with connect_error naming why
  // (D34: an RS256 or EdDSA token's key may have to be read first)
  const tokens = sessionTokens(svc);
  io.use((socket, next) => {
    const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string') return next(new Error('invalid_token'));
    tokens
      .verify(token, nowSeconds())
      .then(async (check) => {
        if (!check.ok) return next(new Error(check.reason));
        const standing = await sessionStanding(svc, check.claims.sessionId);
        if (!standing.ok) return next(new Error(standing.refusal));
        socket.data = { claims: check.claims, engine: standing.engine, throttle: new MessageThrottle(), pending: new Set() };
        next();
      })
      .catch((err: unknown) => {
        svc.logger.warn({ err }, 'realtime handshake failed');
        next(new Error('service_unavailable'));
      });
  });

  // set on SIGTERM (D12): no new bets are taken while the node closes
  const accepting = { open: true };
  io.on('connection', (socket: PlayerSocket) => {
    void onConnection(svc, socket, intake, nowSeconds, accepting).catch((err: unknown) => {
      svc.logger.error({ err }, 'realtime connection setup failed');
      socket.disconnect(true);
    });
  });

  // presence entries expire unless refreshed (D1: the clock runs while players are here),
  // and the clocks of the players here are kept running: a clock that stopped while
  // presence was unknown (Redis lost it) starts again with the next refresh
  const refreshPresence = async () => {
    const engines = new Map<string, { engine: EngineKey; socketIds: string[] }>();
    const seats: { sessionId: string; entry: string }[] = [];
    for (const socket of io.of('/').sockets.values() as IterableIterator<PlayerSocket>) {
      const { engine, seat, claims } = socket.data;
      if (seat) seats.push({ sessionId: claims.sessionId, entry: seat });
      if (!engine) continue;
      const room = engineRoom(engine.operatorId, engine.gameCode, engine.currency);
      const entry = engines.get(room) ?? engines.set(room, { engine, socketIds: [] }).get(room)!;
      entry.socketIds.push(socket.id);
    }
    await refreshSockets(svc.redis, seats);
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
    // D12: intake stops, every player here is told to reconnect (the client does so with
    // the same token, to any node, and gets the current state in `connected`), then the
    // sockets close; bets already taken go on in the bet workers (or this process's own
    // debits, which the roles close after this). The process's Socket.IO
    // server stays, for the other roles' messages, until the service context closes.
    close: async () => {
      accepting.open = false;
      svc.emitter.onEnd(undefined);
      clearInterval(refresh);
      svc.redis.off('ready', onRedisReady);
      io.local.emit('service_restarting', { reconnect: true, ts: new Date().toISOString() });
      io.local.disconnectSockets(true);
      io.engine.close();
      intake.close();
    },
  };
}

async function onConnection(svc: ServiceContext, socket: PlayerSocket, intake: BetIntake, nowSeconds: () => number, accepting: { open: boolean }) {
  const { claims, engine } = socket.data;
  const sessionId = claims.sessionId;
  // whom a real-money bet's debit names (contract 2.6), so that it can be prepared with the bet row
  const payer: Payer | undefined =
    claims.mode === 'real' ? { operatorId: engine.operatorId, playerRef: claims.sub, currency: engine.currency, gameCode: engine.gameCode } : undefined;
  socket.join([engineRoom(engine.operatorId, engine.gameCode, engine.currency), sessionRoom(sessionId)]);
  // presence first, then the clock: see clock.ts finish()
  await markPresent(svc.redis, engine, socket.id);

  // the token's own expiry ends the session even if the player sends nothing (contract 3.3)
  const untilExpiry = claims.exp * 1000 - svc.now().getTime();
  const expiry = setTimeout(() => void endSession(svc, sessionId, { kind: 'expired' }), Math.max(0, untilExpiry));
  socket.on('disconnect', () => {
    clearTimeout(expiry);
    void markAbsent(svc.redis, engine, socket.id).catch(() => undefined);
    if (socket.data.seat) void forgetSocket(svc.redis, sessionId, socket.data.seat).catch(() => undefined);
  });

  // D24: at most SOCKETS_PER_SESSION live sockets per session on the whole deployment; this
  // one replaces the oldest beyond that, wherever they are. The replaced socket is told
  // session_ended "replaced" with the current seed's hash only: the session goes on, so its
  // seed is not retired and never revealed (D2).
  const admitted = await admitSocket(svc.redis, sessionId, socket.id);
  socket.data.seat = admitted.entry;
  if (!socket.connected) await forgetSocket(svc.redis, sessionId, admitted.entry);
  if (admitted.replaced.length > 0) {
    const notice = await endedNotice(svc, sessionId, 'replaced');
    for (const id of admitted.replaced) svc.emitter.endSocket(id, notice);
  }

  // a session found ended by a message: the player is told and the socket closes (by
  // endSession, on every node, when this message is what ended it), after the message's ack
  const endHere = async (refusal: Refusal) => {
    if (refusal === 'session_expired' && (await endSession(svc, sessionId, { kind: 'expired' }))) return;
    const notice = await endedNotice(svc, sessionId, refusal === 'session_expired' ? 'expired' : 'terminated');
    endSocket(svc, socket, { ...notice, ts: new Date().toISOString() });
  };

  // D4: every message re-checks the token and the session (a bet's placement and a
  // cash-out's facts read the session themselves, so it is not read twice); a refusal ends
  // the socket
  const guard = async <E extends ClientEvent>(event: E, payload: unknown, ack: Reply<E> | undefined): Promise<Reply<E> | null> => {
    const reply: Reply<E> = ack ?? (() => undefined);
    const refuse = reply as Refuse;
    if (!socket.data.throttle.take()) {
      refuse({ ok: false, reason: 'rate_limited' });
      // D28: rate_limited joins the 8.2 codes, on bet_rejected too
      if (event === 'place_bet' || event === 'play') emitBetRejected(socket, 'rate_limited', clientBetIdOf(payload));
      return null;
    }
    const refusal =
      claims.exp <= nowSeconds() ? 'session_expired' : event === 'place_bet' || event === 'play' || event === 'cash_out' ? null : refusalOf(await sessionStanding(svc, sessionId));
    if (refusal) {
      refuse({ ok: false, reason: refusal });
      // contract 6.3: a place_bet refused here is a bet rejection like any other (D4)
      if (event === 'place_bet' || event === 'play') emitBetRejected(socket, refusal, clientBetIdOf(payload));
      await endHere(refusal);
      return null;
    }
    return reply;
  };

  // a handler that fails answers service_unavailable rather than leaving the ack hanging;
  // while it runs it is pending (a session_ended waits for its ack, D28). The message's
  // arguments come off the wire: whatever the map says the page sends, the handler takes
  // them as unknown and validates them (messages.ts); its ack is typed by the map.
  // `arrivedAt`: the node's stamp of the message on arrival, before anything else (D40: a
  // cash-out is judged at it)
  const handle = <E extends ClientEvent>(event: E, run: (payload: unknown, reply: Reply<E>, arrivedAt: Date) => Promise<void>) =>
    socket.on(event as ClientEvent, ((...args: unknown[]) => {
      const arrivedAt = svc.now();
      const work = serve(event, run, args, arrivedAt);
      socket.data.pending.add(work);
      void work.finally(() => socket.data.pending.delete(work));
    }) as ClientToServerEvents[ClientEvent]);
  const serve = async <E extends ClientEvent>(
    event: E,
    run: (payload: unknown, reply: Reply<E>, arrivedAt: Date) => Promise<void>,
    args: unknown[],
    arrivedAt: Date,
  ) => {
    // the ack callback comes last: a message sent without a payload carries only the callback
    const ack = (typeof args[args.length - 1] === 'function' ? args.pop() : undefined) as Reply<E> | undefined;
    const payload = args[0];
    const unavailable = () => {
      if (typeof ack === 'function') (ack as Refuse)({ ok: false, reason: 'service_unavailable' });
      if (event === 'place_bet' || event === 'play') emitBetRejected(socket, 'service_unavailable', clientBetIdOf(payload));
    };
    // D28: while Postgres or Redis is away, or the node is closing, intake pauses
    // with a reason the player can act on (retry shortly); it resumes by itself when the
    // dependency probe answers again
    if (!accepting.open || !svc.dependencies.available()) return unavailable();
    const reply = await guard(event, payload, ack).catch((err: unknown) => {
      svc.logger.warn({ err: (err as Error).message, event, sessionId }, 'player message could not be checked');
      unavailable();
      return null;
    });
    if (!reply) return;
    await run(payload, reply, arrivedAt).catch((err: unknown) => {
      if (isDependencyFailure(err)) svc.logger.warn({ err: (err as Error).message, event, sessionId }, 'player message failed: dependency unavailable');
      else svc.logger.error({ err, event, sessionId }, 'player message failed');
      unavailable();
    });
  };

  handle('place_bet', async (payload, reply) => {
    const receivedAt = epochMs();
    const parsed = parsePlaceBet(payload, engine.gameCode);
    if (!parsed.ok) return reply(rejectedHere(socket, parsed.reason, parsed.clientBetId));
    // D37: past the node's bound the bet is refused before it costs a statement
    if (svc.overload.busy()) {
      svc.overload.refuse('bet', svc);
      return reply(rejectedHere(socket, 'service_busy', parsed.request.clientBetId));
    }
    const { placed, verdict } = await intake.place({ ...parsed.request, sessionId, ...(payer ? { payer } : {}) });
    // D42: the session's grants changed: a round spent is told here; a round given back by
    // the bet's rejection is told by the rejection itself once it committed (debit.ts
    // rejectBets), which may come after a timed-out verdict
    const free = parsed.request.freeBetGrantId !== undefined;
    if (placed.ok) {
      const { betId } = placed.ticket;
      betStep(betId, 'received', receivedAt);
      const ack = await verdict!;
      reply(ack);
      betStep(betId, 'acked');
      if (free && ack.ok) await tellFreeBets(svc, sessionId);
      return;
    }
    reply(rejectedHere(socket, placed.reason, parsed.request.clientBetId));
    if (free) await tellFreeBets(svc, sessionId);
    if (placed.reason === 'session_expired' || placed.reason === 'session_terminated') await endHere(placed.reason);
  });

  // D41: an instant play: placed and debited as a bet is (its ack is the debit's verdict), then
  // derived at once and settled; round_result follows the ack. A play the process cannot finish
  // (it stops, or the derivation fails on a dependency) is finished by the leader's sweep
  // (plays/sweep.ts).
  handle('play', async (payload, reply) => {
    const parsed = parsePlay(payload, engine.gameCode);
    if (!parsed.ok) return reply(rejectedHere(socket, parsed.reason, parsed.clientBetId));
    if (svc.overload.busy()) {
      svc.overload.refuse('bet', svc);
      return reply(rejectedHere(socket, 'service_busy', parsed.request.clientBetId));
    }
    const { placed, verdict } = await intake.play({ ...parsed.request, sessionId, engine, ...(payer ? { payer } : {}) });
    // D42: a free play's grant changed, as place_bet's
    const free = parsed.request.freeBetGrantId !== undefined;
    if (!placed.ok) {
      reply(rejectedHere(socket, placed.reason, parsed.request.clientBetId));
      if (free) await tellFreeBets(svc, sessionId);
      if (placed.reason === 'session_expired' || placed.reason === 'session_terminated') await endHere(placed.reason);
      return;
    }
    const ack = await verdict!;
    reply(ack);
    if (!ack.ok) return;
    if (free) await tellFreeBets(svc, sessionId);
    // the ack is sent: a play that cannot be finished here is the sweep's, never a rejection
    await resolvePlay(svc, placed.ticket).catch((err: unknown) =>
      svc.logger.warn({ err: (err as Error).message, betId: placed.ticket.betId }, 'play not finished here; the recovery sweep finishes it'),
    );
  });

  // D40: a cash-out of the session's crash bet, judged at the arrival stamp; the ack is the
  // decision, committed before it is sent
  handle('cash_out', async (payload, reply, arrivedAt) => {
    if (!isCashOutRequest(payload)) return reply({ ok: false, reason: 'invalid_payload' });
    const ack = await cashOut(svc, sessionId, arrivedAt, engine);
    reply(ack);
    if (!ack.ok && isRefusal(ack.reason)) await endHere(ack.reason);
  });

  handle('rotate_seed', async (payload, reply) => {
    const request = parseRotateSeed(payload);
    if (!request) return reply({ ok: false, reason: 'invalid_payload' });
    const rotated = await rotateSeed(svc, sessionId, request.clientSeed);
    reply(rotated);
    if (rotated.ok) {
      svc.emitter.toSession(sessionId, 'seed_rotated', { serverSeedHash: rotated.serverSeedHash, clientSeed: rotated.clientSeed, nonce: 0 });
    }
  });

  // D33: the session's last rounds with the balances the wallet answered, for the page's
  // history: asked for when the page connects (a reload shows them again) and when one of
  // its rounds moves. A read, never on the path of a bet.
  handle('recent_rounds', async (payload, reply) => {
    if (!isEmptyRequest(payload)) return reply({ ok: false, reason: 'invalid_payload' });
    reply({ ok: true, rounds: await recentRounds(svc, sessionId) });
  });

  // D44: where the player stands under the session's jurisdiction profile, asked for by the page
  // after each of its rounds (a read, never on the path of a bet)
  handle('session_position', async (payload, reply) => {
    if (!isEmptyRequest(payload)) return reply({ ok: false, reason: 'invalid_payload' });
    const position = await playerPosition(svc, sessionId);
    reply(position ? { ok: true, ...position } : { ok: false, reason: 'session_not_found' });
  });

  // D44: the player acknowledged a reality check; bets are taken again until the next one
  handle('reality_check_ack', async (payload, reply) => {
    if (!isEmptyRequest(payload)) return reply({ ok: false, reason: 'invalid_payload' });
    const position = await acknowledgeRealityCheck(svc, sessionId);
    reply(position ? { ok: true, ...position } : { ok: false, reason: 'session_not_found' });
  });

  socket.emit('connected', { ...(await connectedMessage(svc, sessionId, engine)), ts: new Date().toISOString() });
}

// session_ended, then the disconnect (D4), once the socket's pending acks are sent (D28: a
// bet's ack comes before the session_ended its wallet answer caused). Each pending message
// is answered within the bet verdict's own time limit; past that the socket ends anyway.
function endSocket(svc: ServiceContext, socket: PlayerSocket, payload: Stamped<SessionEnded>): void {
  const end = () => {
    if (!socket.connected) return;
    socket.emit('session_ended', payload);
    socket.disconnect(true);
  };
  const pending = [...(socket.data.pending ?? [])];
  if (pending.length === 0) return end();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, verdictWaitMs(svc.config));
    timer.unref();
  });
  void Promise.race([Promise.allSettled(pending), deadline]).then(() => {
    clearTimeout(timer);
    end();
  });
}

// D4 bet_rejected, told to this socket (the worker's verdicts go to the session room)
function emitBetRejected(socket: PlayerSocket, reason: BetRejected['reason'], clientBetId: string | undefined): void {
  socket.emit('bet_rejected', { reason, ...(clientBetId ? { clientBetId } : {}), ts: new Date().toISOString() });
}

const refusalOf = (standing: Awaited<ReturnType<typeof sessionStanding>>): Refusal | null => (standing.ok ? null : standing.refusal);

function rejectedHere(socket: PlayerSocket, reason: Exclude<BetAck, { ok: true }>['reason'], clientBetId?: string): BetAck {
  emitBetRejected(socket, reason, clientBetId);
  return { ok: false, reason };
}
