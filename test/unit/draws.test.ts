import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { DRAW_SPACE, drawOf, drawTable, selectIndex } from '../../src/shared/domain/draws.js';
import { drawHash, roundHash } from '../../src/shared/domain/seeds.js';

// The weighted selection of a 32-bit draw (D2's compare, generalised by D41) and the draws
// h_i of a multi-event play (D41, contract 2.11 MULTI).

// the definition: the first k with a * W < (w_0 + ... + w_k) * 2^32
function byProduct(a: number, weights: bigint[]): number {
  const total = weights.reduce((s, w) => s + w, 0n);
  let cumulative = 0n;
  for (let k = 0; k < weights.length; k++) {
    cumulative += weights[k]!;
    if (BigInt(a) * total < cumulative * DRAW_SPACE) return k;
  }
  throw new Error('unreachable');
}

describe('weighted draws (D41)', () => {
  const cases: bigint[][] = [[1n, 1n], [3n, 7n], [0n, 5n], [5n, 0n], [1n, 2n, 0n, 4n], Array.from({ length: 32 }, () => 1n), [1n, 4999999n], [7n, 1n, 1n, 3n, 2n]];

  it('selects what the product compare selects, at every threshold and its neighbours', () => {
    for (const weights of cases) {
      const table = drawTable(weights);
      const points = [0, 1, 2 ** 32 - 1, 2 ** 31, ...table.thresholds.flatMap((t) => [t - 1, t, t + 1])].filter((a) => a >= 0 && a < 2 ** 32);
      for (const a of points) expect(selectIndex(a, table), `${weights.join(':')} at ${a}`).to.equal(byProduct(a, weights));
    }
  });

  it('counts each index exactly: the counts sum to 2^32 and a zero weight is never selected', () => {
    for (const weights of cases) {
      const { counts } = drawTable(weights);
      expect(counts.reduce((s, c) => s + c, 0n)).to.equal(DRAW_SPACE);
      weights.forEach((w, k) => {
        if (w === 0n) expect(counts[k]).to.equal(0n);
      });
    }
    // a strip of 32 equal stops: 2^27 values each, exactly
    expect(new Set(drawTable(Array.from({ length: 32 }, () => 1n)).counts)).to.deep.equal(new Set([1n << 27n]));
    // 1 : 4999999, the jackpot's odds: ceil(2^32 / 5000000) values
    expect(drawTable([1n, 4999999n]).counts[0]).to.equal(859n);
  });

  it('refuses weights that select nothing and draws outside 32 bits', () => {
    expect(() => drawTable([0n, 0n])).to.throw(RangeError);
    expect(() => drawTable([-1n, 2n])).to.throw(RangeError);
    expect(() => selectIndex(2 ** 32, drawTable([1n]))).to.throw(RangeError);
  });

  it('h_i is the HMAC of clientSeed:nonce:i, apart from the round h of clientSeed:nonce', () => {
    const seed = { serverSeed: 'a'.repeat(64), clientSeed: 'c', nonce: 7 };
    expect(drawHash(seed, 0).equals(drawHash(seed, 0))).to.equal(true);
    expect(drawHash(seed, 0).equals(drawHash(seed, 1))).to.equal(false);
    expect(drawHash(seed, 0).equals(roundHash(seed))).to.equal(false);
    // the message is the text "c:7:3", keyed with the server seed's text
    expect(drawHash(seed, 3).equals(createHmac('sha256', 'a'.repeat(64)).update('c:7:3').digest())).to.equal(true);
    expect(drawOf(drawHash(seed, 3))).to.equal(drawHash(seed, 3).readUInt32BE(0));
    expect(() => drawHash(seed, -1)).to.throw(RangeError);
  });
});
