import { expect } from 'chai';
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { DICE_MATH_VERSION, DICE_RNG_VERSION, deriveDice } from '../../src/shared/domain/dice.js';

// The dice derivation (contract 2.12, DECISIONS D2), checked against a re-implementation
// written from D2 alone and against vectors computed outside Node with openssl:
//   SEED=1c27fcee55035c1c8c5b0514d102bbfbf16f7eafa981cb8523c654bd16747f6f
//   printf '%s' 'player-seed:0' | openssl dgst -sha256 -hmac "$SEED"

// D2, read literally: h = HMAC-SHA256(utf8(serverSeed), utf8(clientSeed ":" nonce));
// a, b = the first two big-endian 32-bit words; LOW iff a*(low+high) < low*2^32;
// face = (LOW ? 1 : 4) + b mod 3.
function referenceDice(serverSeed: string, clientSeed: string, nonce: number, low: bigint, high: bigint) {
  const hex = createHmac('sha256', serverSeed).update(clientSeed + ':' + nonce.toString(10)).digest('hex');
  const a = BigInt('0x' + hex.slice(0, 8));
  const b = BigInt('0x' + hex.slice(8, 16));
  const side = a * (low + high) < low * 4294967296n ? 'LOW' : 'HIGH';
  const face = (side === 'LOW' ? 1 : 4) + Number(b % 3n);
  return { hex, side, face };
}

const SEED = '1c27fcee55035c1c8c5b0514d102bbfbf16f7eafa981cb8523c654bd16747f6f';
const EVEN = { lowWeight: 1n, highWeight: 1n };

// printable ASCII without ':' (D2), 1 to 64 characters
const randomClientSeed = () =>
  Array.from({ length: randomInt(1, 65) }, () => {
    const code = randomInt(0x20, 0x7e);
    return String.fromCharCode(code >= 0x3a ? code + 1 : code);
  }).join('');

const randomWeight = (): bigint => {
  switch (randomInt(4)) {
    case 0:
      return BigInt(randomInt(0, 10));
    case 1:
      return BigInt(randomInt(0, 1_000_000));
    case 2:
      return BigInt('0x' + randomBytes(8).toString('hex')); // beyond 2^53
    default:
      return 1n;
  }
};

describe('dice derivation (contract 2.12, D2)', () => {
  it('names its versions', () => {
    expect(DICE_RNG_VERSION).to.equal('dice-hmac-sha256-v1');
    expect(DICE_MATH_VERSION).to.equal('dice-1.0.0');
  });

  it('agrees with a re-implementation of D2 over 3000 random seeds, nonces and weights', () => {
    for (let i = 0; i < 3000; i++) {
      const serverSeed = randomBytes(32).toString('hex');
      const clientSeed = i % 2 ? randomBytes(16).toString('hex') : randomClientSeed();
      const nonce = i % 3 ? randomInt(0, 1000) : randomInt(0, 2 ** 31 - 1);
      let lowWeight = randomWeight();
      const highWeight = randomWeight();
      if (lowWeight + highWeight === 0n) lowWeight = 1n;
      const expected = referenceDice(serverSeed, clientSeed, nonce, lowWeight, highWeight);
      const actual = deriveDice({ serverSeed, clientSeed, nonce, lowWeight, highWeight });
      const tuple = JSON.stringify({ serverSeed, clientSeed, nonce, lowWeight: `${lowWeight}`, highWeight: `${highWeight}` });
      expect(actual.hmacHex, tuple).to.equal(expected.hex);
      expect(actual.side, tuple).to.equal(expected.side);
      expect(actual.face, tuple).to.equal(expected.face);
      expect(actual.diceValues, tuple).to.deep.equal([expected.face]);
      expect(actual.outcomeSum, tuple).to.equal(expected.face);
    }
  });

  describe('vectors computed with openssl', () => {
    it('player-seed:0, weights 1:1: a = 0x1e8c732d < 2^31 so LOW; b = 0xa28131e3, b mod 3 = 0: face 1', () => {
      const dice = deriveDice({ serverSeed: SEED, clientSeed: 'player-seed', nonce: 0, ...EVEN });
      expect(dice.hmacHex).to.equal('1e8c732da28131e3e84a14166e023fe319843c79d95514fa77565c86fbb00d29');
      expect(dice.a).to.equal(512521005n);
      expect(dice.b).to.equal(2726375907n);
      expect(dice).to.include({ side: 'LOW', face: 1, outcomeSum: 1 });
      expect(dice.diceValues).to.deep.equal([1]);
    });

    it('player-seed:1, weights 1:1: a = 0x8c989d1a >= 2^31 so HIGH; b mod 3 = 1: face 5', () => {
      const dice = deriveDice({ serverSeed: SEED, clientSeed: 'player-seed', nonce: 1, ...EVEN });
      expect(dice.hmacHex).to.equal('8c989d1a330b61229bc786eeb76d9ed8dab05797d972210c26d81e36b8171314');
      expect(dice).to.include({ side: 'HIGH', face: 5, outcomeSum: 5 });
      expect(dice.diceValues).to.deep.equal([5]);
    });

    it('player-seed:1, weights 3:1: a*4 < 3*2^32 so LOW with the same b: face 2', () => {
      const dice = deriveDice({ serverSeed: SEED, clientSeed: 'player-seed', nonce: 1, lowWeight: 3n, highWeight: 1n });
      expect(dice).to.include({ side: 'LOW', face: 2, outcomeSum: 2 });
    });

    it('abc:7, weights 1:1: HIGH, b = 0x014d7263, b mod 3 = 0: face 4', () => {
      const dice = deriveDice({ serverSeed: SEED, clientSeed: 'abc', nonce: 7, ...EVEN });
      expect(dice.hmacHex).to.equal('fdc88067014d7263260e879ab5b7aa25b2f89f4984b54fd28c5c7f7da878597f');
      expect(dice).to.include({ side: 'HIGH', face: 4 });
    });
  });

  it('formats the nonce in decimal without padding', () => {
    const hmac = (message: string) => createHmac('sha256', SEED).update(message).digest('hex');
    for (const nonce of [0, 7, 10, 1000000, 2147483647]) {
      expect(deriveDice({ serverSeed: SEED, clientSeed: 'c', nonce, ...EVEN }).hmacHex, `nonce ${nonce}`).to.equal(hmac(`c:${nonce}`));
    }
    expect(deriveDice({ serverSeed: SEED, clientSeed: 'c', nonce: 7, ...EVEN }).hmacHex).to.not.equal(hmac('c:07'));
  });

  it('keys on the UTF-8 text of the seeds, not on decoded hex', () => {
    const dice = deriveDice({ serverSeed: SEED, clientSeed: 'é', nonce: 0, ...EVEN });
    expect(dice.hmacHex).to.equal(createHmac('sha256', Buffer.from(SEED, 'utf8')).update(Buffer.from('é:0', 'utf8')).digest('hex'));
    expect(dice.hmacHex).to.not.equal(createHmac('sha256', Buffer.from(SEED, 'hex')).update('é:0').digest('hex'));
  });

  describe('weights', () => {
    const draws = (lowWeight: bigint, highWeight: bigint, count: number) =>
      Array.from({ length: count }, (_, nonce) => deriveDice({ serverSeed: SEED, clientSeed: 'weights', nonce, lowWeight, highWeight }));

    it('lowWeight 0: always HIGH', () => {
      expect(new Set(draws(0n, 1n, 2000).map((d) => d.side))).to.deep.equal(new Set(['HIGH']));
      expect(new Set(draws(0n, 2n ** 64n, 500).map((d) => d.side))).to.deep.equal(new Set(['HIGH']));
    });

    it('highWeight 0: always LOW', () => {
      expect(new Set(draws(1n, 0n, 2000).map((d) => d.side))).to.deep.equal(new Set(['LOW']));
      expect(new Set(draws(2n ** 64n, 0n, 500).map((d) => d.side))).to.deep.equal(new Set(['LOW']));
    });

    it('1:1 gives LOW about half of 10000 draws; 1:3 about a quarter', () => {
      const even = draws(1n, 1n, 10000).filter((d) => d.side === 'LOW').length;
      expect(even).to.be.within(4700, 5300);
      const quarter = draws(1n, 3n, 10000).filter((d) => d.side === 'LOW').length;
      expect(quarter).to.be.within(2200, 2800);
    });

    it('LOW faces are 1..3 and HIGH faces 4..6, each face appearing', () => {
      const all = draws(1n, 1n, 6000);
      for (const dice of all) {
        expect(dice.face).to.be.within(dice.side === 'LOW' ? 1 : 4, dice.side === 'LOW' ? 3 : 6);
        expect(dice.diceValues).to.deep.equal([dice.face]);
        expect(dice.outcomeSum).to.equal(dice.face);
      }
      expect([...new Set(all.map((d) => d.face))].sort()).to.deep.equal([1, 2, 3, 4, 5, 6]);
    });

    it('refuses negative weights, both zero, and a negative or fractional nonce (RangeError)', () => {
      const base = { serverSeed: SEED, clientSeed: 'c', nonce: 0, ...EVEN };
      for (const bad of [
        { lowWeight: -1n },
        { highWeight: -1n },
        { lowWeight: 0n, highWeight: 0n },
        { nonce: -1 },
        { nonce: 1.5 },
        { nonce: Number.NaN },
        { nonce: 2 ** 53 },
      ]) {
        expect(() => deriveDice({ ...base, ...bad }), JSON.stringify(bad, (_k, v) => (typeof v === 'bigint' ? `${v}` : v))).to.throw(RangeError);
      }
    });
  });
});
