import { expect } from 'chai';
import {
  HISTORY_CYCLE_MS,
  HISTORY_OPERATORS,
  historyBet,
  historyChunks,
  historyLayout,
  historyMonths,
  historyTemplateName,
  sessionBets,
} from '../../../bench/history-layout.js';

// `--history N`: where the N bets of the past fall. Every bet lies in the twelve whole months
// before the current one, spread evenly, and an operator's engine plays one table at a time.

const NOW = new Date('2026-11-27T21:00:00Z');
const iso = (d: Date) => d.toISOString().slice(0, 10);

describe('bench history layout', () => {
  it('covers the twelve whole months before the current one, across a year boundary too', () => {
    const months = historyMonths(NOW);
    expect(months.map(iso)).to.deep.equal([
      '2025-11-01', '2025-12-01', '2026-01-01', '2026-02-01', '2026-03-01', '2026-04-01', '2026-05-01',
      '2026-06-01', '2026-07-01', '2026-08-01', '2026-09-01', '2026-10-01', '2026-11-01',
    ]);
    expect(historyMonths(new Date('2026-01-01T00:00:00Z')).map(iso)).to.include.ordered.members(['2025-01-01', '2025-02-01']);
    expect(iso(historyMonths(new Date('2026-01-31T23:59:59Z')).at(-1)!)).to.equal('2026-01-01');
  });

  it('plays tables of up to 20 players for up to 100 cycles, smaller when N is small so that every month has some', () => {
    expect(historyLayout(10_000_000, NOW)).to.include({ sessionsPerGroup: 20, betsPerSession: 100, betsPerGroup: 2000, groups: 5000 });
    expect(historyLayout(100_000, NOW)).to.include({ sessionsPerGroup: 20, betsPerSession: 21, groups: 239 });
    expect(historyLayout(2000, NOW)).to.include({ sessionsPerGroup: 9, betsPerSession: 1, groups: 223 });
    expect(historyLayout(1, NOW)).to.include({ sessionsPerGroup: 1, betsPerSession: 1, groups: 1 });
    expect(() => historyLayout(0, NOW)).to.throw(RangeError);
  });

  for (const bets of [2000, 12_345, 100_000]) {
    it(`spreads ${bets} bets evenly over the months, none in the current one, and gives every bet to one session`, () => {
      const layout = historyLayout(bets, NOW);
      const months = historyMonths(NOW);
      const perMonth = new Map<string, number>();
      let first = Infinity;
      let last = -Infinity;
      for (let i = 0; i < bets; i++) {
        const { cycleAt } = historyBet(layout, i);
        first = Math.min(first, cycleAt.getTime());
        last = Math.max(last, cycleAt.getTime());
        const month = iso(new Date(Date.UTC(cycleAt.getUTCFullYear(), cycleAt.getUTCMonth(), 1)));
        perMonth.set(month, (perMonth.get(month) ?? 0) + 1);
      }
      expect(first).to.be.at.least(layout.from.getTime());
      // the last bet's whole cycle ends before the current month
      expect(last + HISTORY_CYCLE_MS).to.be.at.most(layout.to.getTime());
      expect([...perMonth.keys()]).to.deep.equal(months.slice(0, -1).map(iso));
      // a month's share follows its length (28 to 31 days of 365), within a group's worth
      for (const [month, count] of perMonth) expect(count, month).to.be.within((bets / 12) * 0.88 - layout.betsPerGroup, (bets / 12) * 1.08 + layout.betsPerGroup);

      let total = 0;
      for (let group = 0; group < layout.groups; group++) {
        for (let session = 0; session < layout.sessionsPerGroup; session++) total += sessionBets(layout, group, session);
      }
      expect(total).to.equal(bets);
    });
  }

  it('runs one table at a time on each operator engine, the tables dealt to every operator', () => {
    const layout = historyLayout(10_000_000, NOW);
    // an operator's next table starts after its previous one's last cycle
    expect(layout.groupStepMs * HISTORY_OPERATORS).to.be.above(layout.betsPerSession * HISTORY_CYCLE_MS);
    const operators = new Set(Array.from({ length: HISTORY_OPERATORS * 2 }, (_, g) => historyBet(layout, g * layout.betsPerGroup).operator));
    expect(operators.size).to.equal(HISTORY_OPERATORS);
    // the last bet's cycle still ends within the history
    expect(historyBet(layout, 9_999_999).cycleAt.getTime() + HISTORY_CYCLE_MS).to.be.at.most(layout.to.getTime());
  });

  it('writes whole tables per chunk, every bet once', () => {
    const layout = historyLayout(1_234_567, NOW);
    const chunks = historyChunks(layout, 250_000);
    expect(chunks[0]).to.include({ firstGroup: 0, firstBet: 0 });
    expect(chunks.at(-1)).to.include({ endGroup: layout.groups, endBet: 1_234_567 });
    for (let k = 1; k < chunks.length; k++) {
      expect(chunks[k]!.firstGroup).to.equal(chunks[k - 1]!.endGroup);
      expect(chunks[k]!.firstBet).to.equal(chunks[k - 1]!.endBet);
      expect(chunks[k - 1]!.endBet - chunks[k - 1]!.firstBet).to.be.at.most(250_000);
    }
  });

  it('names the template by N and the hash', () => {
    expect(historyTemplateName(10_000_000, '1cd9d9d4deadbeef')).to.equal('rgs_bench_history_10000000_1cd9d9d4');
  });
});
