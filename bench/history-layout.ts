// How `--history N` lays N historic bets out over time, pure. The bets are played by groups
// of sessions: a group is one operator's table for a while, its sessions (one per player)
// each betting once per cycle of that operator's engine for betsPerSession cycles in a row.
// The groups are spread evenly over the twelve whole months before the current one, and
// dealt to the history's operators in turn, so every operator's engine runs one group at a
// time. Bet i (0 <= i < N) of the history is:
//   group g = i / betsPerGroup, then within the group j = cycle of the group, s = session
//   (bets in time order: all of the group's sessions bet in cycle j before cycle j + 1)

// the operators the history is dealt to: bench-op-0 .. bench-op-49, the default run's
// operators (a run at 200 sessions/s), so a run's operators bet on top of their own past
export const HISTORY_OPERATORS = 50;
// the player refs the sessions belong to: players come back, month after month
export const HISTORY_PLAYERS = 20_000;
// a group at most: 20 players at the table, each for 100 cycles
const MAX_SESSIONS_PER_GROUP = 20;
const MAX_BETS_PER_SESSION = 100;
// at least this many groups when N allows: twenty a month over twelve months
const MIN_GROUPS = 240;
export const HISTORY_MONTHS = 12;

// the game configuration the history was played with: the contract's defaults (2.12, D9)
export const HISTORY_GAME = {
  bettingWindowMs: 15_000,
  rollingWindowMs: 4_000,
  cooldownMs: 3_000,
  minBetMicro: 10_000n,
  maxBetMicro: 100_000_000n,
  commissionMicro: 3_000n,
  payoutMultiplierScaled: 200_000n,
  lowWeight: 1n,
  highWeight: 1n,
} as const;
export const HISTORY_CYCLE_MS = HISTORY_GAME.bettingWindowMs + HISTORY_GAME.rollingWindowMs + HISTORY_GAME.cooldownMs;
// a group's sessions are launched this long before its first cycle, and last an hour (the
// session token's lifetime)
export const HISTORY_LAUNCH_LEAD_MS = 30_000;

export type HistoryLayout = {
  bets: number;
  operators: number;
  sessionsPerGroup: number;
  betsPerSession: number;
  betsPerGroup: number;
  groups: number;
  // when the history starts and ends: the first instants of the first month and of the
  // current one (no historic bet falls in the current month)
  from: Date;
  to: Date;
  // the time from one group's launch to the next one's, so that the last group's last cycle
  // ends before `to`
  groupStepMs: number;
};

// The first instant (UTC) of each of the `count` months before now's month, oldest first,
// followed by the first instant of now's month.
export function historyMonths(now: Date, count = HISTORY_MONTHS): Date[] {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  return Array.from({ length: count + 1 }, (_, k) => new Date(Date.UTC(year, month - count + k, 1)));
}

export function historyLayout(bets: number, now: Date): HistoryLayout {
  if (!Number.isSafeInteger(bets) || bets < 1) throw new RangeError(`history needs a positive number of bets (got ${bets})`);
  // small histories still cover every month: smaller groups, as many as MIN_GROUPS
  const betsPerGroupWanted = Math.min(MAX_SESSIONS_PER_GROUP * MAX_BETS_PER_SESSION, Math.ceil(bets / MIN_GROUPS));
  const sessionsPerGroup = Math.min(MAX_SESSIONS_PER_GROUP, betsPerGroupWanted);
  const betsPerSession = Math.ceil(betsPerGroupWanted / sessionsPerGroup);
  const betsPerGroup = sessionsPerGroup * betsPerSession;
  const groups = Math.ceil(bets / betsPerGroup);
  const months = historyMonths(now);
  const from = months[0]!;
  const to = months.at(-1)!;
  const groupMs = betsPerSession * HISTORY_CYCLE_MS;
  const groupStepMs = Math.floor((to.getTime() - from.getTime() - HISTORY_LAUNCH_LEAD_MS - groupMs) / groups);
  return { bets, operators: HISTORY_OPERATORS, sessionsPerGroup, betsPerSession, betsPerGroup, groups, from, to, groupStepMs };
}

// The bets a session of the history has: session s of group g bets in the group's cycles
// j = 0, 1, ... while its bet's index g * betsPerGroup + j * sessionsPerGroup + s < N.
export function sessionBets(layout: HistoryLayout, group: number, session: number): number {
  const first = group * layout.betsPerGroup + session;
  if (first >= layout.bets) return 0;
  return Math.min(layout.betsPerSession, Math.ceil((layout.bets - first) / layout.sessionsPerGroup));
}

// Where bet i of the history falls: its group, cycle within the group, session within the
// group, and the moment its cycle starts (its group's sessions were launched at
// from + group * groupStepMs).
export function historyBet(layout: HistoryLayout, i: number) {
  const group = Math.floor(i / layout.betsPerGroup);
  const inGroup = i % layout.betsPerGroup;
  const cycle = Math.floor(inGroup / layout.sessionsPerGroup);
  const session = inGroup % layout.sessionsPerGroup;
  const cycleAt = new Date(layout.from.getTime() + group * layout.groupStepMs + HISTORY_LAUNCH_LEAD_MS + cycle * HISTORY_CYCLE_MS);
  return { group, cycle, session, operator: group % layout.operators, cycleAt };
}

// The groups each chunk of the seeding writes: about `betsPerChunk` bets per statement.
export type HistoryChunk = { firstGroup: number; endGroup: number; firstBet: number; endBet: number };

export function historyChunks(layout: HistoryLayout, betsPerChunk: number): HistoryChunk[] {
  const groupsPerChunk = Math.max(1, Math.floor(betsPerChunk / layout.betsPerGroup));
  const chunks: HistoryChunk[] = [];
  for (let firstGroup = 0; firstGroup < layout.groups; firstGroup += groupsPerChunk) {
    const endGroup = Math.min(layout.groups, firstGroup + groupsPerChunk);
    chunks.push({ firstGroup, endGroup, firstBet: firstGroup * layout.betsPerGroup, endBet: Math.min(layout.bets, endGroup * layout.betsPerGroup) });
  }
  return chunks;
}

// The template database a history is seeded into once and copied from by every run: named
// by N and by the hash of what shapes its rows (the migrations and the seeding's format).
export const historyTemplateName = (bets: number, hash: string) => `rgs_bench_history_${bets}_${hash.slice(0, 8)}`;
