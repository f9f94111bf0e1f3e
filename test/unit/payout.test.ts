import { expect } from 'chai';
import { payout } from '../../src/shared/domain/payout.js';
import { parseMultiplier } from '../../src/shared/game/operators/game-config.js';

// Payout arithmetic (contract 8.4, DECISIONS D18): gross = stake * multiplierScaled / 100000,
// commission = gross * commissionMicro / 100000, net = gross - commission, each division
// truncating so that the remainder stays with the house. Amounts are bigint micro-units and
// compared here as the decimal strings an operator sees on the wire.

type Row = [label: string, stake: string, multiplier: string, commission: string, gross: string, fee: string, net: string];

const TABLE: Row[] = [
  // 1000000 * 2 = 2000000; 3% of it = 60000
  ['defaults: x2.0, 3%', '1000000', '2.0', '3000', '2000000', '60000', '1940000'],
  // 1 * 2 = 2; 2 * 0.03 = 0.06 truncates to 0
  ['stake 1: commission truncates to 0', '1', '2', '3000', '2', '0', '2'],
  // 33333 * 1.95 = 64999.35 -> 64999; 64999 * 0.03 = 1949.97 -> 1949
  ['stake 33333 x1.95', '33333', '1.95', '3000', '64999', '1949', '63050'],
  // 17 * 1.95 = 33.15 -> 33; 33 * 0.03333 = 1.09989 -> 1
  ['stake 17 x1.95 at 3.333%', '17', '1.95', '3333', '33', '1', '32'],
  // 1000001 * 1.23457 = 1234571.23457 -> 1234571; * 0.03 = 37037.13 -> 37037
  ['multiplier with 5 decimals', '1000001', '1.23457', '3000', '1234571', '37037', '1197534'],
  // 99999 * 0.00001 = 0.99999 -> 0
  ['smallest multiplier, gross truncates to 0', '99999', '0.00001', '3000', '0', '0', '0'],
  ['smallest multiplier, gross 1', '100000', '0.00001', '3000', '1', '0', '1'],
  // 2^63 * 1.98 = 18262276632972456099.84 -> ...099; * 0.03 = 547868298989173682.97 -> ...682
  ['stake 2^63, beyond 2^53', '9223372036854775808', '1.98', '3000', '18262276632972456099', '547868298989173682', '17714408333983282417'],
  // 123456789012345678901234 * 2 = 246913578024691357802468; * 0.03 = 7407407340740740734074.04 -> ...074
  ['24-digit stake', '123456789012345678901234', '2', '3000', '246913578024691357802468', '7407407340740740734074', '239506170683950617068394'],
  ['commission 0: net is gross', '1000000', '2', '0', '2000000', '0', '2000000'],
  ['commission 100000 (100%): net is 0', '1000000', '2', '100000', '2000000', '2000000', '0'],
  ['stake 0', '0', '2', '3000', '0', '0', '0'],
  ['multiplier 1000', '10000', '1000', '3000', '10000000', '300000', '9700000'],
];

describe('payout (contract 8.4, D18)', () => {
  for (const [label, stake, multiplier, commission, gross, fee, net] of TABLE) {
    it(`${label}: stake ${stake} x${multiplier} at ${commission}/100000 -> gross ${gross}, commission ${fee}, net ${net}`, () => {
      const result = payout({ stakeMicro: BigInt(stake), multiplierScaled: parseMultiplier(multiplier), commissionMicro: BigInt(commission) });
      expect(Object.keys(result).sort()).to.deep.equal(['commissionMicro', 'grossMicro', 'netMicro']);
      for (const value of Object.values(result)) expect(value).to.be.a('bigint');
      expect({
        grossMicro: result.grossMicro.toString(),
        commissionMicro: result.commissionMicro.toString(),
        netMicro: result.netMicro.toString(),
      }).to.deep.equal({ grossMicro: gross, commissionMicro: fee, netMicro: net });
    });
  }

  it('never pays more than the untruncated amounts (the remainders favour the house)', () => {
    for (let stake = 1n; stake <= 3000n; stake += 7n) {
      const { grossMicro, commissionMicro, netMicro } = payout({ stakeMicro: stake, multiplierScaled: 195000n, commissionMicro: 3000n });
      // gross <= stake * 1.95 and commission <= gross * 0.03, exactly, in scaled integers
      expect(grossMicro * 100000n <= stake * 195000n).to.equal(true);
      expect(commissionMicro * 100000n <= grossMicro * 3000n).to.equal(true);
      expect(netMicro).to.equal(grossMicro - commissionMicro);
    }
  });

  it('refuses a negative stake, a non-positive multiplier and a commission outside 0..100000 (RangeError)', () => {
    const base = { stakeMicro: 1000000n, multiplierScaled: 200000n, commissionMicro: 3000n };
    for (const bad of [{ stakeMicro: -1n }, { multiplierScaled: 0n }, { multiplierScaled: -200000n }, { commissionMicro: -1n }, { commissionMicro: 100001n }]) {
      expect(() => payout({ ...base, ...bad })).to.throw(RangeError);
    }
  });
});
