// D36: the calendar months (UTC) that the partitioned money tables are cut into, and the
// rule of retention. Pure: no clock, no I/O.

// a month as 'YYYY-MM'
export type Month = string;

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

// the industry minimum for keeping transaction records: retention never drops a month
// younger than this (D36)
export const MIN_RETENTION_DAYS = 120;

const DAY_MS = 24 * 60 * 60 * 1000;

export const isMonth = (text: string): boolean => MONTH.test(text);

export function parseMonth(text: string): Month {
  if (!MONTH.test(text)) throw new RangeError(`not a month (YYYY-MM): ${JSON.stringify(text)}`);
  return text;
}

const parts = (month: Month): [number, number] => {
  const match = MONTH.exec(month);
  if (!match) throw new RangeError(`not a month (YYYY-MM): ${JSON.stringify(month)}`);
  return [Number(match[1]), Number(match[2])];
};

// the month an instant falls in, in UTC
export const monthOf = (at: Date): Month => at.toISOString().slice(0, 7);

// the month `count` months after (or before, negative) `month`
export function addMonths(month: Month, count: number): Month {
  const [year, m] = parts(month);
  return monthOf(new Date(Date.UTC(year, m - 1 + count, 1)));
}

// the first instant of the month, and the first instant of the next one (its end, exclusive)
export const monthStart = (month: Month): Date => {
  const [year, m] = parts(month);
  return new Date(Date.UTC(year, m - 1, 1));
};
export const monthEnd = (month: Month): Date => monthStart(addMonths(month, 1));

// every month from `from` through `to`, both included (none when `to` is before `from`)
export function monthRange(from: Month, to: Month): Month[] {
  const months: Month[] = [];
  for (let month = from; month <= to; month = addMonths(month, 1)) months.push(month);
  return months;
}

// a table's partition of a month: bets_2026_11
export const partitionName = (table: string, month: Month): string => `${table}_${month.replace('-', '_')}`;

// the month of a partition's name, when it is one of `table`'s
export function partitionMonth(table: string, name: string): Month | undefined {
  const prefix = `${table}_`;
  if (!name.startsWith(prefix)) return undefined;
  const month = name.slice(prefix.length).replace('_', '-');
  return isMonth(month) && name.length === prefix.length + 7 ? month : undefined;
}

// The months `rgs partitions ensure` makes: from `from` (default: the current month) through
// `monthsAhead` months after the current one, so that every row written until the next daily
// run, and well beyond, has its partition.
export function monthsToEnsure(now: Date, monthsAhead: number, from?: Month): Month[] {
  if (!Number.isInteger(monthsAhead) || monthsAhead < 0) throw new RangeError('monthsAhead must be a non-negative integer');
  const current = monthOf(now);
  const first = from !== undefined && from < current ? from : current;
  return monthRange(first, addMonths(current, monthsAhead));
}

// `--older-than 120d`: a whole number of days, at least MIN_RETENTION_DAYS
export type RetentionAge = { ok: true; days: number } | { ok: false; reason: string };

export function parseRetentionAge(text: string): RetentionAge {
  const match = /^([0-9]{1,6})d$/.exec(text);
  if (!match) return { ok: false, reason: `--older-than must be a number of days such as ${MIN_RETENTION_DAYS}d, not ${JSON.stringify(text)}` };
  const days = Number(match[1]);
  if (days < MIN_RETENTION_DAYS) {
    return {
      ok: false,
      reason: `refused: --older-than ${days}d is under ${MIN_RETENTION_DAYS} days, the least that transaction records are kept (D36)`,
    };
  }
  return { ok: true, days };
}

// the instant before which a month must have ended for retention to drop it
export const retentionCutoff = (now: Date, days: number): Date => new Date(now.getTime() - days * DAY_MS);

// The months of `months` that retention drops: those that ended on or before the cut-off.
// The current month and later ones never qualify (they have not ended), whatever the age.
export function monthsOlderThan(months: readonly Month[], now: Date, days: number): Month[] {
  if (days < MIN_RETENTION_DAYS) throw new RangeError(`retention under ${MIN_RETENTION_DAYS} days is refused`);
  const cutoff = retentionCutoff(now, days).getTime();
  const current = monthOf(now);
  return [...new Set(months)].filter((month) => month < current && monthEnd(month).getTime() <= cutoff).sort();
}

// ---- whether retention may drop a month (D36) ----

// Money work still open in a month, by what it is ('bets in play': 1); only counts above 0
// matter.
export type OpenWork = Record<string, number>;

// The archive of a month `rgs archive` wrote and read back: its rows per table, and the
// money work still open in the snapshot it was taken from.
export type VerifiedArchive = { file: string; createdAt: string; counts: Record<string, number>; openWork: OpenWork };

export type RetentionVerdict = { drop: true; withoutArchive: boolean } | { drop: false; reason: string };

export const describeOpenWork = (work: OpenWork): string =>
  Object.entries(work)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${what}`)
    .join(', ');

// A month goes only when nothing in it is unfinished (a bet in play, a stake held, a wallet
// job open or abandoned and not reconciled, a webhook event to deliver), and only when the
// latest archive of it holds exactly the rows the month holds now and was taken when
// nothing in it was unfinished: an archive of a bet still in play, or one short of rows
// written since, would not be the record that is dropped. `withoutArchive` is the
// operator's explicit choice to drop a finished month that has no such archive (the caller
// logs it).
export function retentionVerdict(
  month: Month,
  { openWork, archive, counts, withoutArchive }: { openWork: OpenWork; archive?: VerifiedArchive; counts: Record<string, number>; withoutArchive: boolean },
): RetentionVerdict {
  const open = describeOpenWork(openWork);
  if (open) return { drop: false, reason: `unfinished money work: ${open}` };
  const problem = archiveProblem(month, archive, counts);
  if (problem === undefined) return { drop: true, withoutArchive: false };
  return withoutArchive ? { drop: true, withoutArchive: true } : { drop: false, reason: `${problem}, or pass --without-archive` };
}

// why the archive does not stand for the month as it is now; undefined: it does
function archiveProblem(month: Month, archive: VerifiedArchive | undefined, counts: Record<string, number>): string | undefined {
  // a month with no rows loses nothing when dropped
  if (!archive && Object.values(counts).every((n) => n === 0)) return undefined;
  if (!archive) return `no verified archive: run rgs archive --month ${month} --out FILE first`;
  const again = `run rgs archive --month ${month} --out FILE again`;
  const archivedOpen = describeOpenWork(archive.openWork);
  if (archivedOpen) return `the archive ${archive.file} was taken while the month had unfinished money work (${archivedOpen}): ${again}`;
  const tables = [...new Set([...Object.keys(counts), ...Object.keys(archive.counts)])].sort();
  const differ = tables.filter((table) => (counts[table] ?? 0) !== (archive.counts[table] ?? 0));
  if (differ.length === 0) return undefined;
  const detail = differ.map((table) => `${table} ${archive.counts[table] ?? 0} archived, ${counts[table] ?? 0} now`).join(', ');
  return `the archive ${archive.file} no longer matches the month (${detail}): ${again}`;
}
