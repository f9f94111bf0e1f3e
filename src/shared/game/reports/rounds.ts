import { Prisma, type Bet, type Db } from '../../platform/db/client.js';
import { encodeCursor, type ListingPosition } from './cursor.js';
import { FINISHES, finishedWithin, timestamptz, type Finish, type TimeRange } from './finished-rounds.js';
import { callsOfTransactions } from '../../wallet/audit.js';
import { BET_REJECTED, betView, rejectedBetRoundView, roundView, walletCallView, winCallView } from './round-view.js';

// GET /v1/rounds and GET /v1/rounds/{id} (D10), always within one operator.

// D35: the session also says whether the round is a sandbox one; D44: the profile it played under
const SESSION_FIELDS = { playerRef: true, sandbox: true, jurisdiction: true, jurisdictionProfile: true } as const;
const withPlayerAndBet = { session: { select: SESSION_FIELDS }, bet: true } as const;

export async function listFinishedRounds(db: Db, operatorId: string, range: TimeRange, after: ListingPosition | undefined, limit: number) {
  // keyset pagination on (finishing time, id); one row beyond the page tells whether more follow
  const take = limit + 1;
  const branch = (finish: Finish) => Prisma.sql`
    (SELECT id, ${finish.at} AS finished_at FROM rounds
     WHERE ${finishedWithin(operatorId, range, finish)}
     ${after ? Prisma.sql`AND (${finish.at}, id) > (${timestamptz(after.at)}, ${after.id}::uuid)` : Prisma.empty}
     ORDER BY ${finish.at}, id LIMIT ${take})`;
  const page = await db.$queryRaw<{ id: string; finishedAt: Date }[]>`
    SELECT id, finished_at AS "finishedAt" FROM (${Prisma.join(FINISHES.map(branch), ' UNION ALL ')}) AS finished
    ORDER BY finished_at, id LIMIT ${take}`;

  const shown = page.slice(0, limit);
  const rows = await db.round.findMany({ where: { id: { in: shown.map((r) => r.id) } }, include: withPlayerAndBet });
  const byId = new Map(rows.map((row) => [row.id, row]));
  const bonusRefs = await bonusRefsOf(db, rows.map((row) => row.bet));
  const last = shown.at(-1);
  return {
    rounds: shown.map((r) => {
      const round = byId.get(r.id)!;
      return roundView(round, bonusRefOf(bonusRefs, round.bet));
    }),
    nextCursor: page.length > limit && last ? encodeCursor({ at: last.finishedAt, id: last.id }) : null,
  };
}

// Any round of the operator, finished or not, demo included (flagged), with its bet (D1: one;
// a list in the answer, as D10 words it) and the wallet audit rows of the bet's transactions
// (bet, win, rollback). D22: a roundId that never became a round but went to the wallet with
// a refused or uncertain debit reads as a round voided for bet_rejected.
export async function findRound(db: Db, operatorId: string, roundId: string) {
  const round = await db.round.findFirst({ where: { id: roundId, operatorId }, include: withPlayerAndBet });
  if (!round) return findRejectedBetRound(db, operatorId, roundId);
  const { bet } = round;
  const [walletCalls, winJob, bonusRefs] = await Promise.all([
    walletCallsOf(db, operatorId, bet),
    db.walletJob.findFirst({ where: { betId: bet.id, endpoint: 'win' } }),
    bonusRefsOf(db, [bet]),
  ]);
  const bonusRef = bonusRefOf(bonusRefs, bet);
  return {
    ...roundView(round, bonusRef),
    voidReason: round.voidReason,
    demo: round.demo,
    // D23: where the bet's win call stands
    bets: [{ ...betView(bet, bonusRef), winCall: winCallView(winJob) }],
    walletCalls: walletCalls.map(walletCallView),
  };
}

// D22: the bet behind a roundId that was sent to the wallet and never became a round; a
// roundId of a bet whose debit was never sent (a demo bet, a refusal before the call) is
// unknown to the wallet and stays unknown here.
export async function findRejectedBetRound(db: Db, operatorId: string, roundId: string) {
  const bet = await db.bet.findFirst({ where: { roundId, operatorId, status: 'REJECTED' }, include: { session: { select: SESSION_FIELDS } } });
  if (!bet) return undefined;
  const [calls, bonusRefs] = await Promise.all([walletCallsOf(db, operatorId, bet), bonusRefsOf(db, [bet])]);
  const debit = calls.filter((call) => call.endpoint === 'bet' && call.transactionUuid === bet.betTransactionUuid).at(-1);
  if (!debit) return undefined;
  const bonusRef = bonusRefOf(bonusRefs, bet);
  return {
    ...rejectedBetRoundView(bet, debit.respondedAt ?? debit.createdAt, bet.session, bonusRef),
    voidReason: BET_REJECTED,
    demo: bet.demo,
    // a refused debit is never followed by a win
    bets: [{ ...betView(bet, bonusRef), winCall: null }],
    walletCalls: calls.map(walletCallView),
  };
}

// D42: the campaignRef of each free bet's grant (the bonusRef its debit carried, contract 2.6),
// by grant id; one read for a page of rounds, none when no bet is free
async function bonusRefsOf(db: Db, bets: Pick<Bet, 'freeBetGrantId'>[]): Promise<Map<string, string>> {
  const grantIds = [...new Set(bets.map((bet) => bet.freeBetGrantId).filter((id): id is string => id !== null))];
  if (grantIds.length === 0) return new Map();
  const grants = await db.freeBetGrant.findMany({ where: { id: { in: grantIds } }, select: { id: true, campaign: { select: { campaignRef: true } } } });
  return new Map(grants.map((grant) => [grant.id, grant.campaign.campaignRef]));
}

const bonusRefOf = (refs: Map<string, string>, bet: Pick<Bet, 'freeBetGrantId'>) => (bet.freeBetGrantId === null ? null : (refs.get(bet.freeBetGrantId) ?? null));

function walletCallsOf(db: Db, operatorId: string, bet: Pick<Bet, 'betTransactionUuid' | 'winTransactionUuid' | 'rollbackTransactionUuid'>) {
  const transactionUuids = [bet.betTransactionUuid, bet.winTransactionUuid, bet.rollbackTransactionUuid].filter(
    (uuid): uuid is string => uuid !== null,
  );
  return callsOfTransactions(db, operatorId, transactionUuids);
}
