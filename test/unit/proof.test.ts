import { expect } from 'chai';
import { buildDiceProof, verifyDiceProof, type ProofVerdict } from '../../src/shared/domain/proof.js';

// Round proofs (contract 2.11, DECISIONS D2, D19) and their offline verification. The
// fixture is the openssl vector of test/unit/dice.test.ts:
//   printf '%s' "$SEED" | sha256sum                                   -> SEED_HASH
//   printf '%s' 'player-seed:0' | openssl dgst -sha256 -hmac "$SEED"  -> 1e8c732d a28131e3 ...: LOW, face 1

const SEED = '1c27fcee55035c1c8c5b0514d102bbfbf16f7eafa981cb8523c654bd16747f6f';
const SEED_HASH = 'bb49e4ba664572a73dad36d55a287328da63c9ffa8bd260658e3c982461e3466';
const ROUND_ID = '6f1c1f4e-2b7d-4c57-9a43-0d3f3f9f7c11';
const SESSION_ID = '0b0a6a52-8f7c-4b0e-a4f5-1d8e5a0f2c3d';

const proof = () =>
  buildDiceProof({
    roundId: ROUND_ID,
    gameCode: 'dice',
    sessionId: SESSION_ID,
    serverSeed: SEED,
    serverSeedHash: SEED_HASH,
    clientSeed: 'player-seed',
    nonce: 0,
    lowWeight: 1n,
    highWeight: 1n,
    diceValues: [1],
    outcomeSum: 1,
    outcomeSide: 'LOW',
  });

// the proof as a verifier receives it: JSON text, parsed
const wire = (overrides: Record<string, unknown> = {}, outcome: Record<string, unknown> = {}) => {
  const body = JSON.parse(JSON.stringify(proof()));
  return { ...body, ...overrides, outcome: { ...body.outcome, ...outcome } };
};

const failing = (verdict: ProofVerdict) => verdict.checks.filter((check) => !check.ok).map((check) => check.name);

describe('round proof (contract 2.11, D2, D19)', () => {
  it('builds the 2.11 body with the D19 extras, weights as decimal strings', () => {
    expect(JSON.parse(JSON.stringify(proof()))).to.deep.equal({
      roundId: ROUND_ID,
      gameCode: 'dice',
      rngVersion: 'dice-hmac-sha256-v1',
      mathVersion: 'dice-1.0.0',
      serverSeed: SEED,
      serverSeedHash: SEED_HASH,
      clientSeed: 'player-seed',
      nonce: 0,
      outcome: { type: 'DICE', diceValues: [1], outcomeSum: 1, outcomeSide: 'LOW' },
      lowWeight: '1',
      highWeight: '1',
      sessionId: SESSION_ID,
    });
  });

  it('verifies a correct proof, every check passing, and shows the derivation', () => {
    const verdict = verifyDiceProof(wire());
    expect(verdict.valid).to.equal(true);
    expect(verdict.checks.map((check) => [check.name, check.ok])).to.deep.equal([
      ['shape', true],
      ['outcome_type', true],
      ['rng_version', true],
      ['math_version', true],
      ['server_seed_hash', true],
      ['dice_values', true],
      ['outcome_sum', true],
      ['outcome_side', true],
    ]);
    expect(verdict.derived).to.deep.equal({
      serverSeedHash: SEED_HASH,
      hmacHex: '1e8c732da28131e3e84a14166e023fe319843c79d95514fa77565c86fbb00d29',
      a: 0x1e8c732d,
      b: 0xa28131e3,
      side: 'LOW',
      face: 1,
      diceValues: [1],
      outcomeSum: 1,
    });
  });

  it('verifies a proof without the optional mathVersion and ignores unknown fields', () => {
    const { mathVersion: _omitted, ...body } = wire({ extra: 'ignored' });
    const verdict = verifyDiceProof(body);
    expect(verdict.valid).to.equal(true);
    expect(verdict.checks.map((check) => check.name)).to.not.include('math_version');
  });

  describe('tampering is detected and the failing check named', () => {
    const cases: [string, Record<string, unknown>, Record<string, unknown>, string[]][] = [
      // another seed: its hash is not the commitment, and it derives face 3
      ['serverSeed', { serverSeed: `${SEED.slice(0, -1)}e` }, {}, ['server_seed_hash', 'dice_values', 'outcome_sum']],
      ['serverSeedHash', { serverSeedHash: `${SEED_HASH.slice(0, -1)}7` }, {}, ['server_seed_hash']],
      // player-seee:0 derives HIGH 5
      ['clientSeed', { clientSeed: 'player-seee' }, {}, ['dice_values', 'outcome_sum', 'outcome_side']],
      // player-seed:1 derives HIGH 5
      ['nonce', { nonce: 1 }, {}, ['dice_values', 'outcome_sum', 'outcome_side']],
      // lowWeight 0 forces HIGH, with the same b: face 4
      ['lowWeight', { lowWeight: '0' }, {}, ['dice_values', 'outcome_sum', 'outcome_side']],
      // a = 512521005: a * (1 + 7) < 2^32 stays LOW, a * (1 + 8) >= 2^32 turns HIGH, face 4
      ['highWeight 7: just below the boundary, still LOW, still valid', { highWeight: '7' }, {}, []],
      ['highWeight', { highWeight: '8' }, {}, ['dice_values', 'outcome_sum', 'outcome_side']],
      ['diceValues', {}, { diceValues: [2] }, ['dice_values']],
      ['outcomeSum', {}, { outcomeSum: 2 }, ['outcome_sum']],
      ['outcomeSide', {}, { outcomeSide: 'HIGH' }, ['outcome_side']],
      ['rngVersion', { rngVersion: 'dice-hmac-sha256-v2' }, {}, ['rng_version']],
      ['mathVersion', { mathVersion: 'dice-2.0.0' }, {}, ['math_version']],
    ];
    for (const [field, overrides, outcome, expected] of cases) {
      it(field, () => {
        const verdict = verifyDiceProof(wire(overrides, outcome));
        expect(verdict.valid).to.equal(expected.length === 0);
        expect(failing(verdict)).to.deep.equal(expected);
      });
    }

    it('reports expected and actual values of a failing check', () => {
      const verdict = verifyDiceProof(wire({}, { outcomeSide: 'HIGH' }));
      expect(verdict.checks.find((check) => check.name === 'outcome_side')).to.deep.equal({
        name: 'outcome_side',
        ok: false,
        expected: 'LOW',
        actual: 'HIGH',
      });
    });
  });

  describe('malformed bodies fail the shape check, with no derivation', () => {
    const cases: [string, unknown][] = [
      ['null', null],
      ['an array', [wire()]],
      ['a string', JSON.stringify(wire())],
      ['no serverSeed', { ...wire(), serverSeed: undefined }],
      ['empty clientSeed', wire({ clientSeed: '' })],
      ['nonce -1', wire({ nonce: -1 })],
      ['nonce 1.5', wire({ nonce: 1.5 })],
      ['nonce as a string', wire({ nonce: '0' })],
      ['no outcome', { ...wire(), outcome: undefined }],
      ['unknown outcome type', wire({}, { type: 'ROULETTE' })],
      ['a die of 7', wire({}, { diceValues: [7] })],
      ['no dice', wire({}, { diceValues: [] })],
      ['outcomeSum as a string', wire({}, { outcomeSum: '1' })],
      ['side MIDDLE', wire({}, { outcomeSide: 'MIDDLE' })],
      ['no lowWeight', { ...wire(), lowWeight: undefined }],
      ['weight as a number', wire({ highWeight: 1 })],
      ['negative weight', wire({ lowWeight: '-1' })],
      ['fractional weight', wire({ lowWeight: '1.5' })],
      ['both weights zero', wire({ lowWeight: '0', highWeight: '0' })],
      ['mathVersion not a string', wire({ mathVersion: 1 })],
    ];
    for (const [label, body] of cases) {
      it(label, () => {
        const verdict = verifyDiceProof(body);
        expect(verdict.valid).to.equal(false);
        expect(failing(verdict)).to.deep.equal(['shape']);
        expect(verdict.checks[0]!.actual).to.be.an('array').that.is.not.empty;
        expect(verdict.derived).to.equal(undefined);
      });
    }
  });

  it('a CRASH or MULTI proof is not valid: their derivation is not defined in this version (2.11: not shown)', () => {
    for (const outcome of [
      { type: 'CRASH', crashMultiplier: 1.5, u: 0.3 },
      { type: 'MULTI', baseGame: {}, events: [] },
    ]) {
      const verdict = verifyDiceProof({ ...wire(), outcome });
      expect(verdict.valid).to.equal(false);
      const check = verdict.checks.find((c) => c.name === 'outcome_type');
      expect(check).to.include({ ok: false, expected: 'DICE' });
      expect(String(check!.actual)).to.contain(outcome.type).and.contain('not defined in this version');
      expect(verdict.derived).to.equal(undefined);
    }
  });
});
