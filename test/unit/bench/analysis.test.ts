import { expect } from 'chai';
import { isRefusal, overloadOf } from '../../../bench/analysis.js';
import type { BetRecord } from '../../../bench/players.js';

// The report's overload section (D37) from the players' bets: a bet the service acked
// {ok: false, reason: 'service_busy'} is refused, neither accepted nor a failure.

const bet = (sentAt: number, ack: Partial<BetRecord>): BetRecord => ({ cycleId: 'c', sentAt, ...ack });

describe('bench overload section', () => {
  it('counts the offered bets, the accepted, and the refused with their ack latency and rate', () => {
    const bets = [
      bet(0, { ackAt: 40, ok: true, betId: 'b1', roundId: 'r1' }),
      bet(10, { ackAt: 12, ok: false, reason: 'service_busy' }),
      bet(20, { ackAt: 25, ok: false, reason: 'service_busy' }),
      bet(30, { ackAt: 900, ok: false, reason: 'phase_not_open' }),
      bet(40, {}),
    ];
    const overload = overloadOf(bets, 3, 2);
    expect(overload).to.deep.include({
      betsOffered: 5,
      betsAccepted: 1,
      betsRefused: 2,
      refusedPerS: 1,
      refusedPercentOfOffered: 40,
      sessionCreatesRefused: 3,
    });
    expect(overload.refusalAckMs).to.include({ count: 2, p50: 2, p99: 5, max: 5 });
    expect(bets.map(isRefusal)).to.deep.equal([false, true, true, false, false]);
  });

  it('is there with nothing refused, its latency without samples', () => {
    const overload = overloadOf([bet(0, { ackAt: 3, ok: true })], 0, 1);
    expect(overload).to.deep.include({ betsOffered: 1, betsAccepted: 1, betsRefused: 0, refusedPerS: 0, refusedPercentOfOffered: 0, sessionCreatesRefused: 0 });
    expect(overload.refusalAckMs).to.include({ count: 0, p50: null, p99: null });
  });
});
