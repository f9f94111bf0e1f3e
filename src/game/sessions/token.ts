import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import jwt from 'jsonwebtoken';
import type { Config, SessionTokenAlg } from '../../platform/config.js';
import type { Queryable } from '../../platform/db/sql.js';
import { TOKEN_KEY, currentSigningKey, jwkOf, publishedKey, type SigningAlgorithm } from '../../platform/signing-keys.js';

// Session token (contract 5.6): HS256 JWT under JWT_SECRET, which is separate from every
// operator secret, unless SESSION_TOKEN_ALG is RS256 or EdDSA (D34, below). Lifetime at most
// 60 minutes.

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

// D34: with SESSION_TOKEN_ALG=RS256 or EdDSA, tokens are signed (jose) with the service's own
// token key (signing_keys, purpose 'token', sealed under MASTER_KEY) and carry its kid in
// their header; the public keys are at GET /.well-known/jwks.json. HS256 stays the default
// and is signed as above. A token is verified by what its header names, with keys the
// service holds only: HS256 with JWT_SECRET, RS256 and EdDSA with the token key of its kid,
// which must be of that algorithm. So changing SESSION_TOKEN_ALG, or rotating the key
// (`rgs token-key rotate`), ends no live session: a retired key verifies for one session
// lifetime after its retirement, by when every token it signed has expired.
//
// RS256 and EdDSA are deterministic, so a launch replayed under the same key re-mints the
// same token (D25); after a rotation the replay is signed by the new key: another token
// with the same claims, just as valid.
type VerificationKey = { key: KeyObject; algorithm: SigningAlgorithm; retiredAt: Date | null; readAt: number };

// a key's retirement is noticed within this; its public key never changes
const KEY_REREAD_MS = 60_000;
// a kid the database does not know is not asked for again this soon (a forged header must
// not cost a query per handshake); real kids are random, so none is known only later
const UNKNOWN_KID_MS = 10_000;
const KIDS_KEPT = 1_000;

export class SessionTokens {
  private readonly keys = new Map<string, VerificationKey>();
  private readonly unknown = new Map<string, number>();

  constructor(
    private readonly config: { sessionTokenAlg: SessionTokenAlg; jwtSecret: string; masterKey: Buffer },
    private readonly sql: Queryable,
  ) {}

  async sign(claims: SessionClaims): Promise<string> {
    const alg = this.config.sessionTokenAlg;
    if (alg === 'HS256') return signSessionToken(this.config.jwtSecret, claims);
    // the current key is read at every launch, so a rotation on any node applies to the next one
    const key = await currentSigningKey(this.sql, this.config.masterKey, TOKEN_KEY, alg satisfies SigningAlgorithm);
    return new SignJWT(canonical(claims)).setProtectedHeader({ alg: key.algorithm, typ: 'JWT', kid: key.kid }).sign(key.privateKey);
  }

  async verify(token: string, nowSeconds: number): Promise<TokenCheck> {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return { ok: false, reason: 'invalid_token' };
    }
    if (header.alg === 'HS256') return verifySessionToken(this.config.jwtSecret, token, nowSeconds);
    if ((header.alg !== 'RS256' && header.alg !== 'EdDSA') || typeof header.kid !== 'string') return { ok: false, reason: 'invalid_token' };
    const key = await this.keyOf(header.kid, nowSeconds * 1000);
    if (!key || key.algorithm !== header.alg) return { ok: false, reason: 'invalid_token' };
    if (key.retiredAt && nowSeconds * 1000 > key.retiredAt.getTime() + SESSION_LIFETIME_SECONDS * 1000) return { ok: false, reason: 'invalid_token' };
    try {
      const { payload } = await jwtVerify(token, key.key, { algorithms: [key.algorithm], currentDate: new Date(nowSeconds * 1000) });
      const claims = payload as unknown as SessionClaims;
      if (typeof claims.sessionId !== 'string' || typeof claims.operatorId !== 'string') return { ok: false, reason: 'invalid_token' };
      return { ok: true, claims };
    } catch (err) {
      return { ok: false, reason: err instanceof joseErrors.JWTExpired ? 'session_expired' : 'invalid_token' };
    }
  }

  private async keyOf(kid: string, nowMs: number): Promise<VerificationKey | undefined> {
    const known = this.keys.get(kid);
    if (known && nowMs - known.readAt < KEY_REREAD_MS) return known;
    if ((this.unknown.get(kid) ?? 0) > nowMs) return undefined;
    const row = await publishedKey(this.sql, TOKEN_KEY, kid);
    if (this.keys.size >= KIDS_KEPT) this.keys.clear();
    if (this.unknown.size >= KIDS_KEPT) this.unknown.clear();
    if (!row) {
      this.unknown.set(kid, nowMs + UNKNOWN_KID_MS);
      return undefined;
    }
    const { kid: _kid, use: _use, alg: _alg, ...jwk } = jwkOf(row);
    const key = { key: known?.key ?? createPublicKey({ key: jwk, format: 'jwk' }), algorithm: row.algorithm, retiredAt: row.retiredAt, readAt: nowMs };
    this.keys.set(kid, key);
    return key;
  }
}

// one per process and database (its key cache is shared by every launch and handshake)
const tokensOf = new WeakMap<object, SessionTokens>();
export function sessionTokens(svc: { config: Pick<Config, 'sessionTokenAlg' | 'jwtSecret' | 'masterKey'>; sql: Queryable }): SessionTokens {
  let tokens = tokensOf.get(svc.sql);
  if (!tokens) {
    tokens = new SessionTokens(svc.config, svc.sql);
    tokensOf.set(svc.sql, tokens);
  }
  return tokens;
}
