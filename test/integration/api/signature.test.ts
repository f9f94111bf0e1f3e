import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { revokeCredential } from '../../../src/shared/wallet/credentials.js';
import { sign } from '../../../src/shared/wallet/signer.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { signedRequest, type ApiResponse } from '../../support/signed-client.js';

// Contract 5.1-5.3 and DECISIONS D3, D17: how POST /v1/session (and a signed GET) treats the
// three signing headers. Every refused request must leave nothing behind: no session row for
// the operator, no wallet call (simulator or audit table).

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('request signature verification (contract 5.2, D3, D17)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const sessionRows = (operatorId: string) => h.svc.db.session.count({ where: { operatorId } });
  const walletRequests = (operatorId: string) =>
    h.wallet.requests.filter((r) => (r.body as { operatorId?: unknown } | undefined)?.operatorId === operatorId).length;
  const walletAuditRows = (operatorId: string) => h.svc.db.walletCall.count({ where: { operatorId } });

  async function expectNothingHappened(operator: TestOperator): Promise<void> {
    expect(await sessionRows(operator.operatorId), 'session rows').to.equal(0);
    expect(walletRequests(operator.operatorId), 'wallet simulator requests').to.equal(0);
    expect(await walletAuditRows(operator.operatorId), 'wallet audit rows').to.equal(0);
  }

  function expect401(response: ApiResponse, error: string, requestUuid: string): void {
    expect(response.status, response.text).to.equal(401);
    expect(response.body).to.be.an('object');
    expect(response.body.error).to.equal(error);
    expect(response.body.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
    expect(response.body.requestUuid).to.equal(requestUuid);
    expect(response.body.message).to.be.a('string').and.not.equal('');
  }

  async function expectLaunched(operator: TestOperator, response: ApiResponse): Promise<void> {
    expect(response.status, response.text).to.equal(200);
    expect(response.body.sessionId).to.be.a('string');
    const row = await h.svc.db.session.findUnique({ where: { id: response.body.sessionId } });
    expect(row?.operatorId).to.equal(operator.operatorId);
  }

  describe('missing headers (step 1)', () => {
    for (const header of ['keyId', 'timestamp', 'signature'] as const) {
      it(`refuses a POST without the ${header} header: 401 invalid_signature, requestUuid echoed`, async () => {
        const operator = await h.onboard();
        const requestUuid = randomUUID();
        const response = await operator.launch({ requestUuid }, { omit: [header] });
        expect401(response, 'invalid_signature', requestUuid);
        await expectNothingHappened(operator);
      });
    }

    it('echoes an empty requestUuid when the body has none', async () => {
      const operator = await h.onboard();
      const response = await operator.launch({}, { omit: ['signature'] });
      expect401(response, 'invalid_signature', '');
      await expectNothingHappened(operator);
    });

    it('echoes an empty requestUuid when the body is not JSON', async () => {
      const operator = await h.onboard();
      const raw = `{"requestUuid":"${randomUUID()}","operatorId":"${operator.operatorId}",`;
      const response = await operator.request('POST', '/v1/session', undefined, { rawBody: raw, omit: ['timestamp'] });
      expect401(response, 'invalid_signature', '');
      await expectNothingHappened(operator);
    });

    it('refuses a GET with no headers at all, with an empty requestUuid', async () => {
      const operator = await h.onboard();
      const response = await operator.request('GET', `/v1/rounds/${randomUUID()}/dispute-pack`, undefined, {
        omit: ['keyId', 'timestamp', 'signature'],
      });
      expect401(response, 'invalid_signature', '');
    });
  });

  it('reads the signing headers case-insensitively (contract 5.1)', async () => {
    const operator = await h.onboard();
    const body = JSON.stringify(operator.sessionBody());
    const timestamp = String(nowSeconds());
    const url = new URL('/v1/session', h.baseUrl);
    // fetch lower-cases header names; node:http sends them exactly as written
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        url,
        {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            'X-RGS-KEY-ID': operator.apiKeyId,
            'x-Rgs-TimeStamp': timestamp,
            'X-Rgs-Signature': sign(operator.apiSecret, 'POST', '/v1/session', timestamp, body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(status).to.equal(200);
    expect(await sessionRows(operator.operatorId)).to.equal(1);
  });

  describe('timestamp (step 2)', () => {
    for (const timestamp of ['1700000000.5', 'abc', new Date().toISOString(), '1e9', ' ']) {
      it(`refuses a timestamp that is not integer seconds: ${JSON.stringify(timestamp)}`, async () => {
        const operator = await h.onboard();
        const requestUuid = randomUUID();
        // signed over the very same timestamp text, so only the parse can fail
        const response = await operator.launch({ requestUuid }, { timestamp });
        expect(response.status, response.text).to.equal(401);
        expect(response.body.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
        expect(response.body.requestUuid).to.equal(requestUuid);
        expect(response.body.error).to.be.oneOf(['invalid_signature', 'stale_timestamp']);
        await expectNothingHappened(operator);
      });
    }

    it('refuses a timestamp more than 30 s old: 401 stale_timestamp', async () => {
      const operator = await h.onboard();
      const requestUuid = randomUUID();
      const response = await operator.launch({ requestUuid }, { timestamp: nowSeconds() - 31 });
      expect401(response, 'stale_timestamp', requestUuid);
      await expectNothingHappened(operator);
    });

    it('refuses a timestamp more than 30 s in the future: 401 stale_timestamp', async () => {
      const operator = await h.onboard();
      const requestUuid = randomUUID();
      // 32, not 31: the receiver's second may tick between signing and checking
      const response = await operator.launch({ requestUuid }, { timestamp: nowSeconds() + 32 });
      expect401(response, 'stale_timestamp', requestUuid);
      await expectNothingHappened(operator);
    });

    it('accepts timestamps just inside the window on either side', async () => {
      const operator = await h.onboard();
      await expectLaunched(operator, await operator.launch({}, { timestamp: nowSeconds() - 29 }));
      await expectLaunched(operator, await operator.launch({}, { timestamp: nowSeconds() + 29 }));
      expect(await sessionRows(operator.operatorId)).to.equal(2);
    });

    it('uses a per-operator window when one is set (contract 8.1)', async () => {
      const narrow = await h.onboard({ signatureWindowSeconds: 5 });
      const requestUuid = randomUUID();
      expect401(await narrow.launch({ requestUuid }, { timestamp: nowSeconds() - 8 }), 'stale_timestamp', requestUuid);
      expect401(await narrow.launch({ requestUuid }, { timestamp: nowSeconds() + 9 }), 'stale_timestamp', requestUuid);
      await expectNothingHappened(narrow);
      await expectLaunched(narrow, await narrow.launch({}, { timestamp: nowSeconds() - 3 }));

      const wide = await h.onboard({ signatureWindowSeconds: 120 });
      await expectLaunched(wide, await wide.launch({}, { timestamp: nowSeconds() - 90 }));
      await expectLaunched(wide, await wide.launch({}, { timestamp: nowSeconds() + 90 }));
      expect401(await wide.launch({ requestUuid }, { timestamp: nowSeconds() - 125 }), 'stale_timestamp', requestUuid);
      expect(await sessionRows(wide.operatorId)).to.equal(2);
    });
  });

  describe('key id', () => {
    it('refuses an unknown kid: 401 unknown_key', async () => {
      const operator = await h.onboard();
      const requestUuid = randomUUID();
      const key = { kid: `ak_${randomBytes(12).toString('hex')}`, secret: operator.apiSecret };
      const response = await signedRequest(h.baseUrl, key, 'POST', '/v1/session', operator.sessionBody({ requestUuid }));
      expect401(response, 'unknown_key', requestUuid);
      await expectNothingHappened(operator);
    });

    it('refuses a WALLET credential used to sign an inbound request: 401 unknown_key', async () => {
      const operator = await h.onboard();
      const requestUuid = randomUUID();
      const key = { kid: operator.walletKeyId, secret: operator.walletSignatureSecret };
      const response = await signedRequest(h.baseUrl, key, 'POST', '/v1/session', operator.sessionBody({ requestUuid }));
      expect401(response, 'unknown_key', requestUuid);
      await expectNothingHappened(operator);
    });

    it('refuses a key whose notBefore is in the future: 401 key_not_valid_now', async () => {
      const operator = await h.onboard();
      await h.svc.db.credential.update({
        where: { kid: operator.apiKeyId },
        data: { notBefore: new Date(Date.now() + 60 * 60 * 1000) },
      });
      const requestUuid = randomUUID();
      expect401(await operator.launch({ requestUuid }), 'key_not_valid_now', requestUuid);
      await expectNothingHappened(operator);
    });

    it('refuses a key whose notAfter has passed: 401 key_not_valid_now', async () => {
      const operator = await h.onboard();
      await h.svc.db.credential.update({ where: { kid: operator.apiKeyId }, data: { notAfter: new Date(Date.now() - 1000) } });
      const requestUuid = randomUUID();
      expect401(await operator.launch({ requestUuid }), 'key_not_valid_now', requestUuid);
      await expectNothingHappened(operator);
    });

    it('accepts a key whose notAfter is still ahead (rotation overlap)', async () => {
      const operator = await h.onboard();
      await h.svc.db.credential.update({ where: { kid: operator.apiKeyId }, data: { notAfter: new Date(Date.now() + 60_000) } });
      await expectLaunched(operator, await operator.launch());
    });

    it('refuses a revoked key at once: 401 key_not_valid_now', async () => {
      const operator = await h.onboard();
      await expectLaunched(operator, await operator.launch());
      await revokeCredential(h.svc.db, operator.apiKeyId);
      const requestUuid = randomUUID();
      expect401(await operator.launch({ requestUuid }), 'key_not_valid_now', requestUuid);
      expect(await sessionRows(operator.operatorId)).to.equal(1);
      expect(walletRequests(operator.operatorId)).to.equal(1);
    });
  });

  describe('what is signed (steps 3-5)', () => {
    it('refuses a body with one byte changed after signing', async () => {
      const operator = await h.onboard();
      const requestUuid = randomUUID();
      const signed = JSON.stringify(operator.sessionBody({ requestUuid, lang: 'en' }));
      const sent = signed.replace('"lang":"en"', '"lang":"eo"');
      expect(sent).to.have.length(signed.length).and.not.equal(signed);
      const response = await operator.request('POST', '/v1/session', undefined, { rawBody: sent, signBody: signed });
      expect401(response, 'invalid_signature', requestUuid);
      await expectNothingHappened(operator);
    });

    it('verifies the raw bytes: the same JSON with other whitespace than was signed is refused', async () => {
      const operator = await h.onboard();
      const requestUuid = randomUUID();
      const body = operator.sessionBody({ requestUuid });
      const response = await operator.request('POST', '/v1/session', undefined, {
        rawBody: JSON.stringify(body, null, 2),
        signBody: JSON.stringify(body),
      });
      expect401(response, 'invalid_signature', requestUuid);
      await expectNothingHappened(operator);
    });

    it('accepts pretty-printed JSON when those exact bytes were signed', async () => {
      const operator = await h.onboard();
      const raw = `${JSON.stringify(operator.sessionBody(), null, 2)}\n`;
      await expectLaunched(operator, await operator.request('POST', '/v1/session', undefined, { rawBody: raw }));
    });

    for (const signPath of ['/v1/sessions', '/v1/session/', '/v1/rounds']) {
      it(`refuses a signature over another path (${signPath})`, async () => {
        const operator = await h.onboard();
        const requestUuid = randomUUID();
        expect401(await operator.launch({ requestUuid }, { signPath }), 'invalid_signature', requestUuid);
        await expectNothingHappened(operator);
      });
    }

    for (const signMethod of ['PUT', 'GET']) {
      it(`refuses a signature over another method (${signMethod})`, async () => {
        const operator = await h.onboard();
        const requestUuid = randomUUID();
        expect401(await operator.launch({ requestUuid }, { signMethod }), 'invalid_signature', requestUuid);
        await expectNothingHappened(operator);
      });
    }

    it("refuses a signature made with another operator's secret", async () => {
      const operator = await h.onboard();
      const other = await h.onboard();
      const requestUuid = randomUUID();
      const key = { kid: operator.apiKeyId, secret: other.apiSecret };
      const response = await signedRequest(h.baseUrl, key, 'POST', '/v1/session', operator.sessionBody({ requestUuid }));
      expect401(response, 'invalid_signature', requestUuid);
      await expectNothingHappened(operator);
      await expectNothingHappened(other);
    });

    it('refuses a signature header that is not the MAC at all', async () => {
      const operator = await h.onboard();
      const requestUuid = randomUUID();
      for (const signature of ['not-base64!', randomBytes(32).toString('base64'), '']) {
        const response = await operator.launch({ requestUuid }, { signature });
        expect401(response, 'invalid_signature', requestUuid);
      }
      await expectNothingHappened(operator);
    });
  });

  describe('replay (D17)', () => {
    it('refuses a POST replayed with identical kid, timestamp and signature: 401 replayed_signature', async () => {
      const operator = await h.onboard();
      const requestUuid = randomUUID();
      const body = operator.sessionBody({ requestUuid });
      const timestamp = nowSeconds() - 2;
      const first = await operator.request('POST', '/v1/session', body, { timestamp });
      await expectLaunched(operator, first);
      const replay = await operator.request('POST', '/v1/session', body, { timestamp });
      expect401(replay, 'replayed_signature', requestUuid);
      expect(await sessionRows(operator.operatorId)).to.equal(1);
      expect(walletRequests(operator.operatorId)).to.equal(1);
      expect(await walletAuditRows(operator.operatorId)).to.equal(1);

      // an operator retry is freshly signed (new timestamp) and gets the stored response
      const retry = await operator.request('POST', '/v1/session', body, { timestamp: nowSeconds() });
      expect(retry.status, retry.text).to.equal(200);
      expect(retry.body).to.deep.equal(first.body);
      expect(await sessionRows(operator.operatorId)).to.equal(1);
      expect(walletRequests(operator.operatorId)).to.equal(1);
    });

    it('refuses a replay whose signature is re-encoded to the same MAC bytes', async () => {
      const operator = await h.onboard();
      // no requestUuid: nothing but the replay check stands between a replay and a second session
      const body = operator.sessionBody();
      const timestamp = String(nowSeconds() - 2);
      const signature = sign(operator.apiSecret, 'POST', '/v1/session', timestamp, JSON.stringify(body));
      await expectLaunched(operator, await operator.request('POST', '/v1/session', body, { timestamp, signature }));
      // other spellings of the same 32 MAC bytes that a lenient base64 decoder accepts
      const variants = [
        signature.replace(/=+$/, ''),
        `${signature}=`,
        `${signature.slice(0, 10)} ${signature.slice(10)}`,
        signature.replace(/\+/g, '-').replace(/\//g, '_'),
      ].filter((variant) => variant !== signature);
      for (const variant of variants) {
        const replay = await operator.request('POST', '/v1/session', body, { timestamp, signature: variant });
        expect(replay.status, `${variant}: ${replay.text}`).to.equal(401);
        expect(replay.body.error).to.be.oneOf(['replayed_signature', 'invalid_signature']);
        expect(replay.body.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
      }
      expect(await sessionRows(operator.operatorId)).to.equal(1);
      expect(walletRequests(operator.operatorId)).to.equal(1);
    });

    it('does not replay-check GETs: the same signed GET twice reaches the handler both times', async () => {
      const operator = await h.onboard();
      const path = `/v1/rounds/${randomUUID()}/dispute-pack`;
      const timestamp = nowSeconds() - 1;
      const first = await operator.request('GET', path, undefined, { timestamp });
      const second = await operator.request('GET', path, undefined, { timestamp });
      for (const response of [first, second]) {
        expect(response.status, response.text).to.equal(404);
        expect(response.body.error).to.equal('round_not_found');
      }
    });

    it('applies the signature rules to GETs too', async () => {
      const operator = await h.onboard();
      const path = `/v1/rounds/${randomUUID()}/dispute-pack`;
      expect401(await operator.request('GET', path, undefined, { signPath: '/v1/rounds/other/dispute-pack' }), 'invalid_signature', '');
      expect401(await operator.request('GET', path, undefined, { timestamp: nowSeconds() - 31 }), 'stale_timestamp', '');
    });
  });
});
