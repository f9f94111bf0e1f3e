import type { ServiceContext } from '../context.js';
import { statement } from '../../platform/db/sql.js';
import type { EngineKey } from '../../domain/engine-key.js';

// A session's standing as the player channel checks it (D4): at the handshake, and again on
// every message but a bet and a cash-out (their own statements read the session). A session that is gone,
// terminated or past its expiry is refused with the reason connect_error and the acks name.

type SessionRow = { state: string; expires_at: Date; operator_id: string; game_code: string; currency: string };
const SESSION = statement('realtime_session', 'SELECT state, expires_at, operator_id, game_code, currency FROM sessions WHERE id = $1');

const REFUSALS = ['invalid_token', 'session_terminated', 'session_expired'] as const;
export type Refusal = (typeof REFUSALS)[number];
export const isRefusal = (reason: string): reason is Refusal => (REFUSALS as readonly string[]).includes(reason);

export type Standing = { ok: true; engine: EngineKey } | { ok: false; refusal: Refusal };

const sessionOf = async (svc: ServiceContext, sessionId: string): Promise<SessionRow | undefined> =>
  (await svc.sql.query<SessionRow>(SESSION, [sessionId]))[0];

// the refusal of a session as read (undefined: no such session), or null when it may play; a
// message whose own statement reads the session (a cash-out's facts) judges it here too
export function standingRefusal(svc: ServiceContext, session: Pick<SessionRow, 'state' | 'expires_at'> | undefined): Refusal | null {
  if (!session) return 'invalid_token';
  if (session.state === 'TERMINATED') return 'session_terminated';
  if (session.state === 'EXPIRED' || session.expires_at <= svc.now()) return 'session_expired';
  return null;
}

// the session's standing, with the engine it plays on (its rooms, its clock) when it may play
export async function sessionStanding(svc: ServiceContext, sessionId: string): Promise<Standing> {
  const session = await sessionOf(svc, sessionId);
  const refusal = standingRefusal(svc, session);
  if (refusal) return { ok: false, refusal };
  return { ok: true, engine: { operatorId: session!.operator_id, gameCode: session!.game_code, currency: session!.currency } };
}
