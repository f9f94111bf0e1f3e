import { expect } from 'chai';
import { publicWebhookFailure, webhookFailure } from '../../src/shared/domain/webhook-failure.js';
import { holdUntil } from '../../src/shared/game/webhooks/schedule.js';

// D24, D31: what an operator reads of a failed webhook attempt is a category, never an
// address, a resolution or a raw error message; and how long a failing endpoint is held.

describe('webhook failure categories (D24, D31)', () => {
  it('names each way an attempt fails by its category', () => {
    expect(webhookFailure({ kind: 'response', httpStatus: 500 })).to.equal('http_5xx');
    expect(webhookFailure({ kind: 'response', httpStatus: 503 })).to.equal('http_5xx');
    expect(webhookFailure({ kind: 'response', httpStatus: 404 })).to.equal('http_4xx');
    expect(webhookFailure({ kind: 'response', httpStatus: 302 })).to.equal('http_status:302');
    expect(webhookFailure({ kind: 'oversize', httpStatus: 502 })).to.equal('http_5xx');
    expect(webhookFailure({ kind: 'timeout' })).to.equal('timeout');
    expect(webhookFailure({ kind: 'refused' })).to.equal('address_refused');
    expect(webhookFailure({ kind: 'unsigned' })).to.equal('credential_unavailable');
    const network = (code?: string) => webhookFailure({ kind: 'network', code });
    expect(['ENOTFOUND', 'EAI_AGAIN'].map(network)).to.deep.equal(['dns_failed', 'dns_failed']);
    expect(['ECONNREFUSED', 'EHOSTUNREACH', 'ETIMEDOUT'].map(network)).to.deep.equal(['connect_failed', 'connect_failed', 'connect_failed']);
    expect(['ECONNRESET', 'EPIPE'].map(network)).to.deep.equal(['connection_lost', 'connection_lost']);
    expect(['DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO'].map(network)).to.deep.equal(
      Array(5).fill('tls_failed'),
    );
    expect([undefined, 'ESOMETHING'].map(network)).to.deep.equal(['network_error', 'network_error']);
  });

  it('reads a stored raw message (a row older than categories) as its category, never as written', () => {
    expect(publicWebhookFailure(null)).to.equal(null);
    expect(publicWebhookFailure('http_status:302')).to.equal('http_status:302');
    expect(publicWebhookFailure('HTTP 500')).to.equal('http_5xx');
    expect(publicWebhookFailure('no answer within 10000 ms')).to.equal('timeout');
    expect(publicWebhookFailure('network error: getaddrinfo ENOTFOUND db.internal')).to.equal('dns_failed');
    expect(publicWebhookFailure('network error: connect ECONNREFUSED 10.0.0.5:5432')).to.equal('connect_failed');
    expect(publicWebhookFailure('webhook URL host x.example resolves to 10.0.0.5 (private), not a public address')).to.equal('address_refused');
    expect(publicWebhookFailure('the operator has no valid wallet credential to sign with')).to.equal('credential_unavailable');
    expect(publicWebhookFailure('network error: socket hang up at 10.1.2.3')).to.equal('network_error');
  });
});

describe('holding an endpoint whose circuit is open (D31)', () => {
  const now = new Date('2026-01-01T00:00:00.000Z');
  it('lasts the open period, lengthened by up to 20 % at random, never shortened', () => {
    expect(holdUntil(30_000, now, () => 0).getTime() - now.getTime()).to.equal(30_000);
    expect(holdUntil(30_000, now, () => 0.5).getTime() - now.getTime()).to.equal(33_000);
    expect(holdUntil(30_000, now, () => 0.999_999).getTime() - now.getTime()).to.be.within(35_999, 36_000);
  });
});
