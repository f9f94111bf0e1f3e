import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { startHarness, type Harness } from '../../support/harness.js';

const run = promisify(execFile);

// The README promises that its signed example works when pasted into a shell against
// `npm start`. This runs that very block (shell, openssl, curl) against a live api role.
describe('README: the copy-pasteable signed request', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it('launches a session exactly as the README shows', async () => {
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const block = /This works when pasted[\s\S]*?```bash\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'the README example block').to.be.a('string');
    const script = block!.replaceAll('http://127.0.0.1:3000', h.baseUrl);
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: new URL('../../..', import.meta.url).pathname,
      env: { ...process.env },
    });
    const session = JSON.parse(stdout);
    expect(session).to.have.keys(['sessionId', 'sessionToken', 'launchUrl', 'expiresAt', 'serverSeedHash']);
    const row = await h.svc.db.session.findUnique({ where: { id: session.sessionId } });
    expect(row?.mode).to.equal('DEMO');
    expect(row?.playerRef).to.equal('player-1001');
  });
});
