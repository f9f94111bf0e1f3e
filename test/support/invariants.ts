import type { Bet, Db } from '../../src/shared/platform/db/client.js';
import type { LedgerEntry, WalletSimulator } from '../../src/simulator/wallet-simulator.js';

// The money invariants the fault suite checks once a test has quiesced, however
// the service was hurt on the way: the service's records (contract 2.13) against the
// operator's ledger (the wallet simulator's, contract 4.2). Each finding is one readable
// line; an empty list means the money is right.

export type InvariantScope = {
  // the operators whose records are looked at. checkMoneyInvariants defaults to those whose
  // wallet is the simulator; waitForQuiescence, which has no simulator, to every operator.
  // Scope it: the test database is shared by every suite of a run, and earlier suites leave
  // retries and abandoned jobs of their own behind.
  operatorIds?: string[];
};

export type InvariantOptions = InvariantScope & {
  // a player's balance before the first movement; by default derived from the ledger (its
  // first entry for the account), which holds while the test funds a player with
  // setBalance only before that player's first bet
  initialBalanceMicro?: bigint | ((playerRef: string, currency: string) => bigint);
};

export async function checkMoneyInvariants(db: Db, sim: WalletSimulator, opts: InvariantOptions = {}): Promise<string[]> {
  const operatorIds = opts.operatorIds ?? (await db.operator.findMany({ where: { walletUrl: sim.url }, select: { id: true } })).map((o) => o.id);
  if (operatorIds.length === 0) throw new Error(`no operator to check: none has ${sim.url} as its wallet and no operatorIds were given`);
  const inScope = { operatorId: { in: operatorIds } };
  const [bets, rounds, pendingRoundBets, walletJobs] = await Promise.all([
    db.bet.findMany({ where: inScope, include: { round: { select: { id: true } } } }),
    db.round.findMany({ where: inScope, include: { bet: { select: { id: true, status: true } } } }),
    db.pendingRoundBet.findMany({ where: { bet: inScope }, include: { bet: { select: { status: true } } } }),
    db.walletJob.findMany({ where: inScope }),
  ]);
  const operators = new Set(operatorIds);
  const entries = sim.transactions.filter((entry) => operators.has(entry.operatorId));

  return [
    ...sim.violations.map((violation) => `wallet simulator: ${violation}`),
    ...betStates(bets),
    ...ledgerPerBet(bets, entries),
    ...unknownMovements(bets, entries),
    ...balances(bets, entries, sim, opts.initialBalanceMicro),
    ...walletJobs.flatMap((job) => (job.completedAt || job.abandonedAt ? [] : [`wallet job ${job.id} (${job.purpose}): ${openJob(job)}`])),
    ...rounds.flatMap(roundState),
    ...pendingRoundBets.flatMap(heldStake),
  ];
}

export type QuiescenceOptions = InvariantScope & { timeoutMs: number };

// Waits until nothing is in flight: no bet PENDING or ACCEPTED, no round unsettled, every
// wallet job completed or abandoned, every webhook event delivered or failed. This waits for a condition (the service finishing its
// work, retries included), so it polls; it is not a sleep standing in for synchronisation.
export async function waitForQuiescence(db: Db, opts: QuiescenceOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const open = await openWork(db, opts.operatorIds);
    if (open.length === 0) return;
    if (Date.now() > deadline) throw new Error(`not quiescent after ${opts.timeoutMs} ms:\n${open.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// what is still in flight, one line per row (at most a few of each kind)
async function openWork(db: Db, operatorIds: string[] | undefined): Promise<string[]> {
  const scope = operatorIds === undefined ? {} : { operatorId: { in: operatorIds } };
  const shown = 5;
  const [bets, rounds, jobs, events] = await Promise.all([
    db.bet.findMany({ where: { ...scope, status: { in: ['PENDING', 'ACCEPTED'] } }, take: shown + 1 }),
    db.round.findMany({ where: { ...scope, settled: false }, take: shown + 1 }),
    db.walletJob.findMany({ where: { ...scope, completedAt: null, abandonedAt: null }, take: shown + 1 }),
    // D31: an event still to deliver (an operator with a webhook endpoint)
    db.webhookEvent.findMany({ where: { ...scope, status: 'pending' }, take: shown + 1 }),
  ]);
  const lines = (what: string, rows: string[]) => [
    ...rows.slice(0, shown).map((row) => `${what} ${row}`),
    ...(rows.length > shown ? [`${what}s: more not shown`] : []),
  ];
  return [
    ...lines('bet', bets.map((bet) => `${bet.id} is ${bet.status}`)),
    ...lines('round', rounds.map((round) => `${round.id} is unsettled in ${round.state}`)),
    ...lines('wallet job', jobs.map((job) => `${job.id} (${job.purpose}) ${openJob(job)}`)),
    ...lines('webhook event', events.map((event) => `${event.id} (${event.eventType}) is pending after ${event.attempts} attempt(s)`)),
  ];
}

function openJob(job: { attempts: number; nextAttemptAt: Date | null; lastError: string | null }): string {
  // contract 2.13: a pending job always has its next attempt time; without one nothing,
  // not even recovery's re-queueing, will ever run it
  const next = job.nextAttemptAt ? `next attempt at ${job.nextAttemptAt.toISOString()}` : 'pending with no next_attempt_at (stranded)';
  return `neither completed nor abandoned after ${job.attempts} attempt(s), ${next}${job.lastError ? `, last error ${job.lastError}` : ''}`;
}

type BetRow = Bet & { round: { id: string } | null };

// contract 3.2: once quiet, every bet has its verdict; an accepted one always has its round
function betStates(bets: BetRow[]): string[] {
  return bets.flatMap((bet) => {
    if (bet.status === 'PENDING' || bet.status === 'ACCEPTED') return [`bet ${bet.id} is still ${bet.status}`];
    if ((bet.status === 'SETTLED' || bet.status === 'VOIDED') && !bet.round) return [`bet ${bet.id} is ${bet.status} but has no round`];
    if (bet.status === 'SETTLED' && bet.payoutMicro === null) return [`bet ${bet.id} is SETTLED without a payout_micro`];
    return [];
  });
}

// The ledger's movements for one bet (contract 4.2): its debit, the wins referencing it,
// and the rollbacks of either.
type BetMovements = { debits: LedgerEntry[]; wins: LedgerEntry[]; debitRollbacks: LedgerEntry[]; winRollbacks: LedgerEntry[] };

function movementsOf(bet: Bet, byUuid: Map<string, LedgerEntry[]>): BetMovements {
  const of = (type: LedgerEntry['type'], uuid: string) => (byUuid.get(uuid) ?? []).filter((e) => e.type === type);
  const wins = of('win', bet.betTransactionUuid);
  return {
    debits: of('bet', bet.betTransactionUuid),
    wins,
    debitRollbacks: of('rollback', bet.betTransactionUuid),
    winRollbacks: wins.flatMap((win) => of('rollback', win.transactionUuid)),
  };
}

// contract 3.2, 4.2 and 7.1, bet by bet (real-money bets: a demo bet never reaches a wallet)
function ledgerPerBet(bets: Bet[], entries: LedgerEntry[]): string[] {
  // a debit under its own transactionUuid, a win or a rollback under the one it references
  const byUuid = new Map<string, LedgerEntry[]>();
  for (const entry of entries) {
    const uuid = entry.type === 'bet' ? entry.transactionUuid : (entry.referenceTransactionUuid ?? '');
    byUuid.set(uuid, [...(byUuid.get(uuid) ?? []), entry]);
  }
  return bets.filter((bet) => !bet.demo).flatMap((bet) => {
    const m = movementsOf(bet, byUuid);
    const found: string[] = [];
    const expect = (ok: boolean, what: string) => {
      if (!ok) found.push(what);
    };
    expect(m.debits.length <= 1, `debited ${m.debits.length} times`);
    for (const debit of m.debits) expect(debit.amountMicro === bet.amountMicro, `debited ${debit.amountMicro}, its stake is ${bet.amountMicro}`);
    expect(m.winRollbacks.length === 0, `its win was rolled back ${m.winRollbacks.length} time(s)`);
    // a rollback reverses the bet under the transactionUuid the bet records (2.8)
    for (const rollback of m.debitRollbacks) {
      expect(rollback.transactionUuid === bet.rollbackTransactionUuid, `rolled back by ${rollback.transactionUuid}, which the bet does not record`);
    }
    const payout = bet.payoutMicro ?? 0n;
    switch (bet.status) {
      case 'SETTLED':
        expect(m.debits.length === 1, 'settled but never debited');
        expect(m.debitRollbacks.length === 0, `settled but its debit was rolled back ${m.debitRollbacks.length} time(s)`);
        if (payout > 0n) {
          // 4.2 "called once per winning bet", for the payout of 8.4
          expect(m.wins.length === 1, `a settled win of ${payout} credited ${m.wins.length} times, expected once`);
          for (const win of m.wins) {
            expect(win.transactionUuid === bet.winTransactionUuid, `credited by ${win.transactionUuid}, not its winTransactionUuid ${bet.winTransactionUuid}`);
            expect(win.amountMicro === payout, `credited ${win.amountMicro}, its payout_micro is ${payout}`);
          }
        } else {
          expect(m.wins.length === 0, `a settled loss credited ${m.wins.length} time(s)`);
        }
        break;
      case 'VOIDED':
        // 3.2 ACCEPTED -> VOIDED and 8.6: every debit on a voided round is reversed
        expect(m.debitRollbacks.length === m.debits.length, `voided: ${m.debits.length} debit(s), ${m.debitRollbacks.length} rollback(s) of it`);
        expect(m.wins.length === 0, `voided but credited ${m.wins.length} time(s)`);
        break;
      case 'REJECTED':
        // 3.2: a clean reject moved nothing; an uncertain (or late) debit is rolled back
        expect(m.debitRollbacks.length === m.debits.length, `rejected: ${m.debits.length} debit(s), ${m.debitRollbacks.length} rollback(s) of it`);
        expect(m.wins.length === 0, `rejected but credited ${m.wins.length} time(s)`);
        break;
    }
    return found.map((what) => `bet ${bet.id} (${bet.status}, stake ${bet.amountMicro}, payout ${bet.payoutMicro ?? '-'}): ${what}`);
  });
}

// Every movement in the operator's ledger belongs to a bet the service recorded.
function unknownMovements(bets: Bet[], entries: LedgerEntry[]): string[] {
  const known = new Set(bets.filter((bet) => !bet.demo).map((bet) => bet.betTransactionUuid));
  const wins = new Set(entries.filter((e) => e.type === 'win').map((e) => e.transactionUuid));
  return entries.flatMap((entry) => {
    const belongs =
      entry.type === 'bet' ? known.has(entry.transactionUuid)
      : entry.type === 'win' ? known.has(entry.referenceTransactionUuid ?? '')
      : known.has(entry.referenceTransactionUuid ?? '') || wins.has(entry.referenceTransactionUuid ?? '');
    return belongs ? [] : [`ledger ${entry.type} ${entry.transactionUuid} of ${entry.amountMicro} for ${entry.playerRef} belongs to no recorded bet`];
  });
}

const accountKey = (playerRef: string, currency: string) => `${playerRef}\u0000${currency}`;

// Each player's wallet balance is what the settled bets say: initial - stakes + payouts.
// Voided and rejected bets net to nothing (checked above).
function balances(
  bets: Bet[],
  entries: LedgerEntry[],
  sim: WalletSimulator,
  initial: InvariantOptions['initialBalanceMicro'],
): string[] {
  const accounts = new Map<string, { playerRef: string; currency: string; expectedChange: bigint }>();
  const account = (playerRef: string, currency: string) => {
    const key = accountKey(playerRef, currency);
    let found = accounts.get(key);
    if (!found) accounts.set(key, (found = { playerRef, currency, expectedChange: 0n }));
    return found;
  };
  for (const entry of entries) account(entry.playerRef, entry.currency);
  for (const bet of bets) {
    if (bet.demo) continue;
    const change = bet.status === 'SETTLED' ? (bet.payoutMicro ?? 0n) - bet.amountMicro : 0n;
    account(bet.playerRef, bet.currency).expectedChange += change;
  }
  return [...accounts.values()].flatMap(({ playerRef, currency, expectedChange }) => {
    const start = initialBalance(playerRef, currency, sim.transactions, initial);
    if (start === undefined) return [];
    const expected = start + expectedChange;
    const actual = sim.balanceOf(playerRef, currency);
    return actual === expected ? [] : [`balance of ${playerRef} ${currency} is ${actual}, the settled bets make it ${start} ${sign(expectedChange)} = ${expected}`];
  });
}

function initialBalance(
  playerRef: string,
  currency: string,
  allEntries: LedgerEntry[],
  initial: InvariantOptions['initialBalanceMicro'],
): bigint | undefined {
  if (typeof initial === 'bigint') return initial;
  if (initial) return initial(playerRef, currency);
  // the first movement of an account is a debit or a win, never a rollback (a rollback
  // reverses an earlier movement)
  const first = allEntries.find((e) => e.playerRef === playerRef && e.currency === currency);
  if (!first) return undefined;
  return first.type === 'bet' ? first.balanceAfterMicro + first.amountMicro : first.balanceAfterMicro - first.amountMicro;
}

const sign = (change: bigint) => (change < 0n ? `- ${-change}` : `+ ${change}`);

// contract 3.1: SETTLED and VOIDED are terminal, and the bet follows its round
function roundState(round: { id: string; state: string; settled: boolean; bet: { id: string; status: string } }): string[] {
  const found: string[] = [];
  if (!round.settled) found.push(`round ${round.id} is unsettled (settled=false) in ${round.state}`);
  if (round.state !== 'SETTLED' && round.state !== 'VOIDED') found.push(`round ${round.id} is still ${round.state}`);
  if ((round.state === 'SETTLED' || round.state === 'VOIDED') && round.bet.status !== round.state) {
    found.push(`round ${round.id} is ${round.state} but its bet ${round.bet.id} is ${round.bet.status}`);
  }
  return found;
}

// contract 2.13 and 3.2: the held stake is resolved with a settled bet, refunded with a voided one
function heldStake(pending: { betId: string; state: string; bet: { status: string } }): string[] {
  const expected = pending.bet.status === 'SETTLED' ? 'RESOLVED' : pending.bet.status === 'VOIDED' ? 'REFUNDED' : undefined;
  if (pending.state === expected) return [];
  return [`pending round bet of bet ${pending.betId} is ${pending.state}, its bet is ${pending.bet.status}`];
}
