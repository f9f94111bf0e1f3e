import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { SESSION_LIFETIME_SECONDS, signSessionToken, verifySessionToken, type SessionClaims } from '../../src/shared/game/sessions/token.js';

// contract 5.6: HS256 JWT under JWT_SECRET, at most 60 minutes; DECISIONS D4 names the
// refusals session_expired and invalid_token.

const SECRET = 's'.repeat(64);
const NOW = 1_800_000_000;

const claims = (overrides: Partial<SessionClaims> = {}): SessionClaims => ({
  sub: 'player-1',
  operatorId: 'op-1',
  sessionId: '6f1c2a4e-0a57-4c4b-9b39-3f5c2b7f7a10',
  currency: 'EUR',
  jurisdiction: 'MT',
  lang: 'en',
  mode: 'real',
  rgLimits: { dailyLossMicro: '12345678901234567890', sessionTimeSeconds: 600 },
  iat: NOW,
  exp: NOW + SESSION_LIFETIME_SECONDS,
  ...overrides,
});

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function handMadeToken(header: Record<string, unknown>, payload: unknown, key: string | undefined): string {
  const unsigned = `${b64url(header)}.${b64url(payload)}`;
  const signature = key === undefined ? '' : createHmac(header.alg === 'HS512' ? 'sha512' : 'sha256', key).update(unsigned).digest('base64url');
  return `${unsigned}.${signature}`;
}

describe('session token (contract 5.6, D4)', () => {
  it('lives at most 60 minutes', () => {
    expect(SESSION_LIFETIME_SECONDS).to.equal(3600);
  });

  it('is deterministic: the same claims, in any key order (as jsonb gives them back), give the same token (D25)', () => {
    const first = signSessionToken(SECRET, claims());
    expect(signSessionToken(SECRET, claims())).to.equal(first);
    const reordered = Object.fromEntries(Object.entries(claims()).reverse()) as SessionClaims;
    reordered.rgLimits = { sessionTimeSeconds: 600, dailyLossMicro: '12345678901234567890' };
    expect(signSessionToken(SECRET, reordered)).to.equal(first);
    expect(signSessionToken(SECRET, claims({ iat: NOW + 1 }))).not.to.equal(first);
  });

  it('signs HS256 and verifies back to the same claims', () => {
    const token = signSessionToken(SECRET, claims());
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'));
    expect(header).to.deep.equal({ alg: 'HS256', typ: 'JWT' });
    const result = verifySessionToken(SECRET, token, NOW + 10);
    expect(result.ok).to.equal(true);
    if (result.ok) {
      expect(result.claims).to.deep.equal(claims());
      // money stays a string inside the token
      expect(result.claims.rgLimits.dailyLossMicro).to.equal('12345678901234567890');
    }
  });

  it('agrees with an independent HS256 implementation', () => {
    const token = handMadeToken({ alg: 'HS256', typ: 'JWT' }, claims(), SECRET);
    expect(verifySessionToken(SECRET, token, NOW).ok).to.equal(true);
  });

  it('is valid until exp and session_expired after it', () => {
    const token = signSessionToken(SECRET, claims());
    expect(verifySessionToken(SECRET, token, NOW + SESSION_LIFETIME_SECONDS - 1).ok).to.equal(true);
    expect(verifySessionToken(SECRET, token, NOW + SESSION_LIFETIME_SECONDS + 1)).to.deep.equal({ ok: false, reason: 'session_expired' });
    expect(verifySessionToken(SECRET, token, NOW + 86_400)).to.deep.equal({ ok: false, reason: 'session_expired' });
  });

  it('uses the real clock by default', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifySessionToken(SECRET, signSessionToken(SECRET, claims({ iat: now, exp: now + 60 }))).ok).to.equal(true);
    expect(verifySessionToken(SECRET, signSessionToken(SECRET, claims({ iat: now - 120, exp: now - 60 })))).to.deep.equal({
      ok: false,
      reason: 'session_expired',
    });
  });

  it('refuses a token signed with another secret as invalid_token', () => {
    const token = signSessionToken('t'.repeat(64), claims());
    expect(verifySessionToken(SECRET, token, NOW)).to.deep.equal({ ok: false, reason: 'invalid_token' });
  });

  it('does not report a forged token as merely expired', () => {
    const token = signSessionToken('t'.repeat(64), claims());
    expect(verifySessionToken(SECRET, token, NOW + 86_400)).to.deep.equal({ ok: false, reason: 'invalid_token' });
  });

  it('refuses alg none', () => {
    const none = handMadeToken({ alg: 'none', typ: 'JWT' }, claims(), undefined);
    expect(verifySessionToken(SECRET, none, NOW)).to.deep.equal({ ok: false, reason: 'invalid_token' });
    const noneWithSignature = `${none}${createHmac('sha256', SECRET).update(none.slice(0, -1)).digest('base64url')}`;
    expect(verifySessionToken(SECRET, noneWithSignature, NOW)).to.deep.equal({ ok: false, reason: 'invalid_token' });
  });

  it('refuses another HMAC algorithm under the right secret', () => {
    const hs512 = jwt.sign(claims(), SECRET, { algorithm: 'HS512', noTimestamp: true });
    expect(verifySessionToken(SECRET, hs512, NOW)).to.deep.equal({ ok: false, reason: 'invalid_token' });
  });

  it('refuses a tampered payload', () => {
    const [header, , signature] = signSessionToken(SECRET, claims()).split('.');
    const tampered = `${header}.${b64url(claims({ operatorId: 'op-2' }))}.${signature}`;
    expect(verifySessionToken(SECRET, tampered, NOW)).to.deep.equal({ ok: false, reason: 'invalid_token' });
  });

  it('refuses a correctly signed token without sessionId or operatorId', () => {
    const { sessionId: _s, ...noSession } = claims();
    const { operatorId: _o, ...noOperator } = claims();
    for (const payload of [noSession, noOperator, { ...claims(), sessionId: 42 }]) {
      const token = jwt.sign(payload, SECRET, { algorithm: 'HS256', noTimestamp: true });
      expect(verifySessionToken(SECRET, token, NOW), JSON.stringify(payload)).to.deep.equal({ ok: false, reason: 'invalid_token' });
    }
  });

  it('refuses garbage as invalid_token', () => {
    for (const garbage of ['', 'abc', 'a.b.c', '...', 'eyJhbGciOiJIUzI1NiJ9', `${'x'.repeat(5000)}.y.z`]) {
      expect(verifySessionToken(SECRET, garbage, NOW), garbage.slice(0, 20)).to.deep.equal({ ok: false, reason: 'invalid_token' });
    }
  });
});
