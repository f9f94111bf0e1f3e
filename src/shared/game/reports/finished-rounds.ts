import { Prisma } from '../../platform/db/client.js';

// Which rounds the reconciliation reads count as finished within a time range (D10): SETTLED
// ones by settledAt, VOIDED ones by voidedAt (a round voided after settlement, contract 4.2,
// is voided), never demo ones (D8). The range is [from, to); an absent bound is open.

export type TimeRange = { from?: Date; to?: Date };

// ISO text cast to timestamptz: the pg adapter would send a Date without its zone
export const timestamptz = (at: Date) => Prisma.sql`${at.toISOString()}::timestamptz`;

export type Finish = { state: 'SETTLED' | 'VOIDED'; at: Prisma.Sql };

// queried one state at a time, so that each uses its (operator_id, settled_at | voided_at) index
export const FINISHES: readonly Finish[] = [
  { state: 'SETTLED', at: Prisma.raw('settled_at') },
  { state: 'VOIDED', at: Prisma.raw('voided_at') },
];

export const finishedWithin = (operatorId: string, range: TimeRange, finish: Finish) => Prisma.sql`
  operator_id = ${operatorId} AND state = ${finish.state}::round_state AND NOT demo
  ${range.from ? Prisma.sql`AND ${finish.at} >= ${timestamptz(range.from)}` : Prisma.empty}
  ${range.to ? Prisma.sql`AND ${finish.at} < ${timestamptz(range.to)}` : Prisma.empty}`;
