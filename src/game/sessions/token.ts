import { createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

// Session token (contract 5.6): HS256 JWT under JWT_SECRET, which is separate from every
// operator secret. Lifetime at most 60 minutes.

export const SESSION_LIFETIME_SECONDS = 60 * 60;

export type SessionClaims = {
  sub: string; // playerRef
  operatorId: string;
  sessionId: string;
  currency: string;
  jurisdiction: string;
  lang: string;
  mode: 'real' | 'demo';
  rgLimits: { dailyLossMicro?: string; dailyWagerMicro?: string; sessionTimeSeconds?: number };
  iat: number;
  exp: number;
};

// Given a string, jsonwebtoken first tries to parse it as a PEM key on every call; the
// key object is made once per secret instead (a hot path: every launch and handshake).
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

export function signSessionToken(secret: string, claims: SessionClaims): string {
  // iat and exp come from the claims (the session's own clock), not from jsonwebtoken's
  return jwt.sign(canonical(claims), keyOf(secret), { algorithm: 'HS256' });
}

// The payload in one key order whatever order the claims come in: HS256 is deterministic,
// so claims read back from storage (jsonb reorders keys) re-mint, byte for byte, the token
// first issued (D25: the idempotency store keeps the claims, never the token).
function canonical(claims: SessionClaims): SessionClaims {
  const { sub, operatorId, sessionId, currency, jurisdiction, lang, mode, rgLimits, iat, exp } = claims;
  const { dailyLossMicro, dailyWagerMicro, sessionTimeSeconds } = rgLimits;
  return { sub, operatorId, sessionId, currency, jurisdiction, lang, mode, rgLimits: { dailyLossMicro, dailyWagerMicro, sessionTimeSeconds }, iat, exp };
}

export type TokenCheck =
  | { ok: true; claims: SessionClaims }
  | { ok: false; reason: 'session_expired' | 'invalid_token' };

// D4 names the refusals: session_expired | invalid_token (termination is checked against
// the database by the caller).
export function verifySessionToken(secret: string, token: string, nowSeconds = Math.floor(Date.now() / 1000)): TokenCheck {
  try {
    const claims = jwt.verify(token, keyOf(secret), { algorithms: ['HS256'], clockTimestamp: nowSeconds }) as SessionClaims;
    if (typeof claims.sessionId !== 'string' || typeof claims.operatorId !== 'string') {
      return { ok: false, reason: 'invalid_token' };
    }
    return { ok: true, claims };
  } catch (err) {
    return { ok: false, reason: err instanceof jwt.TokenExpiredError ? 'session_expired' : 'invalid_token' };
  }
}
