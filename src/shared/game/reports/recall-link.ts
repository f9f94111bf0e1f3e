import { createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

// The recall link (D33): `{PUBLIC_URL}/replay/{roundId}?t=...`, valid for 24 hours. `t` is an
// HS256 JWT, made as the session token is (contract 5.6), under a key derived from
// MASTER_KEY for this purpose only: nothing new to configure, and neither key can stand for
// the other (a session token is no recall token, and the reverse). It names the round and its
// operator; the page reads nothing else with it.

export const RECALL_LINK_LIFETIME_SECONDS = 24 * 60 * 60;
const PURPOSE = 'rgs-recall';

type RecallClaims = { sub: string; operatorId: string; purpose: typeof PURPOSE; iat: number; exp: number };

const derived = new WeakMap<Buffer, KeyObject>();
function recallKey(masterKey: Buffer): KeyObject {
  let key = derived.get(masterKey);
  if (!key) {
    key = createSecretKey(Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'rgs/recall-link/v1', 32)));
    derived.set(masterKey, key);
  }
  return key;
}

export function recallLink(masterKey: Buffer, publicUrl: string, round: { roundId: string; operatorId: string }, now: Date) {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + RECALL_LINK_LIFETIME_SECONDS;
  const claims: RecallClaims = { sub: round.roundId, operatorId: round.operatorId, purpose: PURPOSE, iat, exp };
  const token = jwt.sign(claims, recallKey(masterKey), { algorithm: 'HS256' });
  // as the launch URL is made (contract 2.3): PUBLIC_URL, then the page's path
  return { url: `${publicUrl}/replay/${round.roundId}?t=${token}`, expiresAt: new Date(exp * 1000).toISOString() };
}

export type RecallCheck =
  | { ok: true; operatorId: string; expiresAt: Date }
  | { ok: false; reason: 'expired' | 'invalid' };

// The token must be ours, unexpired, and name this very round.
export function verifyRecallToken(masterKey: Buffer, token: string, roundId: string, now: Date): RecallCheck {
  try {
    const claims = jwt.verify(token, recallKey(masterKey), {
      algorithms: ['HS256'],
      clockTimestamp: Math.floor(now.getTime() / 1000),
    }) as Partial<RecallClaims>;
    if (claims.purpose !== PURPOSE || claims.sub !== roundId || typeof claims.operatorId !== 'string' || typeof claims.exp !== 'number') {
      return { ok: false, reason: 'invalid' };
    }
    return { ok: true, operatorId: claims.operatorId, expiresAt: new Date(claims.exp * 1000) };
  } catch (err) {
    return { ok: false, reason: err instanceof jwt.TokenExpiredError ? 'expired' : 'invalid' };
  }
}
