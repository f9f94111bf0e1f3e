import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// `rgs verify-pack` (D32) reads what others hand it: the pack, and the keys from a URL the
// auditor names. Neither may make it read without bound (D24): a key server's body is read
// as it arrives and dropped at 1 MiB, a pack file larger than a pack can be is not read.
// Run as the real subprocess; no database is involved.

const KEYS_CAP = 1024 * 1024;

const rgs = (args: string[]) =>
  runRgs(args, { env: { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/nowhere', REDIS_URL: 'redis://127.0.0.1:1' }, timeoutMs: 60_000 });

// a usage error is for the person typing: one line naming the command, then a hint
function usageError(result: CliResult): string {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(2);
  expect(result.stdout).to.equal('');
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).to.have.length(2);
  expect(lines[1]).to.equal("Run 'rgs verify-pack --help' for usage.");
  return lines[0]!;
}

describe('rgs verify-pack: bounded reads of the keys and the pack (D32, D24)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: Server;
  let baseUrl: string;
  // what the key server wrote to each request before the client went away
  const sent: Record<string, number> = {};

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rgs-verify-pack-'));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      sent[path] = 0;
      if (path === '/declared') {
        // a Content-Length above the cap: refused before a byte of the body is read
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * KEYS_CAP) });
        res.write('{"keys": [');
        return;
      }
      // an endless body, written as fast as the client takes it
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"keys": [');
      const pump = () => {
        while (!res.destroyed) {
          sent[path]! += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('--keys URL with an endless body: the download stops at the cap, a usage error saying why', async () => {
    const pack = join(dir, 'any.zip');
    await writeFile(pack, 'not read');
    const message = usageError(await rgs(['verify-pack', pack, '--keys', `${baseUrl}/endless`]));
    expect(message).to.equal(`rgs verify-pack: the keys from ${baseUrl}/endless are larger than a JWKS can be (${KEYS_CAP} bytes)`);
    // the server wrote ahead of what was read, but nowhere near endlessly
    expect(sent['/endless']).to.be.below(64 * KEYS_CAP);
  });

  it('--keys URL declaring a body above the cap is refused before it is read', async () => {
    const message = usageError(await rgs(['verify-pack', join(dir, 'any.zip'), '--keys', `${baseUrl}/declared`]));
    expect(message).to.equal(`rgs verify-pack: the keys from ${baseUrl}/declared are larger than a JWKS can be (${KEYS_CAP} bytes)`);
  });

  it('a keys file or a pack larger than either can be is not read', async () => {
    const keys = join(dir, 'keys.json');
    await writeFile(keys, '{"keys": []}');
    await truncate(keys, KEYS_CAP + 1);
    expect(usageError(await rgs(['verify-pack', join(dir, 'any.zip'), '--keys', keys]))).to.equal(
      `rgs verify-pack: the keys from ${keys} are larger than a JWKS can be (${KEYS_CAP} bytes)`,
    );

    const small = join(dir, 'small-keys.json');
    await writeFile(small, '{"keys": []}');
    const pack = join(dir, 'huge.zip');
    await writeFile(pack, '');
    await truncate(pack, 32 * 1024 * 1024 + 1);
    expect(usageError(await rgs(['verify-pack', pack, '--keys', small]))).to.equal(
      `rgs verify-pack: the pack ${pack} is larger than ${32 * 1024 * 1024} bytes: not a dispute pack`,
    );
  });
});
