import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { decodeCursor, encodeCursor } from '../../src/shared/game/reports/cursor.js';
import { roundTotals } from '../../src/shared/game/reports/round-view.js';

// The pure pieces of the reconciliation reads (D10): the listing cursor and a round's totals
// (D18, contract 8.4).

describe('listing cursor (D10)', () => {
  it('round-trips a position to the millisecond, as opaque base64url', () => {
    const position = { at: new Date('2026-03-01T12:00:00.123Z'), id: randomUUID() };
    const cursor = encodeCursor(position);
    expect(cursor).to.match(/^[A-Za-z0-9_-]+$/);
    expect(cursor).to.not.include(position.id);
    expect(decodeCursor(cursor)).to.deep.equal(position);
    const epoch = { at: new Date(0), id: randomUUID() };
    expect(decodeCursor(encodeCursor(epoch))).to.deep.equal(epoch);
  });

  it('an upper-case id is written in lower case', () => {
    const id = randomUUID();
    expect(decodeCursor(encodeCursor({ at: new Date(5), id: id.toUpperCase() }))?.id).to.equal(id);
  });

  const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
  for (const [label, cursor] of [
    ['empty', ''],
    ['not base64url', '!!!'],
    ['padded base64', `${encode(`1/${randomUUID()}`)}=`],
    ['no separator', encode(`1${randomUUID()}`)],
    ['not a uuid', encode('1/not-a-uuid')],
    ['upper-case uuid', encode(`1/${randomUUID().toUpperCase()}`)],
    ['negative time', encode(`-1/${randomUUID()}`)],
    ['leading zero', encode(`01/${randomUUID()}`)],
    ['time beyond a Date', encode(`9999999999999999/${randomUUID()}`)],
    ['trailing text', encode(`1/${randomUUID()}/x`)],
  ] as const) {
    it(`refuses a cursor: ${label}`, () => {
      expect(decodeCursor(cursor)).to.equal(undefined);
    });
  }
});

describe('round totals (D18, contract 8.4)', () => {
  const bet = (amountMicro: bigint, payoutMicro: bigint | null, isFree = false) => ({ amountMicro, payoutMicro, isFree });

  it('a settled round: the stake, and the payout or 0', () => {
    expect(roundTotals('SETTLED', bet(1_000_000n, 1_940_000n))).to.deep.equal({ totalBetsMicro: 1_000_000n, totalPayoutsMicro: 1_940_000n });
    expect(roundTotals('SETTLED', bet(1_000_000n, 0n))).to.deep.equal({ totalBetsMicro: 1_000_000n, totalPayoutsMicro: 0n });
  });

  it('a voided round: its stake and no payout, even one booked before the void', () => {
    expect(roundTotals('VOIDED', bet(2_000_000n, null))).to.deep.equal({ totalBetsMicro: 2_000_000n, totalPayoutsMicro: 0n });
    expect(roundTotals('VOIDED', bet(2_000_000n, 3_880_000n))).to.deep.equal({ totalBetsMicro: 2_000_000n, totalPayoutsMicro: 0n });
  });

  it('a free bet debited no stake: 0, with its payout when it won', () => {
    expect(roundTotals('SETTLED', bet(300_000n, 582_000n, true))).to.deep.equal({ totalBetsMicro: 0n, totalPayoutsMicro: 582_000n });
    expect(roundTotals('VOIDED', bet(300_000n, null, true))).to.deep.equal({ totalBetsMicro: 0n, totalPayoutsMicro: 0n });
  });

  it('an unfinished round: the stake, no payout yet', () => {
    expect(roundTotals('BETTING_OPEN', bet(400_000n, null))).to.deep.equal({ totalBetsMicro: 400_000n, totalPayoutsMicro: 0n });
  });

  it('amounts beyond 2^53 stay exact', () => {
    expect(roundTotals('SETTLED', bet(9_007_199_254_740_993n, 18_014_398_509_481_987n)).totalPayoutsMicro.toString()).to.equal('18014398509481987');
  });
});
