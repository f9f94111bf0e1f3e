import { expect } from 'chai';
import { MAX_MICRO, isMicroAmount, parseMicro, parseStakeMicro } from '../../src/shared/domain/money.js';

// contract 1 rule 2, 2.1 MicroAmount, DECISIONS D9 (at most 20 digits) and D18 (bigint).

describe('money (contract 2.1, D18)', () => {
  const valid = ['0', '1', '100', '-5', '00012', '12345678901234567890', '-12345678901234567890'];
  const invalid: unknown[] = [
    '100.00',
    '1.5',
    '',
    '-',
    '+5',
    ' 1',
    '1 ',
    '1e5',
    '0x10',
    '１２', // full-width digits
    '123456789012345678901', // 21 digits
    '1_000',
    100,
    0,
    100n,
    null,
    undefined,
    ['1'],
    { amount: '1' },
  ];

  it('recognises MicroAmount strings', () => {
    for (const value of valid) expect(isMicroAmount(value), String(value)).to.equal(true);
    for (const value of invalid) expect(isMicroAmount(value), String(value)).to.equal(false);
  });

  it('parses exactly into bigint, beyond 2^53', () => {
    expect(parseMicro('0')).to.equal(0n);
    expect(parseMicro('-5')).to.equal(-5n);
    expect(parseMicro('9007199254740993')).to.equal(9007199254740993n); // 2^53 + 1, not representable as a Number
    expect(parseMicro('12345678901234567890')).to.equal(12345678901234567890n);
    expect(typeof parseMicro('1')).to.equal('bigint');
  });

  it('refuses anything that is not a MicroAmount', () => {
    for (const value of ['100.00', '', '1e5', ' 1', '123456789012345678901', 'abc']) {
      expect(() => parseMicro(value), value).to.throw(RangeError);
    }
  });

  // D24: what a client may send as a stake, before any statement runs; zero is a stake (the
  // bet rules refuse it bet_out_of_range, contract 8.2)
  it('takes a client stake only as a non-negative integer a bigint holds, without leading zeros', () => {
    expect(parseStakeMicro('0')).to.equal(0n);
    expect(parseStakeMicro(0)).to.equal(0n);
    expect(parseStakeMicro('1')).to.equal(1n);
    expect(parseStakeMicro(1)).to.equal(1n);
    expect(parseStakeMicro('9223372036854775807')).to.equal(MAX_MICRO);
    expect(parseStakeMicro(Number.MAX_SAFE_INTEGER)).to.equal(9007199254740991n);
    const refused: unknown[] = [
      '9223372036854775808', // 2^63
      '99999999999999999999',
      '10000000000000000000', // 20 digits
      '00',
      '-0',
      '0100',
      '-1',
      '+1',
      '1.0',
      '1e3',
      ' 1',
      '1\u0000',
      '',
      -1,
      1.5,
      Number.MAX_SAFE_INTEGER + 1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      1n,
      null,
      undefined,
      ['1'],
      { amountMicro: '1' },
    ];
    for (const value of refused) expect(parseStakeMicro(value), String(value)).to.equal(null);
  });
});
