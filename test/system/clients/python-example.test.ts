import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sign } from '../../../src/shared/wallet/signer.js';
import { startHarness, type Harness } from '../../support/harness.js';

// clients/python/rgs_sign.py (docs/clients.md), run with python3: its sign() gives the
// service's signature (contract 5.1) and its __main__ launches a session against a running
// service.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = 'clients/python/rgs_sign.py';

type Run = { code: number; stdout: string; stderr: string };

// no __pycache__ left beside the script
function python(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile('python3', args, { cwd: ROOT, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

describe('the Python signing example (clients/python/rgs_sign.py)', function () {
  this.timeout(60_000);

  it('sign() equals the service’s signature, for text and byte bodies', async () => {
    const secret = '9c'.repeat(64);
    const cases: [string, string, string, string][] = [
      ['POST', '/v1/session', '1700000000', JSON.stringify({ operatorId: 'op-1', playerRef: 'player-1', reason: 'quitté 🎲' })],
      ['GET', '/v1/rounds', '1700000001', ''],
    ];
    // the inputs as JSON on argv: no quoting of the secret or the body into Python source
    const program = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(`${ROOT}clients/python`)})`,
      'from rgs_sign import sign',
      'secret, cases = json.loads(sys.argv[1])',
      'for method, path, timestamp, body in cases:',
      '    print(sign(secret, method, path, timestamp, body))',
      '    print(sign(secret, method, path, timestamp, body.encode("utf-8")))',
    ].join('\n');
    const run = await python(['-c', program, JSON.stringify([secret, cases])]);
    expect(run.code, run.stderr).to.equal(0);
    const expected = cases.flatMap(([method, path, timestamp, body]) => {
      const signature = sign(secret, method, path, timestamp, body);
      return [signature, signature];
    });
    expect(run.stdout.trim().split('\n')).to.deep.equal(expected);
  });

  describe('launching a session against a running service', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
    });
    after(() => h?.close());

    it('answers 200 with a sessionToken', async () => {
      const operator = await h.onboard();
      const run = await python([SCRIPT], { RGS_URL: h.baseUrl, RGS_OPERATOR_ID: operator.operatorId, RGS_KEY_ID: operator.apiKeyId, RGS_API_SECRET: operator.apiSecret });
      expect(run.code, `${run.stderr}\n${run.stdout}`).to.equal(0);
      const [status, answer, ...rest] = run.stdout.trim().split('\n');
      expect(rest).to.deep.equal([]);
      expect(status).to.equal('200');
      const session = JSON.parse(answer!);
      expect(session).to.have.keys(['sessionId', 'sessionToken', 'launchUrl', 'expiresAt', 'serverSeedHash', 'sandbox']);
      expect(session.sessionToken).to.be.a('string').and.not.equal('');
      const row = await h.svc.db.session.findUniqueOrThrow({ where: { id: session.sessionId } });
      expect([row.operatorId, row.mode]).to.deep.equal([operator.operatorId, 'DEMO']);
    });

    it('a wrong secret: 401 invalid_signature, exit 1', async () => {
      const operator = await h.onboard();
      const run = await python([SCRIPT], { RGS_URL: h.baseUrl, RGS_OPERATOR_ID: operator.operatorId, RGS_KEY_ID: operator.apiKeyId, RGS_API_SECRET: 'e'.repeat(128) });
      expect(run.code).to.equal(1);
      const [status, answer] = run.stdout.trim().split('\n');
      expect(status).to.equal('401');
      expect(JSON.parse(answer!)).to.include({ error: 'invalid_signature', status: 'RS_ERROR_INVALID_SIGNATURE' });
    });
  });
});
