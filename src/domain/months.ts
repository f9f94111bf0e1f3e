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
