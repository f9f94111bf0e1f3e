import { expect } from 'chai';
import { createHash, generateKeyPairSync, randomUUID, sign, verify } from 'node:crypto';
import { deriveDice } from '../../src/shared/domain/dice.js';
import {
  MANIFEST,
  MANIFEST_SIGNATURE,
  PACK_FILES,
  jsonBytes,
  publicJwk,
  signedPack,
  verifyPack,
  type Jwks,
  type KeyValidity,
  type PackContent,
} from '../../src/shared/domain/dispute-pack.js';
import { parSheet } from '../../src/shared/domain/par-sheet.js';
import { buildDiceProof } from '../../src/shared/domain/proof.js';
import { generateClientSeed, generateServerSeed, serverSeedHash } from '../../src/shared/domain/seeds.js';

// The dispute pack's pure parts (D32): the manifest lists each file's SHA-256 and is signed
// with Ed25519; verifyPack checks the hashes, the signature under a published key and the
// content (proof, par sheet, payout), and names the check that fails.

// a key made before the packs of these tests, current unless told otherwise
function keyPair(kid: string, validity: Partial<KeyValidity> = {}) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const dates = { createdAt: '2026-11-01T00:00:00.000Z', retiredAt: null, revokedAt: null, ...validity };
  return { kid, privateKey, jwk: publicJwk(kid, publicKey.export({ format: 'jwk' }).x!, dates) };
}

// a settled round whose one LOW bet of 1.00 won or lost as the seed says
function settledContent(roundId: string): PackContent {
  const serverSeed = generateServerSeed();
  const clientSeed = generateClientSeed();
  const dice = deriveDice({ serverSeed, clientSeed, nonce: 3, lowWeight: 1n, highWeight: 1n });
  const won = dice.side === 'LOW';
  const payoutMicro = won ? '1940000' : '0';
  const bet = { betId: randomUUID(), status: 'SETTLED', side: 'LOW', amountMicro: '1000000', isFree: false, payoutMicro };
  return {
    'round.json': { roundId, state: 'SETTLED', outcomeSide: dice.side, outcomeSum: dice.outcomeSum, totalBetsMicro: '1000000', totalPayoutsMicro: payoutMicro, bets: [bet] },
    'bets.json': [bet],
    'wallet-calls.json': won ? [{ endpoint: 'win', requestBody: JSON.stringify({ amountMicro: payoutMicro }), responseBody: '{"status":"RS_OK"}' }] : [],
    'proof.json': buildDiceProof({
      roundId,
      gameCode: 'dice',
      sessionId: randomUUID(),
      serverSeed,
      serverSeedHash: serverSeedHash(serverSeed),
      clientSeed,
      nonce: 3,
      lowWeight: 1n,
      highWeight: 1n,
      diceValues: dice.diceValues,
      outcomeSum: dice.outcomeSum,
      outcomeSide: dice.side,
    }),
    'par-sheet.json': parSheet({ gameCode: 'dice', lowWeight: 1n, highWeight: 1n, payoutMultiplierScaled: 200000n, commissionMicro: 3000n }),
  };
}

const asMap = (files: { name: string; bytes: Buffer }[]) => new Map(files.map(({ name, bytes }) => [name, new Uint8Array(bytes)]));
const failed = (verdict: ReturnType<typeof verifyPack>) => verdict.checks.filter((c) => !c.ok).map((c) => c.name);

describe('the dispute pack: manifest, signature and verification (D32)', () => {
  const key = keyPair('pk_test');
  const jwks: Jwks = { keys: [key.jwk] };
  const roundId = randomUUID();
  const createdAt = new Date('2026-11-27T10:00:00.000Z');
  const pack = signedPack({ roundId, operatorId: 'op-1', createdAt }, settledContent(roundId), key);

  it('lists every file with the SHA-256 of its bytes, in the order of D32', () => {
    expect(pack.files.map((f) => f.name)).to.deep.equal([MANIFEST, MANIFEST_SIGNATURE, ...PACK_FILES]);
    expect(pack.manifest).to.deep.equal({
      packVersion: 1,
      roundId,
      operatorId: 'op-1',
      createdAt: createdAt.toISOString(),
      signingKeyId: 'pk_test',
      files: pack.files.slice(2).map(({ name, bytes }) => ({ name, sha256: createHash('sha256').update(bytes).digest('hex') })),
    });
    expect(pack.files[0]!.bytes.equals(jsonBytes(pack.manifest))).to.equal(true);
    expect(pack.files.every(({ name, bytes }) => name === MANIFEST_SIGNATURE || bytes.toString('utf8').endsWith('}\n') || bytes.toString('utf8').endsWith(']\n'))).to.equal(true);
  });

  it('signs the manifest bytes with Ed25519, base64', () => {
    const signature = Buffer.from(pack.files[1]!.bytes.toString('utf8'), 'base64');
    expect(signature).to.have.length(64);
    const publicKey = { key: { kty: 'OKP', crv: 'Ed25519', x: key.jwk.x }, format: 'jwk' } as const;
    expect(verify(null, pack.files[0]!.bytes, publicKey, signature)).to.equal(true);
  });

  it('verifies: every check holds', () => {
    const verdict = verifyPack(asMap(pack.files), jwks);
    expect(failed(verdict)).to.deep.equal([]);
    expect(verdict.valid).to.equal(true);
    expect(verdict.roundId).to.equal(roundId);
    expect(verdict.checks.map((c) => c.name)).to.include.members(['manifest', 'signing_key', 'signature', 'proof', 'proof_matches_round', 'par_sheet', 'payout']);
  });

  it('names the check that fails when one byte of any file changes', () => {
    const expected: Record<string, string> = { [MANIFEST]: 'signature', [MANIFEST_SIGNATURE]: 'signature' };
    for (const name of PACK_FILES) expected[name] = `sha256:${name}`;
    for (const { name } of pack.files) {
      const files = asMap(pack.files);
      const bytes = new Uint8Array(files.get(name)!);
      bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
      files.set(name, bytes);
      const verdict = verifyPack(files, jwks);
      expect(verdict.valid, name).to.equal(false);
      expect(failed(verdict), name).to.include(expected[name]);
    }
  });

  it('fails on a key it does not know, and on a signature by another key', () => {
    expect(failed(verifyPack(asMap(pack.files), { keys: [keyPair('pk_other').jwk] }))).to.include.members(['signing_key', 'signature']);
    const files = asMap(pack.files);
    const forged = sign(null, files.get(MANIFEST)!, keyPair('pk_test').privateKey).toString('base64');
    files.set(MANIFEST_SIGNATURE, new Uint8Array(Buffer.from(forged)));
    expect(failed(verifyPack(files, jwks))).to.deep.equal(['signature']);
  });

  it('fails on a missing or an unlisted file', () => {
    const missing = asMap(pack.files);
    missing.delete('proof.json');
    expect(failed(verifyPack(missing, jwks))).to.include('sha256:proof.json');
    const extra = asMap(pack.files);
    extra.set('notes.txt', new Uint8Array(Buffer.from('hello')));
    expect(failed(verifyPack(extra, jwks))).to.deep.equal(['archive_entries']);
  });

  it('recomputes the content: a signed pack with a wrong payout, par sheet or outcome fails that check', () => {
    const content = settledContent(roundId);
    const round = content['round.json'] as Record<string, unknown>;
    const bet = { ...(content['bets.json'] as Record<string, unknown>[])[0]!, payoutMicro: '1940001' };
    const wrongPayout = signedPack({ roundId, operatorId: 'op-1', createdAt }, { ...content, 'bets.json': [bet] }, key);
    expect(failed(verifyPack(asMap(wrongPayout.files), jwks))).to.include('payout');

    const sheet = { ...(content['par-sheet.json'] as Record<string, unknown>), commissionMicro: '0' };
    const wrongSheet = signedPack({ roundId, operatorId: 'op-1', createdAt }, { ...content, 'par-sheet.json': sheet }, key);
    expect(failed(verifyPack(asMap(wrongSheet.files), jwks))).to.include('par_sheet');

    const flipped = { ...round, outcomeSide: round.outcomeSide === 'LOW' ? 'HIGH' : 'LOW' };
    const wrongOutcome = signedPack({ roundId, operatorId: 'op-1', createdAt }, { ...content, 'round.json': flipped }, key);
    expect(failed(verifyPack(asMap(wrongOutcome.files), jwks))).to.include('proof_matches_round');
  });

  it('a minor_unit configuration (D46): the payout is checked as booked, in whole minor units', () => {
    // a won LOW bet of 12.3456 EUR pays 23.95047 (1.94 times, its commission rounded up), booked
    // 23.95 under minor_unit
    let content: PackContent;
    do content = settledContent(randomUUID());
    while ((content['round.json'] as { outcomeSide: string }).outcomeSide !== 'LOW');
    const bet = { ...(content['bets.json'] as Record<string, unknown>[])[0]!, amountMicro: '1234560', payoutMicro: '2395000' };
    const rounded = (sheetRounding: string, paid: string) => ({
      ...content,
      'round.json': { ...(content['round.json'] as object), totalBetsMicro: '1234560', totalPayoutsMicro: paid, bets: [{ ...bet, payoutMicro: paid }] },
      'bets.json': [{ ...bet, payoutMicro: paid }],
      'wallet-calls.json': [{ endpoint: 'win', requestBody: JSON.stringify({ amountMicro: paid }), responseBody: '{"status":"RS_OK"}' }],
      'par-sheet.json': { ...(content['par-sheet.json'] as object), payoutRounding: sheetRounding, currency: 'EUR' },
    });
    const packRoundId = (content['round.json'] as { roundId: string }).roundId;
    const verdict = (c: PackContent) => failed(verifyPack(asMap(signedPack({ roundId: packRoundId, operatorId: 'op-1', createdAt }, c, key).files), jwks));
    expect(verdict(rounded('minor_unit', '2395000'))).to.deep.equal([]);
    expect(verdict(rounded('exact', '2395047'))).to.deep.equal([]);
    expect(verdict(rounded('minor_unit', '2395047'))).to.include('payout');
  });

  it('a seed not yet revealed: the hashes and the signature hold, the outcome is not recomputed', () => {
    const content = settledContent(roundId);
    const proof = content['proof.json'] as { serverSeedHash: string };
    const unrevealed = signedPack(
      { roundId, operatorId: 'op-1', createdAt },
      { ...content, 'proof.json': { serverSeedHash: proof.serverSeedHash, proofStatus: 'seed_not_revealed' } },
      key,
    );
    const verdict = verifyPack(asMap(unrevealed.files), jwks);
    expect(failed(verdict)).to.deep.equal([]);
    expect(verdict.checks.find((c) => c.name === 'proof')!.detail).to.match(/^seed_not_revealed/);
  });

  describe('the key was valid when the pack was made (D32)', () => {
    const at = (iso: string) => signedPack({ roundId, operatorId: 'op-1', createdAt: new Date(iso) }, settledContent(roundId), key);
    const under = (validity: Partial<KeyValidity>) => ({ keys: [{ ...key.jwk, ...validity }] });
    const signingKey = (verdict: ReturnType<typeof verifyPack>) => verdict.checks.find((c) => c.name === 'signing_key')!;

    it('a retired key: a pack made before its retirement verifies; one made at or after it is refused, its signature still checked', () => {
      const retired = under({ retiredAt: '2026-11-27T12:00:00.000Z' });
      expect(failed(verifyPack(asMap(at('2026-11-27T11:59:59.999Z').files), retired))).to.deep.equal([]);
      for (const when of ['2026-11-27T12:00:00.000Z', '2026-11-28T09:00:00.000Z']) {
        const verdict = verifyPack(asMap(at(when).files), retired);
        expect(verdict.valid, when).to.equal(false);
        expect(failed(verdict), when).to.deep.equal(['signing_key']);
        expect(signingKey(verdict).detail).to.equal(
          `the pack says it was made at ${when}, after key pk_test was retired (2026-11-27T12:00:00.000Z): a retired key signs no new pack`,
        );
      }
    });

    it('a pack that says it was made before its key existed is refused', () => {
      const verdict = verifyPack(asMap(at('2026-10-31T23:59:59.999Z').files), jwks);
      expect(failed(verdict)).to.deep.equal(['signing_key']);
      expect(signingKey(verdict).detail).to.match(/before key pk_test existed \(2026-11-01T00:00:00\.000Z\)$/);
    });

    it('a revoked key: every pack it signed is refused, whatever its date', () => {
      const revoked = under({ retiredAt: '2026-11-27T12:00:00.000Z', revokedAt: '2026-11-28T08:00:00.000Z' });
      for (const when of ['2026-11-02T00:00:00.000Z', '2026-11-28T09:00:00.000Z']) {
        const verdict = verifyPack(asMap(at(when).files), revoked);
        expect(failed(verdict), when).to.deep.equal(['signing_key']);
        expect(signingKey(verdict).detail).to.equal('key pk_test was revoked at 2026-11-28T08:00:00.000Z: no pack signed by it is valid, whatever its date');
      }
    });

    it('keys that do not say when they were valid (a JWKS without the dates, or with malformed ones) verify nothing', () => {
      const { createdAt: _c, retiredAt: _r, revokedAt: _v, ...bare } = key.jwk;
      for (const keys of [[bare], [{ ...key.jwk, createdAt: 'yesterday' }], [{ ...key.jwk, retiredAt: 17 }]]) {
        const verdict = verifyPack(asMap(pack.files), { keys } as unknown as Jwks);
        expect(failed(verdict), JSON.stringify(keys)).to.deep.equal(['signing_key']);
        expect(signingKey(verdict).detail).to.match(/does not say when it was valid/);
      }
    });
  });
});
