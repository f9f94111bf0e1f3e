import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDiceProof } from '../../../src/shared/domain/proof.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';

// `rgs verify` (contract 2.11, DECISIONS D2, D11): checks a proof offline, as a player or an
// operator's auditor would, run as the real subprocess. The verdict goes to stdout with exit
// 0 (valid) or 1 (invalid); a proof that cannot be read is a usage error: exit 2, one line
// and a hint on stderr. No database is involved: DATABASE_URL points at nothing.

// the openssl vector of test/unit/dice.test.ts: player-seed:0 under SEED is LOW, face 1
const SEED = '1c27fcee55035c1c8c5b0514d102bbfbf16f7eafa981cb8523c654bd16747f6f';
const PROOF = buildDiceProof({
  roundId: '6f1c1f4e-2b7d-4c57-9a43-0d3f3f9f7c11',
  gameCode: 'dice',
  sessionId: '0b0a6a52-8f7c-4b0e-a4f5-1d8e5a0f2c3d',
  serverSeed: SEED,
  serverSeedHash: 'bb49e4ba664572a73dad36d55a287328da63c9ffa8bd260658e3c982461e3466',
  clientSeed: 'player-seed',
  nonce: 0,
  lowWeight: 1n,
  highWeight: 1n,
  diceValues: [1],
  outcomeSum: 1,
  outcomeSide: 'LOW',
});

const rgs = (args: string[], stdin = '') =>
  runRgs(args, { env: { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/nowhere', REDIS_URL: 'redis://127.0.0.1:1' }, stdin });

function verdict(result: CliResult, code: 0 | 1) {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(code);
  expect(result.stderr).to.equal('');
  const body = JSON.parse(result.stdout);
  expect(body.valid).to.equal(code === 0);
  return { ...body, failing: (body.checks as { name: string; ok: boolean }[]).filter((c) => !c.ok).map((c) => c.name) };
}

// a usage error is for the person typing: one line naming the command, then a hint
function usageError(result: CliResult): { message: string } {
  expect(result.code, `${result.stderr}${result.stdout}`).to.equal(2);
  expect(result.stdout).to.equal('');
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).to.have.length(2);
  expect(lines[0]).to.match(/^rgs verify: \S/);
  expect(lines[1]).to.equal("Run 'rgs verify --help' for usage.");
  return { message: lines[0]! };
}

describe('rgs verify (contract 2.11, D2)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rgs-verify-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const file = async (name: string, content: string) => {
    const path = join(dir, name);
    await writeFile(path, content);
    return path;
  };

  it('a valid proof in a file: exit 0, {valid: true, checks, derived} on stdout', async () => {
    const result = verdict(await rgs(['verify', '--proof', await file('valid.json', JSON.stringify(PROOF))]), 0);
    expect(result.failing).to.deep.equal([]);
    expect(result.checks.map((c: { name: string }) => c.name)).to.include.members(['server_seed_hash', 'dice_values', 'outcome_sum', 'outcome_side']);
    expect(result.derived).to.include({ side: 'LOW', face: 1, hmacHex: '1e8c732da28131e3e84a14166e023fe319843c79d95514fa77565c86fbb00d29' });
  });

  it('reads the proof from stdin with --proof - and without --proof', async () => {
    verdict(await rgs(['verify', '--proof', '-'], JSON.stringify(PROOF)), 0);
    verdict(await rgs(['verify'], JSON.stringify(PROOF, null, 2)), 0);
  });

  it('a tampered proof: exit 1, {valid: false} on stdout naming the failing check', async () => {
    const flipped = { ...PROOF, outcome: { ...PROOF.outcome, outcomeSide: 'HIGH' } };
    const fromFile = verdict(await rgs(['verify', '--proof', await file('flipped.json', JSON.stringify(flipped))]), 1);
    expect(fromFile.failing).to.deep.equal(['outcome_side']);

    const otherHash = { ...PROOF, serverSeedHash: '0'.repeat(64) };
    const fromStdin = verdict(await rgs(['verify'], JSON.stringify(otherHash)), 1);
    expect(fromStdin.failing).to.deep.equal(['server_seed_hash']);

    const shapeless = verdict(await rgs(['verify'], '{"roundId": 1}'), 1);
    expect(shapeless.failing).to.deep.equal(['shape']);
  });

  it('a proof that cannot be read is a usage error: exit 2, one line and a hint on stderr', async () => {
    usageError(await rgs(['verify', '--proof', await file('garbage.json', 'this is not { json')]));
    usageError(await rgs(['verify'], ''));
    const missing = usageError(await rgs(['verify', '--proof', join(dir, 'no-such-file.json')]));
    expect(missing.message).to.contain('no-such-file.json');
    usageError(await rgs(['verify', '--proof', await file('ok.json', JSON.stringify(PROOF)), '--unknown']));
  });
});
