import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import jwt from 'jsonwebtoken';
import type { Config } from '../../platform/config.js';
import type { Queryable } from '../../platform/db/sql.js';
import { TOKEN_KEY, currentSigningKey, jwkOf, publishedKeys, type SigningAlgorithm } from '../../platform/signing-keys.js';

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
// lifetime after its retirement, by when every token it signed has expired; HS256 tokens
// verify until SESSION_TOKEN_HS256_UNTIL (by default one session lifetime after the
// process started). Tokens are signed with the current key only if it is of
// SESSION_TOKEN_ALG (D38: `rgs migrate` rotates it to that algorithm).
//
// RS256 and EdDSA are deterministic, so a launch replayed under the same key re-mints the
// same token (D25); after a rotation the replay is signed by the new key: another token
// with the same claims, just as valid.
type VerificationKey = { key: KeyObject; algorithm: SigningAlgorithm; retiredAt: Date | null };

// a key's retirement is noticed within this; its public key never changes
const KEY_REREAD_MS = 60_000;
// D24: the token keys are read, all of them in one query, at most this often. A token
// naming a kid this process does not know waits for the next read (at most this long):
// a key made a moment ago on another node is found, and a flood of forged headers, each
// with a kid of its own, costs one query per interval, not one each.
const KEYS_READ_EVERY_MS = 1_000;
// the kids the service makes (signing-keys.ts); anything else is refused unread
const TOKEN_KID = /^tk_[0-9a-f]{24}$/;

// The service would sign session tokens with a key of another algorithm than
// SESSION_TOKEN_ALG: the current token key was made before SESSION_TOKEN_ALG changed, and
// `rgs migrate` has not rotated it since (D38). Refused: a token is signed as configured or
// not at all.
export class TokenKeyMismatchError extends Error {
  override name = 'TokenKeyMismatchError';
  constructor(kid: string, keyAlgorithm: string, configured: string) {
    super(
      `SESSION_TOKEN_ALG is ${configured} but the current session-token key ${kid} is ${keyAlgorithm}: ` +
        `run \`rgs migrate\` with SESSION_TOKEN_ALG=${configured} (it rotates the token key to ${configured}, D38), then start the service again`,
    );
  }
}

type TokenConfig = Pick<Config, 'sessionTokenAlg' | 'jwtSecret' | 'masterKey'> & { sessionTokenHs256Until?: Date | undefined };

export class SessionTokens {
  private keys = new Map<string, VerificationKey>();
  // when the last read of the keys began (this process's clock), and the read under way
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;
  // D34: with SESSION_TOKEN_ALG other than HS256, HS256 tokens verify until then only
  private readonly hs256Until: number;

  constructor(
    private readonly config: TokenConfig,
    private readonly sql: Queryable,
    startedAtMs: number = Date.now(),
  ) {
    // SESSION_TOKEN_HS256_UNTIL, or else one session lifetime from this process's start:
    // long enough for every token signed before SESSION_TOKEN_ALG changed (a change takes
    // effect at a migrate and a restart, D38), and never for ever
    this.hs256Until = config.sessionTokenHs256Until?.getTime() ?? startedAtMs + SESSION_LIFETIME_SECONDS * 1000;
  }

  async sign(claims: SessionClaims): Promise<string> {
    const alg = this.config.sessionTokenAlg;
    if (alg === 'HS256') return signSessionToken(this.config.jwtSecret, claims);
    // the current key is read at every launch, so a rotation on any node applies to the next one
    const key = await currentSigningKey(this.sql, this.config.masterKey, TOKEN_KEY, alg satisfies SigningAlgorithm);
    if (key.algorithm !== alg) throw new TokenKeyMismatchError(key.kid, key.algorithm, alg);
    return new SignJWT(canonical(claims)).setProtectedHeader({ alg: key.algorithm, typ: 'JWT', kid: key.kid }).sign(key.privateKey);
  }

  async verify(token: string, nowSeconds: number): Promise<TokenCheck> {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return { ok: false, reason: 'invalid_token' };
    }
    if (header.alg === 'HS256') {
      // D34: HS256 under JWT_SECRET is not for ever once another algorithm is configured: a
      // leaked JWT_SECRET must stop minting sessions
      if (this.config.sessionTokenAlg !== 'HS256' && nowSeconds * 1000 > this.hs256Until) return { ok: false, reason: 'invalid_token' };
      return verifySessionToken(this.config.jwtSecret, token, nowSeconds);
    }
    if ((header.alg !== 'RS256' && header.alg !== 'EdDSA') || typeof header.kid !== 'string' || !TOKEN_KID.test(header.kid)) return { ok: false, reason: 'invalid_token' };
    const key = await this.keyOf(header.kid);
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

  // the key of the kid from a read that began after the kid was asked for, unless the keys
  // were read less than KEY_REREAD_MS ago and hold it
  private async keyOf(kid: string): Promise<VerificationKey | undefined> {
    const asked = Date.now();
    if (asked - this.readAt < KEY_REREAD_MS && this.keys.has(kid)) return this.keys.get(kid);
    while (this.readAt < asked) await this.read();
    return this.keys.get(kid);
  }

  // one read at a time, none sooner than KEYS_READ_EVERY_MS after the one before: the keys
  // current or retired less than a session lifetime ago (those a live token can name), less
  // the revoked ones
  private read(): Promise<void> {
    this.reading ??= new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, this.readAt + KEYS_READ_EVERY_MS - Date.now())))
      .then(async () => {
        const began = Date.now();
        const rows = await publishedKeys(this.sql, TOKEN_KEY, SESSION_LIFETIME_SECONDS * 1000);
        const keys = new Map<string, VerificationKey>();
        for (const row of rows) {
          // a revoked key may have leaked: it verifies no token (D32, D34)
          if (row.revokedAt !== null) continue;
          const { kid: _kid, use: _use, alg: _alg, ...jwk } = jwkOf(row);
          keys.set(row.kid, { key: this.keys.get(row.kid)?.key ?? createPublicKey({ key: jwk, format: 'jwk' }), algorithm: row.algorithm, retiredAt: row.retiredAt });
        }
        this.keys = keys;
        this.readAt = began;
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}

// At start (D38): a process that signs session tokens refuses to start when the current token
// key is of another algorithm than SESSION_TOKEN_ALG, rather than sign otherwise than
// configured. None yet is no problem: the first launch makes one of SESSION_TOKEN_ALG.
export async function checkTokenKey(svc: { config: Pick<Config, 'sessionTokenAlg'>; sql: Queryable }): Promise<void> {
  const alg = svc.config.sessionTokenAlg;
  if (alg === 'HS256') return;
  const current = (await publishedKeys(svc.sql, TOKEN_KEY)).find((key) => key.retiredAt === null);
  if (current && current.algorithm !== alg) throw new TokenKeyMismatchError(current.kid, current.algorithm, alg);
}

// one per process and database (its key cache is shared by every launch and handshake)
const tokensOf = new WeakMap<object, SessionTokens>();
export function sessionTokens(svc: { config: TokenConfig; sql: Queryable; now?: () => Date }): SessionTokens {
  let tokens = tokensOf.get(svc.sql);
  if (!tokens) {
    tokens = new SessionTokens(svc.config, svc.sql, svc.now ? svc.now().getTime() : Date.now());
    tokensOf.set(svc.sql, tokens);
  }
  return tokens;
}
