import { expect } from 'chai';
import {
  MIN_RETENTION_DAYS,
  addMonths,
  monthEnd,
  monthOf,
  monthRange,
  monthStart,
  monthsOlderThan,
  monthsToEnsure,
  parseMonth,
  parseRetentionAge,
  partitionMonth,
  partitionName,
  retentionVerdict,
} from '../../src/shared/domain/months.js';

// D36: the month math of partitions and retention
describe('months (D36 partitions and retention)', () => {
  it('places an instant in its UTC month, whatever the local offset says', () => {
    expect(monthOf(new Date('2026-11-30T23:59:59.999Z'))).to.equal('2026-11');
    expect(monthOf(new Date('2026-12-01T00:00:00.000Z'))).to.equal('2026-12');
    expect(monthOf(new Date('2026-12-01T00:30:00+01:00'))).to.equal('2026-11');
  });

  it('steps across year ends both ways and gives the bounds of a month', () => {
    expect(addMonths('2026-11', 3)).to.equal('2027-02');
    expect(addMonths('2026-01', -1)).to.equal('2025-12');
    expect(addMonths('2026-03', -14)).to.equal('2025-01');
    expect(monthStart('2028-02').toISOString()).to.equal('2028-02-01T00:00:00.000Z');
    expect(monthEnd('2028-02').toISOString()).to.equal('2028-03-01T00:00:00.000Z');
    expect(monthEnd('2026-12').toISOString()).to.equal('2027-01-01T00:00:00.000Z');
  });

  it('lists a range of months inclusively, and none when it is backwards', () => {
    expect(monthRange('2026-11', '2027-02')).to.deep.equal(['2026-11', '2026-12', '2027-01', '2027-02']);
    expect(monthRange('2026-11', '2026-11')).to.deep.equal(['2026-11']);
    expect(monthRange('2026-11', '2026-10')).to.deep.equal([]);
  });

  it('refuses what is not a month', () => {
    for (const bad of ['2026-13', '2026-00', '2026-1', '26-11', '2026-11-01', '']) {
      expect(() => parseMonth(bad), bad).to.throw(RangeError);
    }
    expect(parseMonth('2026-11')).to.equal('2026-11');
  });

  it('names partitions and reads their month back, only for its own table', () => {
    expect(partitionName('bets', '2026-11')).to.equal('bets_2026_11');
    expect(partitionMonth('bets', 'bets_2026_11')).to.equal('2026-11');
    expect(partitionMonth('bets', 'bets_unpartitioned')).to.equal(undefined);
    expect(partitionMonth('bets', 'bets_2026_13')).to.equal(undefined);
    // webhook_events_2026_11 is not a partition of a table "webhook"
    expect(partitionMonth('webhook', 'webhook_events_2026_11')).to.equal(undefined);
  });

  it('ensures the current month through N ahead, and from a past month when asked', () => {
    const now = new Date('2026-11-15T12:00:00Z');
    expect(monthsToEnsure(now, 3)).to.deep.equal(['2026-11', '2026-12', '2027-01', '2027-02']);
    expect(monthsToEnsure(now, 0)).to.deep.equal(['2026-11']);
    expect(monthsToEnsure(now, 1, '2026-08')).to.deep.equal(['2026-08', '2026-09', '2026-10', '2026-11', '2026-12']);
    // a `from` in the future does not skip the current month
    expect(monthsToEnsure(now, 1, '2027-05')).to.deep.equal(['2026-11', '2026-12']);
    expect(() => monthsToEnsure(now, -1)).to.throw(RangeError);
  });

  it(`parses --older-than in days and refuses anything under ${MIN_RETENTION_DAYS} days`, () => {
    expect(parseRetentionAge('120d')).to.deep.equal({ ok: true, days: 120 });
    expect(parseRetentionAge('400d')).to.deep.equal({ ok: true, days: 400 });
    const young = parseRetentionAge('119d');
    expect(young.ok).to.equal(false);
    expect(!young.ok && young.reason).to.match(/refused.*119d.*120 days/);
    for (const bad of ['120', '4m', '-120d', '120 d', 'd']) expect(parseRetentionAge(bad).ok, bad).to.equal(false);
  });

  it('drops only whole months that ended before the cut-off, never the current or a future one', () => {
    const months = ['2026-05', '2026-06', '2026-07', '2026-08', '2026-09', '2026-10', '2026-11', '2026-12'];
    // 120 days before 2026-11-15 is 2026-07-18: June ended before it, July did not
    const now = new Date('2026-11-15T00:00:00Z');
    expect(monthsOlderThan(months, now, 120)).to.deep.equal(['2026-05', '2026-06']);
    // a month that ends exactly at the cut-off goes
    const cutAtAugust = new Date(Date.UTC(2026, 7, 1) + 120 * 86_400_000);
    expect(monthsOlderThan(months, cutAtAugust, 120)).to.deep.equal(['2026-05', '2026-06', '2026-07']);
    expect(monthsOlderThan(months, new Date(cutAtAugust.getTime() - 1), 120)).to.deep.equal(['2026-05', '2026-06']);
    expect(() => monthsOlderThan(months, now, 119)).to.throw(RangeError);
  });
});

describe('retentionVerdict (D36: what a month needs before it is dropped)', () => {
  const counts = { bets: 2, rounds: 2, wallet_jobs: 1 };
  const archive = { file: '/archives/2026-03.ndjson.gz', createdAt: '2026-11-01T00:00:00.000Z', counts: { ...counts }, openWork: {} };

  it('keeps a month with unfinished money work, naming it, even with --without-archive', () => {
    for (const withoutArchive of [false, true]) {
      expect(retentionVerdict('2026-03', { openWork: { 'bets in play': 1, 'open wallet jobs': 0, 'abandoned wallet jobs not reconciled': 2 }, archive, counts, withoutArchive })).to.deep.equal({
        drop: false,
        reason: 'unfinished money work: 1 bets in play, 2 abandoned wallet jobs not reconciled',
      });
    }
  });

  it('drops a finished month with an archive that matches it; without one only when told, and says so', () => {
    expect(retentionVerdict('2026-03', { openWork: {}, archive, counts, withoutArchive: false })).to.deep.equal({ drop: true, withoutArchive: false });
    expect(retentionVerdict('2026-03', { openWork: {}, counts, withoutArchive: false })).to.deep.equal({
      drop: false,
      reason: 'no verified archive: run rgs archive --month 2026-03 --out FILE first, or pass --without-archive',
    });
    expect(retentionVerdict('2026-03', { openWork: {}, counts, withoutArchive: true })).to.deep.equal({ drop: true, withoutArchive: true });
    // a month with no rows loses nothing
    expect(retentionVerdict('2026-03', { openWork: {}, counts: { bets: 0 }, withoutArchive: false })).to.deep.equal({ drop: true, withoutArchive: false });
  });

  it('refuses an archive that no longer matches the month, or that was taken while work was unfinished', () => {
    expect(retentionVerdict('2026-03', { openWork: {}, archive, counts: { ...counts, bets: 3, webhook_events: 1 }, withoutArchive: false })).to.deep.equal({
      drop: false,
      reason:
        'the archive /archives/2026-03.ndjson.gz no longer matches the month (bets 2 archived, 3 now, webhook_events 0 archived, 1 now): ' +
        'run rgs archive --month 2026-03 --out FILE again, or pass --without-archive',
    });
    expect(retentionVerdict('2026-03', { openWork: {}, archive: { ...archive, openWork: { 'stakes held': 1 } }, counts, withoutArchive: false })).to.deep.equal({
      drop: false,
      reason:
        'the archive /archives/2026-03.ndjson.gz was taken while the month had unfinished money work (1 stakes held): ' +
        'run rgs archive --month 2026-03 --out FILE again, or pass --without-archive',
    });
  });
});
