import { expect } from 'chai';
import { decimalText, parSheet, sideRtp } from '../../src/shared/domain/par-sheet.js';
import { payout } from '../../src/shared/domain/payout.js';
import { parseMultiplier } from '../../src/shared/game/operators/game-config.js';

// The par sheet of the dispute pack (D32, D38): per side, RTP = P(side) * net / stake =
// w / (wLOW + wHIGH) * multiplier * (100000 - commissionMicro) / 100000, exact as a reduced
// fraction, and to 6 decimals rounded half up.

type Row = [label: string, low: bigint, high: bigint, multiplier: string, commission: bigint, low: [string, string], high: [string, string]];

const TABLE: Row[] = [
  ['the defaults: 1:1, x2, 3 %', 1n, 1n, '2', 3000n, ['97/100', '0.970000'], ['97/100', '0.970000']],
  ['LOW always wins', 1n, 0n, '2', 3000n, ['97/50', '1.940000'], ['0/1', '0.000000']],
  ['1:2, x1.98, no commission', 1n, 2n, '1.98', 0n, ['33/50', '0.660000'], ['33/25', '1.320000']],
  // 97/150 = 0.6466666...; 97/75 = 1.2933333...
  ['1:2, x2, 3 %: rounded half up', 1n, 2n, '2', 3000n, ['97/150', '0.646667'], ['97/75', '1.293333']],
  ['commission 100 %', 3n, 5n, '1.5', 100000n, ['0/1', '0.000000'], ['0/1', '0.000000']],
  // 7/10 * 1.23457 * 0.96667 = 0.83539524733 exactly, 3/10 of it 0.35802653457 (computed apart with Python's fractions)
  ['5-decimal multiplier and odd commission', 7n, 3n, '1.23457', 3333n, ['83539524733/100000000000', '0.835395'], ['35802653457/100000000000', '0.358027']],
  ['weights beyond 2^64', 2n ** 70n, 2n ** 70n, '2', 3000n, ['97/100', '0.970000'], ['97/100', '0.970000']],
];

describe('the par sheet (D38)', () => {
  for (const [label, lowWeight, highWeight, multiplier, commissionMicro, low, high] of TABLE) {
    it(label, () => {
      const sheet = parSheet({ gameCode: 'dice', lowWeight, highWeight, payoutMultiplierScaled: parseMultiplier(multiplier), commissionMicro });
      expect(sheet.rtp).to.deep.equal({ LOW: { fraction: low[0], decimal: low[1] }, HIGH: { fraction: high[0], decimal: high[1] } });
    });
  }

  it('carries the configuration snapshot as strings (D18, D19)', () => {
    expect(parSheet({ gameCode: 'dice', lowWeight: 1n, highWeight: 1n, payoutMultiplierScaled: 198000n, commissionMicro: 3000n })).to.deep.equal({
      gameCode: 'dice',
      lowWeight: '1',
      highWeight: '1',
      payoutMultiplier: '1.98',
      commissionMicro: '3000',
      rtp: { LOW: { fraction: '9603/10000', decimal: '0.960300' }, HIGH: { fraction: '9603/10000', decimal: '0.960300' } },
    });
  });

  it('is the return of the payout arithmetic (contract 8.4) where it does not truncate', () => {
    // a stake that is a multiple of 10^10 micro-units: gross and commission divide exactly
    const stakeMicro = 7n * 10n ** 10n;
    for (const [lowWeight, highWeight, multiplierScaled, commissionMicro] of [
      [1n, 1n, 200000n, 3000n],
      [3n, 7n, 123457n, 3333n],
      [5n, 0n, 100001n, 1n],
    ] as const) {
      const { netMicro } = payout({ stakeMicro, multiplierScaled, commissionMicro });
      const { numerator, denominator } = sideRtp({ lowWeight, highWeight, payoutMultiplierScaled: multiplierScaled, commissionMicro }, 'LOW');
      // numerator / denominator = lowWeight / (lowWeight + highWeight) * netMicro / stakeMicro
      expect(numerator * (lowWeight + highWeight) * stakeMicro).to.equal(denominator * lowWeight * netMicro);
    }
  });

  it('the nominal return differs from a truncated payout by less than 1 micro-unit per bet', () => {
    for (const stakeMicro of [1n, 17n, 33333n, 1_000_001n, 123_456_789n]) {
      const { netMicro } = payout({ stakeMicro, multiplierScaled: 195000n, commissionMicro: 3333n });
      // the nominal net: stake * 195000 * (100000 - 3333) / 10^10
      const nominalTimes1e10 = stakeMicro * 195000n * (100000n - 3333n);
      const difference = netMicro * 10n ** 10n - nominalTimes1e10;
      expect(difference < 10n ** 10n && difference > -(10n ** 10n), `stake ${stakeMicro}`).to.equal(true);
    }
  });

  it('rounds the decimal half up', () => {
    expect(decimalText({ numerator: 1n, denominator: 2_000_000n })).to.equal('0.000001');
    expect(decimalText({ numerator: 1n, denominator: 2_000_001n })).to.equal('0.000000');
    expect(decimalText({ numerator: 2n, denominator: 3n })).to.equal('0.666667');
    expect(decimalText({ numerator: 5n, denominator: 2n })).to.equal('2.500000');
  });

  it('refuses weights that are both zero, a non-positive multiplier and a commission over 100 %', () => {
    const base = { lowWeight: 1n, highWeight: 1n, payoutMultiplierScaled: 200000n, commissionMicro: 3000n };
    expect(() => sideRtp({ ...base, lowWeight: 0n, highWeight: 0n }, 'LOW')).to.throw(RangeError);
    expect(() => sideRtp({ ...base, payoutMultiplierScaled: 0n }, 'LOW')).to.throw(RangeError);
    expect(() => sideRtp({ ...base, commissionMicro: 100001n }, 'LOW')).to.throw(RangeError);
  });
});
