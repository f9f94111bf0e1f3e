import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { zipSync, unzipSync } from 'fflate';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { operatorWith, seatPlayer, tableWithBets, tick, until, ROLES_WITHOUT_CLOCK, TABLE_STAKE_MICRO } from '../../support/game.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { runRgs, type CliResult } from '../../support/rgs-cli.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { PACK_KEY, currentSigningKey } from '../../../src/shared/platform/signing-keys.js';
import { jsonBytes } from '../../../src/shared/domain/dispute-pack.js';

// D32: GET /v1/rounds/{roundId}/dispute-pack answers a signed ZIP for a finished round of the
// caller (settled, voided, or the roundId of a bet the wallet refused, D22); `rgs verify-pack`
// checks it offline against GET /v1/keys, or a saved copy, and names the check that fails
// when anything in it changes. Through the real flow: players bet over Socket.IO, the test
// moves the clock, the simulator is the wallet.

const FUNDS = 10_000_000n;
const PACK_FILES = ['manifest.json', 'manifest.sig', 'round.json', 'bets.json', 'wallet-calls.json', 'proof.json', 'par-sheet.json'];

type Report = { valid: boolean; roundId: string | null; signingKeyId: string | null; checks: { name: string; ok: boolean; detail?: unknown }[] };

describe('the dispute pack (D32)', function () {
  this.timeout(120_000);
  let h: Harness;
  let operator: TestOperator;
  let table: Awaited<ReturnType<typeof tableWithBets>>;
  let dir: string;
  let keysFile: string;
  const won = () => table.roundIds[0]!;
  const voided = () => table.roundIds[1]!;
  // packs saved before the rotation, to verify after it
  const saved = new Map<string, string>();

  const rgs = (...args: string[]) => runRgs(args, { env: { DATABASE_URL: TEST_DATABASE_URL }, timeoutMs: 30_000 });
  const report = (result: CliResult): Report => JSON.parse(result.stdout) as Report;
  const failedChecks = (result: CliResult) => report(result).checks.filter((c) => !c.ok).map((c) => c.name);

  const pack = async (roundId: string, as = operator) => {
    const response = await as.request('GET', `/v1/rounds/${roundId}/dispute-pack`);
    expect(response.status, response.text).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('application/zip');
    return response.bytes;
  };
  const save = async (name: string, bytes: Uint8Array) => {
    const file = path.join(dir, name);
    await writeFile(file, bytes);
    return file;
  };
  const json = (files: Record<string, Uint8Array>, name: string) => JSON.parse(Buffer.from(files[name]!).toString('utf8'));

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rgs-packs-'));
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
    // LOW always wins; two players bet LOW; the second one's session is terminated while
    // betting is open (its round is voided before any outcome), the first one's settles
    operator = await operatorWith(h, { bettingWindowMs: 60_000, lowWeight: 1n, highWeight: 0n });
    table = await tableWithBets(h, operator, 2, FUNDS);
  });
  after(async () => {
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('409 round_not_settled while the round is played; 404 round_not_found for an unknown, malformed or foreign round', async () => {
    const live = await operator.request('GET', `/v1/rounds/${won()}/dispute-pack`);
    expect(live.status, live.text).to.equal(409);
    expect(live.body.error).to.equal('round_not_settled');
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const unknown = await operator.request('GET', `/v1/rounds/${id}/dispute-pack`);
      expect(unknown.status, unknown.text).to.equal(404);
      expect(unknown.body.error).to.equal('round_not_found');
    }
    const stranger = await h.onboard();
    const foreign = await stranger.request('GET', `/v1/rounds/${won()}/dispute-pack`);
    expect(foreign.status, foreign.text).to.equal(404);
    expect(foreign.body.error).to.equal('round_not_found');

    // the table plays on: the second session ends in betting (voided), the first round settles
    expect((await operator.request('POST', `/v1/session/${table.seats[1]!.sessionId}/terminate`)).status).to.equal(200);
    await tick(h, { cycleId: table.cycleId, from: 'BETTING_OPEN' });
    await tick(h, { cycleId: table.cycleId, from: 'ROLLING' });
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
  });

  it('GET /v1/keys: the JWKS of the pack keys, unsigned, each with the times that bound what it signs', async () => {
    const response = await fetch(`${h.baseUrl}/v1/keys`);
    expect(response.status).to.equal(200);
    const jwks = (await response.json()) as { keys: Record<string, string>[] };
    const current = await h.svc.db.signingKey.findFirstOrThrow({ where: { purpose: 'pack', retiredAt: null } });
    expect(jwks.keys).to.deep.include({
      kty: 'OKP',
      crv: 'Ed25519',
      kid: current.kid,
      x: current.publicKey,
      use: 'sig',
      alg: 'EdDSA',
      createdAt: current.createdAt.toISOString(),
      retiredAt: null,
      revokedAt: null,
    });
    keysFile = await save('keys.json', Buffer.from(JSON.stringify(jwks)));
  });

  it('a settled round whose seed is still in use: the pack verifies, its proof not yet revealed', async () => {
    const file = await save('settled-unrevealed.zip', await pack(won()));
    const result = await rgs('verify-pack', file, '--keys', keysFile);
    expect(result.code, result.stdout + result.stderr).to.equal(0);
    const proof = report(result).checks.find((c) => c.name === 'proof')!;
    expect(proof.detail).to.match(/^seed_not_revealed/);
  });

  it('a settled round, seed revealed: the files are the round, its bet, its wallet calls as sent and received, the proof and the par sheet', async () => {
    expect((await operator.request('POST', `/v1/session/${table.seats[0]!.sessionId}/terminate`)).status).to.equal(200);
    const bytes = await pack(won());
    const files = unzipSync(bytes);
    expect(Object.keys(files)).to.have.members(PACK_FILES);

    const detail = await operator.request('GET', `/v1/rounds/${won()}`);
    expect(json(files, 'round.json')).to.deep.equal(detail.body);
    expect(json(files, 'bets.json')).to.deep.equal(detail.body.bets);
    const manifest = json(files, 'manifest.json');
    expect(manifest).to.include({ packVersion: 1, roundId: won(), operatorId: operator.operatorId });
    expect(manifest.files.map((f: { name: string }) => f.name)).to.deep.equal(PACK_FILES.slice(2));

    // every call of the round with both bodies; the bodies are what the simulator saw and said
    const calls = json(files, 'wallet-calls.json') as { endpoint: string; requestUuid: string; requestBody: string; responseBody: string }[];
    expect(calls.map((c) => c.endpoint)).to.deep.equal(['bet', 'win']);
    for (const call of calls) {
      const seen = h.wallet.requests.find((r) => (r.body as { requestUuid?: string }).requestUuid === call.requestUuid)!;
      expect(JSON.parse(call.requestBody)).to.deep.equal(seen.body);
      expect(JSON.parse(call.responseBody)).to.include({ status: 'RS_OK', requestUuid: call.requestUuid });
      expect(call.requestBody).to.not.match(/signature/i);
    }
    const win = JSON.parse(calls[1]!.requestBody);
    // contract 8.4: 1.00 at x2 less 3 %
    expect(win.amountMicro).to.equal(((TABLE_STAKE_MICRO * 2n * 97n) / 100n).toString());

    expect(json(files, 'proof.json')).to.deep.equal((await operator.request('GET', `/v1/rounds/${won()}/proof`)).body);
    expect(json(files, 'par-sheet.json')).to.deep.equal({
      gameCode: 'dice',
      lowWeight: '1',
      highWeight: '0',
      payoutMultiplier: '2',
      commissionMicro: '3000',
      rtp: { LOW: { fraction: '97/50', decimal: '1.940000' }, HIGH: { fraction: '0/1', decimal: '0.000000' } },
      // D46: how the win was booked, in the round's currency
      payoutRounding: 'exact',
      currency: 'EUR',
    });

    const file = await save('settled.zip', bytes);
    saved.set('settled', file);
    const result = await rgs('verify-pack', file, '--keys', keysFile);
    expect(result.code, result.stdout + result.stderr).to.equal(0);
    const checks = report(result).checks;
    expect(checks.every((c) => c.ok)).to.equal(true);
    expect(checks.find((c) => c.name === 'proof')).to.deep.equal({ name: 'proof', ok: true });
    expect(checks.find((c) => c.name === 'payout')!.detail).to.include({ outcomeSide: 'LOW', outcomeProven: true, won: true, expected: win.amountMicro });
  });

  it('one byte changed in any file, a signature by another key, an unknown key: exit 1, the failing check named', async () => {
    const files = unzipSync(await pack(won()));
    const expected: Record<string, string> = { 'manifest.json': 'signature', 'manifest.sig': 'signature' };
    for (const name of PACK_FILES.slice(2)) expected[name] = `sha256:${name}`;
    for (const name of PACK_FILES) {
      const changed = { ...files, [name]: new Uint8Array(files[name]!) };
      changed[name]![Math.floor(changed[name]!.length / 2)]! ^= 0x01;
      const result = await rgs('verify-pack', await save(`changed-${name}.zip`, zipSync(changed)), '--keys', keysFile);
      expect(result.code, `${name}: ${result.stdout}${result.stderr}`).to.equal(1);
      expect(failedChecks(result), name).to.include(expected[name]);
    }

    // another key's signature of the same manifest: valid base64, wrong key
    const { generateKeyPairSync, sign } = await import('node:crypto');
    const other = generateKeyPairSync('ed25519');
    const forged = { ...files, 'manifest.sig': new Uint8Array(Buffer.from(sign(null, files['manifest.json']!, other.privateKey).toString('base64'))) };
    const wrongSignature = await rgs('verify-pack', await save('forged.zip', zipSync(forged)), '--keys', keysFile);
    expect(wrongSignature.code).to.equal(1);
    expect(failedChecks(wrongSignature)).to.deep.equal(['signature']);

    const strangerKeys = await save('stranger-keys.json', Buffer.from(JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', kid: 'pk_stranger', x: other.publicKey.export({ format: 'jwk' }).x, use: 'sig', alg: 'EdDSA' }] })));
    const unknownKey = await rgs('verify-pack', saved.get('settled')!, '--keys', strangerKeys);
    expect(unknownKey.code).to.equal(1);
    expect(failedChecks(unknownKey)).to.include('signing_key');

    const notZip = await rgs('verify-pack', keysFile, '--keys', keysFile);
    expect(notZip.code).to.equal(1);
    expect(failedChecks(notZip)).to.deep.equal(['archive']);
    // no keys named: a usage error, not a verdict
    expect((await rgs('verify-pack', saved.get('settled')!)).code).to.equal(2);
  });

  it('a round voided before its outcome: a pack with no outcome to prove and nothing paid, verified against the /v1/keys URL', async () => {
    const bytes = await pack(voided());
    const files = unzipSync(bytes);
    expect(json(files, 'round.json')).to.include({ state: 'VOIDED', voidReason: 'session_terminated', totalPayoutsMicro: '0' });
    expect(json(files, 'proof.json')).to.include({ proofStatus: 'no_outcome' });
    expect((json(files, 'wallet-calls.json') as { endpoint: string }[]).map((c) => c.endpoint)).to.deep.equal(['bet', 'rollback']);
    const file = await save('voided.zip', bytes);
    saved.set('voided', file);
    const result = await rgs('verify-pack', file, '--keys', `${h.baseUrl}/v1/keys`);
    expect(result.code, result.stdout + result.stderr).to.equal(0);
  });

  it('the roundId of a bet the wallet refused (D22): a pack of a round voided for bet_rejected', async () => {
    const refusing = await operatorWith(h, { bettingWindowMs: 60_000 });
    const seat = await seatPlayer(h, refusing, FUNDS);
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: refusing.operatorId, gameCode: 'dice', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    h.wallet.setFault('bet', { kind: 'status', status: 'RS_ERROR_NOT_ENOUGH_MONEY' }, 1);
    const ack = await seat.player.request('place_bet', { side: 'LOW', amountMicro: TABLE_STAKE_MICRO.toString() }, 8000);
    expect(ack.ok, JSON.stringify(ack)).to.equal(false);
    const bet = await until('the refused bet', () => h.svc.db.bet.findFirst({ where: { sessionId: seat.sessionId, status: 'REJECTED' } }));
    await waitForQuiescence(h.svc.db, { operatorIds: [refusing.operatorId], timeoutMs: 20_000 });

    const files = unzipSync(await pack(bet.roundId, refusing));
    expect(json(files, 'round.json')).to.deep.equal((await refusing.request('GET', `/v1/rounds/${bet.roundId}`)).body);
    expect(json(files, 'round.json')).to.include({ state: 'VOIDED', voidReason: 'bet_rejected' });
    const [debit] = json(files, 'wallet-calls.json') as { endpoint: string; responseBody: string }[];
    expect(JSON.parse(debit!.responseBody).status).to.equal('RS_ERROR_NOT_ENOUGH_MONEY');
    const result = await rgs('verify-pack', await save('rejected.zip', await pack(bet.roundId, refusing)), '--keys', keysFile);
    expect(result.code, result.stdout + result.stderr).to.equal(0);
  });

  it('a pack with a second, unsigned round.json is refused: exit 1, the archive check names the duplicate', async () => {
    // a forged round.json first, under a name of the same length renamed in its local header
    // and in the directory, then the signed pack: a reader that keeps the last copy checks the
    // signed one, a person who unzips the pack may be shown the forged one
    const forged = { 'round.jsoX': new Uint8Array(Buffer.from('{"forged":true}\n')) };
    const both = Buffer.from(zipSync({ ...forged, ...unzipSync(await pack(won())) }, { level: 0 }));
    for (let at = both.indexOf('round.jsoX'); at >= 0; at = both.indexOf('round.jsoX')) both.write('round.json', at, 'latin1');
    const result = await rgs('verify-pack', await save('duplicate.zip', both), '--keys', keysFile);
    expect(result.code, result.stdout + result.stderr).to.equal(1);
    expect(report(result).checks).to.deep.equal([{ name: 'archive', ok: false, detail: 'the archive holds entry round.json more than once' }]);
  });

  // the pack key before the rotation, as a thief would hold it
  let leaked: Awaited<ReturnType<typeof currentSigningKey>>;
  // a pack re-signed by the leaked key, naming it and keeping its creation time
  const resignedBy = async (key: typeof leaked, bytes: Uint8Array) => {
    const files = unzipSync(bytes);
    const manifest = { ...json(files, 'manifest.json'), signingKeyId: key.kid };
    const manifestBytes = jsonBytes(manifest);
    const { sign } = await import('node:crypto');
    const signature = sign(null, manifestBytes, key.privateKey).toString('base64');
    return { manifest, zip: zipSync({ ...files, 'manifest.json': new Uint8Array(manifestBytes), 'manifest.sig': new Uint8Array(Buffer.from(signature)) }) };
  };

  it('rgs signing-key rotate: new packs name the new key; packs signed before still verify against /v1/keys', async () => {
    const before = await h.svc.db.signingKey.findFirstOrThrow({ where: { purpose: 'pack', retiredAt: null } });
    leaked = await currentSigningKey(h.svc.sql, h.svc.config.masterKey, PACK_KEY);
    expect(leaked.kid).to.equal(before.kid);
    const rotated = await rgs('signing-key', 'rotate');
    expect(rotated.code, rotated.stderr).to.equal(0);
    const answer = JSON.parse(rotated.stdout);
    expect(answer).to.include({ purpose: 'pack', retiredKid: before.kid });
    expect(answer.kid).to.not.equal(before.kid);

    const fresh = json(unzipSync(await pack(won())), 'manifest.json');
    expect(fresh.signingKeyId).to.equal(answer.kid);
    const jwks = (await (await fetch(`${h.baseUrl}/v1/keys`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).to.include.members([before.kid, answer.kid]);
    for (const file of [saved.get('settled')!, saved.get('voided')!]) {
      const result = await rgs('verify-pack', file, '--keys', `${h.baseUrl}/v1/keys`);
      expect(result.code, result.stdout + result.stderr).to.equal(0);
      expect(report(result).signingKeyId).to.equal(before.kid);
    }
  });

  it('a pack made after the rotation and signed with the retired key is refused, the key published with its retiredAt', async () => {
    const retired = await h.svc.db.signingKey.findUniqueOrThrow({ where: { kid: leaked.kid } });
    const jwks = (await (await fetch(`${h.baseUrl}/v1/keys`)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys.find((k) => k.kid === leaked.kid)).to.include({ retiredAt: retired.retiredAt!.toISOString(), revokedAt: null });

    const { manifest, zip } = await resignedBy(leaked, await pack(won()));
    expect(Date.parse(manifest.createdAt)).to.be.at.least(retired.retiredAt!.getTime());
    const result = await rgs('verify-pack', await save('signed-after-retirement.zip', zip), '--keys', `${h.baseUrl}/v1/keys`);
    expect(result.code, result.stdout + result.stderr).to.equal(1);
    expect(failedChecks(result)).to.deep.equal(['signing_key']);
    expect(report(result).checks.find((c) => c.name === 'signing_key')!.detail).to.equal(
      `the pack says it was made at ${manifest.createdAt}, after key ${leaked.kid} was retired (${retired.retiredAt!.toISOString()}): a retired key signs no new pack`,
    );
  });

  it('rgs signing-key revoke: every pack the key signed is refused, even one made before; revoking the current key makes a new one', async () => {
    const revoked = await rgs('signing-key', 'revoke', '--kid', leaked.kid);
    expect(revoked.code, revoked.stderr).to.equal(0);
    const answer = JSON.parse(revoked.stdout);
    const row = await h.svc.db.signingKey.findUniqueOrThrow({ where: { kid: leaked.kid } });
    expect(answer).to.deep.equal({ purpose: 'pack', revokedKid: leaked.kid, revokedAt: row.revokedAt!.toISOString(), retiredAt: row.retiredAt!.toISOString(), kid: null });
    const jwks = (await (await fetch(`${h.baseUrl}/v1/keys`)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys.find((k) => k.kid === leaked.kid)).to.include({ revokedAt: row.revokedAt!.toISOString() });

    // made before the rotation, and verified after it until now
    const before = await rgs('verify-pack', saved.get('settled')!, '--keys', `${h.baseUrl}/v1/keys`);
    expect(before.code, before.stdout + before.stderr).to.equal(1);
    expect(failedChecks(before)).to.deep.equal(['signing_key']);
    expect(report(before).checks.find((c) => c.name === 'signing_key')!.detail).to.equal(
      `key ${leaked.kid} was revoked at ${row.revokedAt!.toISOString()}: no pack signed by it is valid, whatever its date`,
    );

    // the current key: revoked and replaced at once; new packs name the new key and verify
    const current = await h.svc.db.signingKey.findFirstOrThrow({ where: { purpose: 'pack', retiredAt: null } });
    const replaced = JSON.parse((await rgs('signing-key', 'revoke', '--kid', current.kid)).stdout);
    expect(replaced).to.include({ purpose: 'pack', revokedKid: current.kid });
    expect(replaced.kid).to.match(/^pk_/).and.not.equal(current.kid);
    const fresh = await save('after-revoke.zip', await pack(won()));
    const verified = await rgs('verify-pack', fresh, '--keys', `${h.baseUrl}/v1/keys`);
    expect(verified.code, verified.stdout + verified.stderr).to.equal(0);
    expect(report(verified).signingKeyId).to.equal(replaced.kid);

    const unknown = await rgs('signing-key', 'revoke', '--kid', 'pk_000000000000000000000000');
    expect(unknown.code).to.equal(1);
    expect(JSON.parse(unknown.stderr)).to.deep.equal({ error: 'SigningKeyNotFoundError', message: 'there is no pack signing key pk_000000000000000000000000' });
  });
});
