import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { signedHeaders } from '../../../src/shared/wallet/signer.js';
import { freePort, spawnService, type ServiceProcess } from '../../support/processes.js';

// D35, docs/sandbox.md: `npm run sandbox` (node --import tsx src/sandbox.ts, the command of
// that script) as an integrator runs it: a process of its own whose admin API sets a balance
// and injects a fault, which a signed wallet call then shows. The wallet credential comes from
// the environment or from the admin API.

describe('the wallet sandbox process (npm run sandbox)', function () {
  this.timeout(30_000);
  const token = randomBytes(16).toString('hex');
  const credential = { kid: `wallet-${randomBytes(4).toString('hex')}`, secret: randomBytes(64).toString('hex') };
  let sandbox: ServiceProcess;
  let url: string;

  before(async () => {
    const port = await freePort();
    sandbox = spawnService(
      'sandbox',
      { SANDBOX_PORT: String(port), SANDBOX_ADMIN_TOKEN: token, SANDBOX_WALLET_KID: credential.kid, SANDBOX_WALLET_SECRET: credential.secret },
      'src/sandbox.ts',
    );
    const line = await sandbox.waitForText(/wallet URL:/);
    url = line.split('wallet URL:')[1]!.trim();
    expect(url).to.equal(`http://127.0.0.1:${port}`);
  });
  after(() => sandbox?.stop());

  const admin = async (method: string, path: string, body?: unknown, bearer = token) => {
    const response = await fetch(`${url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const wallet = async (endpoint: string, fields: Record<string, unknown>, key = credential) => {
    const body = JSON.stringify({ requestUuid: randomUUID(), operatorId: 'sandbox-op', gameCode: 'dice', currency: 'EUR', ...fields });
    const path = `/wallet/${endpoint}`;
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signedHeaders(key.kid, key.secret, 'POST', path, body) },
      body,
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('sets a balance and injects a fault through the admin API, and a signed wallet call shows both', async () => {
    const playerRef = 'player-1';
    expect(await admin('POST', '/balances', { playerRef, currency: 'EUR', balanceMicro: '5000000' })).to.deep.equal({
      status: 200,
      body: { playerRef, currency: 'EUR', balanceMicro: '5000000' },
    });
    const balance = await wallet('balance', { playerRef });
    expect(balance.body).to.include({ status: 'RS_OK', balanceMicro: '5000000', currency: 'EUR' });

    // the next bet call only: the wallet answers RS_ERROR_UNKNOWN and books nothing
    const injected = await admin('POST', '/faults', { endpoint: 'bet', fault: { kind: 'status', status: 'RS_ERROR_UNKNOWN' }, times: 1 });
    expect(injected.body.faults).to.deep.equal([{ endpoint: 'bet', fault: { kind: 'status', status: 'RS_ERROR_UNKNOWN' }, remaining: 1 }]);
    const bet = { playerRef, transactionUuid: randomUUID(), roundId: randomUUID(), amountMicro: '1000000' };
    expect((await wallet('bet', bet)).body.status).to.equal('RS_ERROR_UNKNOWN');
    expect((await admin('GET', '/ledger')).body.entries).to.deep.equal([]);
    expect((await admin('GET', '/faults')).body.faults).to.deep.equal([]);

    // the fault spent, the same bet is booked
    expect((await wallet('bet', bet)).body).to.include({ status: 'RS_OK', balanceMicro: '4000000' });
    const ledger = (await admin('GET', '/ledger')).body.entries;
    expect(ledger).to.have.length(1);
    expect(ledger[0]).to.include({ type: 'bet', transactionUuid: bet.transactionUuid, amountMicro: '1000000', balanceAfterMicro: '4000000' });
    expect((await admin('GET', '/balances')).body.balances).to.deep.equal([{ playerRef, currency: 'EUR', balanceMicro: '4000000' }]);
    expect((await admin('GET', '/violations')).body.violations).to.deep.equal([]);
  });

  // D24: anyone who reaches the port may send 1 MiB bodies unsigned; the process keeps only
  // the start of each (request-log.ts), so what it holds stays small whatever arrives
  it('keeps only the start of each unsigned 1 MiB body, and says what its request log holds', async () => {
    const before = (await admin('GET', '/requests')).body.received as number;
    const large = `{"pad":"${'x'.repeat(1024 * 1024 - 10)}"}`;
    for (let i = 0; i < 20; i++) {
      const answer = await fetch(`${url}/wallet/bet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: large });
      expect(answer.status).to.equal(401);
    }
    const { status, body } = await admin('GET', '/requests?last=20');
    expect(status).to.equal(200);
    expect(body.received).to.equal(before + 20);
    expect(body.limits).to.deep.equal({ maxEntries: 10_000, maxBytes: 16 * 1024 * 1024, unauthenticatedBodyBytes: 1024 });
    for (const request of body.requests) {
      expect(request).to.include({ path: '/wallet/bet', signatureValid: false, bodyBytes: Buffer.byteLength(large), bodyCut: true });
      expect(request.body).to.have.length(1024);
    }
    // 20 MiB arrived; what is kept of them is a few KiB each
    expect(body.keptBytes).to.be.below(body.kept * 4 * 1024);
  });

  it('accepts a wallet credential added through the admin API; refuses an unknown one and a wrong admin token', async () => {
    const added = { kid: 'added-kid', secret: randomBytes(64).toString('hex') };
    expect((await wallet('balance', { playerRef: 'player-2' }, added)).status).to.equal(401);
    expect((await admin('POST', '/credentials', added)).body.kids).to.include.members([credential.kid, added.kid]);
    expect((await wallet('balance', { playerRef: 'player-2' }, added)).body).to.include({ status: 'RS_OK', balanceMicro: '0' });

    const refused = await admin('GET', '/balances', undefined, 'not-the-token');
    expect(refused.status).to.equal(401);
    expect(refused.body.error).to.equal('unauthorized');
    const invalid = await admin('POST', '/faults', { endpoint: 'bet', fault: { kind: 'delay' } });
    expect(invalid.status).to.equal(400);
    expect(invalid.body).to.include({ error: 'invalid_request', status: 'RS_ERROR_WRONG_SYNTAX' });
    expect(invalid.body.details.map((d: { path: string }) => d.path)).to.deep.equal(['/fault/ms']);
  });
});
