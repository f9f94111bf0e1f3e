import { expect } from 'chai';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { send } from '../../support/signed-client.js';
import { circuitKey } from '../../../src/shared/wallet/circuit.js';

// The wallet circuit breaker (contract 3.4, 8.1, D13), seen through session launches, whose
// balance call is the simplest wallet call: 5 consecutive uncertain answers open it, an open
// circuit refuses at once without calling the wallet, one probe goes through after 30 s, and
// its success closes the circuit.
describe('wallet circuit breaker per (operator, endpoint)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const requestsOf = (operator: TestOperator) =>
    h.wallet.requests.filter((r) => (r.body as { operatorId?: string } | null)?.operatorId === operator.operatorId).length;
  // the 30 s of contract 3.4 pass: the circuit's open-until moves into the past
  const elapseOpenTime = (operator: TestOperator) => h.svc.redis.hset(circuitKey(operator.operatorId, 'balance'), 'openUntil', '1');

  async function openCircuit(operator: TestOperator) {
    h.wallet.setFault('balance', { kind: 'http', httpStatus: 500 }, 5);
    for (let i = 0; i < 5; i++) expect((await operator.launch()).body.error).to.equal('wallet_unavailable');
    expect(requestsOf(operator)).to.equal(5);
  }

  it('opens after 5 consecutive uncertain answers and then refuses without calling the wallet', async () => {
    const operator = await h.onboard();
    await openCircuit(operator);
    const refused = await operator.launch();
    expect(refused.status).to.equal(502);
    expect(refused.body.error).to.equal('wallet_unavailable');
    expect(requestsOf(operator), 'no call reached the wallet').to.equal(5);
    const audit = await h.svc.db.walletCall.findFirst({ where: { operatorId: operator.operatorId }, orderBy: { createdAt: 'desc' } });
    expect(audit).to.include({ status: 'RS_ERROR_TIMEOUT', error: 'circuit_open', httpStatus: null });
    // per operator: another operator's calls go through
    const other = await h.onboard();
    expect((await other.launch()).status).to.equal(200);
    const metrics = await send(`${h.baseUrl}/metrics`, {});
    expect(metrics.text).to.match(/rgs_wallet_circuit_rejections_total\{endpoint="balance"\} [1-9]/);
  });

  it('a clean business answer resets the count (D13)', async () => {
    const operator = await h.onboard();
    h.wallet.setFault('balance', { kind: 'http', httpStatus: 500 }, 4);
    for (let i = 0; i < 4; i++) await operator.launch();
    h.wallet.setFault('balance', { kind: 'status', status: 'RS_ERROR_USER_DISABLED' }, 1);
    expect((await operator.launch()).status).to.equal(422);
    h.wallet.setFault('balance', { kind: 'http', httpStatus: 500 }, 4);
    for (let i = 0; i < 4; i++) await operator.launch();
    h.wallet.setFault('balance', null);
    expect((await operator.launch()).status, 'still closed after 4 + 4 failures with a healthy answer between').to.equal(200);
  });

  // contract 3.4, 7.1, D13: a refusal with a 4xx is a definite answer (fatal, nothing to
  // undo), not the wallet being down
  it('a 401 RS_ERROR_INVALID_SIGNATURE answer resets the count like any definite answer', async () => {
    const operator = await h.onboard();
    h.wallet.setFault('balance', { kind: 'http', httpStatus: 500 }, 4);
    for (let i = 0; i < 4; i++) await operator.launch();
    h.wallet.setFault('balance', { kind: 'status', status: 'RS_ERROR_INVALID_SIGNATURE', httpStatus: 401 }, 1);
    const refused = await operator.launch();
    expect(refused.status).to.equal(502);
    expect(refused.body.error).to.equal('wallet_rejected');
    h.wallet.setFault('balance', { kind: 'http', httpStatus: 500 }, 4);
    for (let i = 0; i < 4; i++) expect((await operator.launch()).body.error).to.equal('wallet_unavailable');
    h.wallet.setFault('balance', null);
    expect((await operator.launch()).status, 'still closed after 4 + 4 failures with a refusal between').to.equal(200);
  });

  it('after 30 s lets exactly one probe through; its success closes the circuit', async () => {
    const operator = await h.onboard();
    await openCircuit(operator);
    await elapseOpenTime(operator);
    h.wallet.setFault('balance', { kind: 'delay', ms: 300 }, 1);
    const [a, b, c] = await Promise.all([operator.launch(), operator.launch(), operator.launch()]);
    expect([a, b, c].map((r) => r.status).sort()).to.deep.equal([200, 502, 502]);
    expect(requestsOf(operator), 'one probe across the cluster').to.equal(6);
    expect((await operator.launch()).status, 'closed again').to.equal(200);
  });

  it('shows its state in the wallet-calls report and in /metrics: open, half_open, closed', async () => {
    const operator = await h.onboard();
    const circuitOf = async (endpoint: string) => {
      const report = await operator.request('GET', '/v1/reports/wallet-calls');
      expect(report.status).to.equal(200);
      return (report.body.endpoints as { endpoint: string; circuit: string }[]).find((row) => row.endpoint === endpoint)?.circuit;
    };
    const gauge = async () => {
      const metrics = await send(`${h.baseUrl}/metrics`, {});
      const line = metrics.text.split('\n').find((l) => l.startsWith('rgs_wallet_circuit_state{') && l.includes(`operator="${operator.operatorId}"`));
      return line?.match(/state="(\w+)"\} 1$/)?.[1];
    };
    expect(await circuitOf('balance')).to.equal('closed');
    expect(await gauge(), 'a circuit with no failures is not listed').to.equal(undefined);
    await openCircuit(operator);
    expect(await circuitOf('balance')).to.equal('open');
    expect(await circuitOf('bet'), 'per endpoint').to.equal('closed');
    expect(await gauge()).to.equal('open');
    await elapseOpenTime(operator);
    expect(await circuitOf('balance')).to.equal('half_open');
    expect(await gauge()).to.equal('half_open');
    expect((await operator.launch()).status, 'the probe succeeds').to.equal(200);
    expect(await circuitOf('balance')).to.equal('closed');
    expect(await gauge()).to.equal(undefined);
  });

  it('a failed probe opens it again for another 30 s', async () => {
    const operator = await h.onboard();
    await openCircuit(operator);
    await elapseOpenTime(operator);
    h.wallet.setFault('balance', { kind: 'http', httpStatus: 503 }, 1);
    expect((await operator.launch()).status).to.equal(502);
    expect(requestsOf(operator)).to.equal(6);
    h.wallet.setFault('balance', null);
    expect((await operator.launch()).status, 'refused at once: open again').to.equal(502);
    expect(requestsOf(operator)).to.equal(6);
  });
});
