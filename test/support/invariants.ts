import type { Bet, Cycle, Db, Prisma } from '../../src/shared/platform/db/client.js';
import type { LedgerEntry, RecordedRequest, WalletSimulator } from '../../src/simulator/wallet-simulator.js';
import { minorUnitMicro } from '../../src/shared/domain/currency.js';

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
    db.bet.findMany({ where: inScope, include: { round: { select: { id: true, outcomeSide: true, cashOutCents: true, outcome: true } } } }),
    db.round.findMany({ where: inScope, include: { bet: { select: { id: true, status: true } } } }),
    db.pendingRoundBet.findMany({ where: { bet: inScope }, include: { bet: { select: { status: true } } } }),
    db.walletJob.findMany({ where: inScope }),
  ]);
  const operators = new Set(operatorIds);
  const entries = sim.transactions.filter((entry) => operators.has(entry.operatorId));
  const freeCycles = [...new Set(bets.filter((bet) => bet.isFree).map((bet) => bet.cycleId))];
  const cycles = freeCycles.length === 0 ? [] : await db.cycle.findMany({ where: { id: { in: freeCycles } } });

  return [
    ...sim.violations.map((violation) => `wallet simulator: ${violation}`),
    ...betStates(bets),
    ...ledgerPerBet(bets, entries),
    ...unknownMovements(bets, entries),
    ...balances(bets, entries, sim, opts.initialBalanceMicro),
    ...(await checkFreeBetInvariants(db, operatorIds, bets, sim.requests, new Map(cycles.map((c) => [c.id, c])))),
    ...walletJobs.flatMap((job) => (job.completedAt || job.abandonedAt ? [] : [`wallet job ${job.id} (${job.purpose}): ${openJob(job)}`])),
    ...rounds.flatMap(roundState),
    ...pendingRoundBets.flatMap(heldStake),
    ...(await checkJackpotInvariants(db, operatorIds)),
  ];
}

// D41: each jackpot pool holds what went in less what was paid, and what went in and was paid is
// what the real-money plays with an outcome say: their contributions, and their JACKPOT events
const JACKPOT_PLAYS = `
  SELECT p.operator_id, p.currency, p.pool_micro, p.seeded_micro, p.contributed_micro, p.paid_micro,
         coalesce(sum((r.outcome->>'jackpotContributionMicro')::numeric), 0)::text AS contributions,
         coalesce(sum((SELECT sum((e->>'payoutMicro')::numeric) FROM jsonb_array_elements(r.outcome->'events') e WHERE e->>'type' = 'JACKPOT')), 0)::text AS jackpots
  FROM jackpot_pools p
  LEFT JOIN rounds r ON r.operator_id = p.operator_id AND r.currency = p.currency AND r.outcome IS NOT NULL AND NOT r.demo
  WHERE p.operator_id = ANY($1)
  GROUP BY p.operator_id, p.currency, p.pool_micro, p.seeded_micro, p.contributed_micro, p.paid_micro`;

type JackpotRow = { operator_id: string; currency: string; pool_micro: bigint; seeded_micro: bigint; contributed_micro: bigint; paid_micro: bigint; contributions: string; jackpots: string };

export async function checkJackpotInvariants(db: Db, operatorIds: string[]): Promise<string[]> {
  const pools = await db.$queryRawUnsafe<JackpotRow[]>(JACKPOT_PLAYS, operatorIds);
  return pools.flatMap((p) => {
    const what = `jackpot pool ${p.operator_id} ${p.currency}`;
    const found: string[] = [];
    if (p.seeded_micro + p.contributed_micro - p.paid_micro !== p.pool_micro) found.push(`${what}: seeded + contributed - paid is not the pool`);
    if (BigInt(p.contributions) !== p.contributed_micro) found.push(`${what}: contributed ${p.contributed_micro}, its plays say ${p.contributions}`);
    if (BigInt(p.jackpots) !== p.paid_micro) found.push(`${what}: paid ${p.paid_micro}, its plays' JACKPOT events say ${p.jackpots}`);
    return found;
  });
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

type BetRow = Bet & { round: { id: string; outcomeSide: string | null; cashOutCents: bigint | null; outcome: Prisma.JsonValue } | null };

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
        if (bet.isFree) {
          // D42: a won free bet is credited its net once, "0" included (contract 2.7); a lost
          // one never (its net and calls: checkFreeBetInvariants)
          expect(m.wins.length <= 1, `a settled free bet credited ${m.wins.length} times`);
          for (const win of m.wins) expect(win.amountMicro === payout, `credited ${win.amountMicro}, its payout_micro is ${payout}`);
        } else if (payout > 0n) {
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
    // D42, contract 8.4: a free bet's debit took no cash, its payout_micro is the net it paid
    const change = bet.status !== 'SETTLED' ? 0n : bet.isFree ? (bet.payoutMicro ?? 0n) : (bet.payoutMicro ?? 0n) - bet.amountMicro;
    account(bet.playerRef, bet.currency).expectedChange += change;
  }
  const freeDebits = new Set(bets.filter((bet) => bet.isFree).map((bet) => bet.betTransactionUuid));
  return [...accounts.values()].flatMap(({ playerRef, currency, expectedChange }) => {
    const start = initialBalance(playerRef, currency, sim.transactions, initial, freeDebits);
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
  freeDebits: Set<string>,
): bigint | undefined {
  if (typeof initial === 'bigint') return initial;
  if (initial) return initial(playerRef, currency);
  // the first movement of an account is a debit or a win, never a rollback (a rollback
  // reverses an earlier movement); a free bet's debit (D42) is booked with its stake but
  // moves nothing
  const first = allEntries.find((e) => e.playerRef === playerRef && e.currency === currency);
  if (!first) return undefined;
  if (first.type === 'bet') return freeDebits.has(first.transactionUuid) ? first.balanceAfterMicro : first.balanceAfterMicro + first.amountMicro;
  return first.balanceAfterMicro - first.amountMicro;
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

// D42: the free-bet invariants, from the rows themselves, in plain SQL here rather than
// through the product's totals (freebets/campaigns.ts), so that the two are checked against
// each other's rules and not against themselves:
// - a grant has played its live bets (PENDING, ACCEPTED, SETTLED naming it), and played +
//   remaining + cancelled = granted with remaining = rounds - cancelled - played never below
//   0 (no grant has more live bets than its rounds less those cancelled at the cancellation)
//   and 0 once its campaign is cancelled, when cancelled is every round not played (one
//   given back after the cancellation included);
// - a bet naming a grant is a free bet of the grant's operator, player, game and currency at
//   the campaign's stake, and a free bet names a grant;
// - every debit request of a free bet the wallet received carried isFree true, the
//   campaign's stake and its campaignRef as bonusRef; a paid bet's carried no isFree;
// - a settled free bet that won had its win call(s) for max(payout - stake, 0), its payout
//   worked out here from its round and its cycle's terms (contract 8.4, D40, D46), and its
//   payout_micro is that net; one that lost has payout_micro 0 and no win call.
const GRANTS = `
  SELECT g.id, g.rounds, g.cancelled, g.player_ref, g.operator_id, c.state, c.campaign_ref, c.stake_micro, c.game_code, c.currency,
         (SELECT count(*) FROM bets b WHERE b.free_bet_grant_id = g.id AND b.status IN ('PENDING', 'ACCEPTED', 'SETTLED'))::int AS played
  FROM free_bet_grants g JOIN free_bet_campaigns c ON c.id = g.campaign_id
  WHERE g.operator_id = ANY($1::text[])`;

type GrantRow = {
  id: string;
  rounds: number;
  cancelled: number;
  player_ref: string;
  operator_id: string;
  state: string;
  campaign_ref: string;
  stake_micro: bigint;
  game_code: string;
  currency: string;
  played: number;
};

export async function checkFreeBetInvariants(
  db: Db,
  operatorIds: string[],
  bets: BetRow[],
  requests: readonly RecordedRequest[],
  cycles: Map<string, Cycle>,
): Promise<string[]> {
  const grants = await db.$queryRawUnsafe<GrantRow[]>(GRANTS, operatorIds);
  const found: string[] = [];
  for (const g of grants) {
    const cancelled = g.state === 'CANCELLED';
    const remaining = cancelled ? 0 : g.rounds - g.cancelled - g.played;
    const unplayed = cancelled ? Math.max(g.rounds - g.played, 0) : g.cancelled;
    const what = `grant ${g.id} (${g.rounds} rounds, played ${g.played}, cancelled ${g.cancelled} at the cancellation, campaign ${g.state})`;
    if (g.cancelled < 0 || g.cancelled > g.rounds) found.push(`${what}: cancelled is out of 0..rounds`);
    if (g.cancelled > 0 && !cancelled) found.push(`${what}: rounds cancelled in a campaign that is not`);
    if (g.played + g.cancelled > g.rounds) found.push(`${what}: more live bets than rounds not cancelled`);
    else if (g.played + remaining + unplayed !== g.rounds) found.push(`${what}: played + remaining ${remaining} + cancelled ${unplayed} is not the ${g.rounds} granted`);
  }
  const grantOf = new Map(grants.map((g) => [g.id, g]));
  // the bet requests the wallet received, by transactionUuid, and the win requests by the bet they reference
  const debitRequests = new Map<string, Record<string, unknown>[]>();
  const winRequests = new Map<string, Record<string, unknown>[]>();
  for (const request of requests) {
    const body = request.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') continue;
    const key = request.endpoint === 'bet' ? body.transactionUuid : request.endpoint === 'win' ? body.referenceTransactionUuid : undefined;
    if (typeof key !== 'string') continue;
    const into = request.endpoint === 'bet' ? debitRequests : winRequests;
    into.set(key, [...(into.get(key) ?? []), body]);
  }
  for (const bet of bets) {
    if (bet.demo) continue;
    const what = (finding: string) => found.push(`bet ${bet.id} (${bet.isFree ? 'free' : 'paid'}, ${bet.status}, stake ${bet.amountMicro}, payout ${bet.payoutMicro ?? '-'}): ${finding}`);
    const debits = debitRequests.get(bet.betTransactionUuid) ?? [];
    if (!bet.isFree) {
      if (bet.freeBetGrantId !== null) what(`names grant ${bet.freeBetGrantId} but is not free`);
      for (const debit of debits) if ('isFree' in debit || 'bonusRef' in debit) what(`a paid bet's debit carried isFree ${String(debit.isFree)}, bonusRef ${String(debit.bonusRef)}`);
      continue;
    }
    const grant = bet.freeBetGrantId === null ? undefined : grantOf.get(bet.freeBetGrantId);
    if (!grant) {
      what(`names no grant of its operator (${bet.freeBetGrantId ?? 'none'})`);
      continue;
    }
    if (grant.operator_id !== bet.operatorId || grant.player_ref !== bet.playerRef || grant.game_code !== bet.gameCode || grant.currency !== bet.currency) {
      what(`spends grant ${grant.id} of ${grant.player_ref} in ${grant.game_code}/${grant.currency}`);
    }
    if (bet.amountMicro !== grant.stake_micro) what(`its stake is not its campaign's ${grant.stake_micro}`);
    for (const debit of debits) {
      if (debit.isFree !== true || debit.amountMicro !== grant.stake_micro.toString() || debit.bonusRef !== grant.campaign_ref) {
        what(`its debit carried isFree ${String(debit.isFree)}, amountMicro ${String(debit.amountMicro)}, bonusRef ${String(debit.bonusRef)}; expected true, ${grant.stake_micro}, ${grant.campaign_ref}`);
      }
    }
    // a bet voided after its win was given up (D23, 4.2) had win calls, none booked (ledgerPerBet)
    if (bet.status !== 'SETTLED') continue;
    const wins = winRequests.get(bet.betTransactionUuid) ?? [];
    const net = freeBetNet(bet, cycles.get(bet.cycleId));
    if (net === undefined) {
      what('its round or cycle is missing');
    } else if (net === null) {
      if (wins.length > 0) what(`lost but ${wins.length} win call(s) were made`);
      if (bet.payoutMicro !== 0n) what('lost but its payout_micro is not 0');
    } else {
      if (wins.length === 0) what(`won, net ${net}, but no win call was made`);
      for (const win of wins) if (win.amountMicro !== net.toString()) what(`its win call was for ${String(win.amountMicro)}, its net is max(payout - stake, 0) = ${net}`);
      // a win the wallet refused as unknown (4.2) is settled without payout
      if (bet.payoutMicro !== net && bet.payoutMicro !== 0n) what(`its payout_micro is not its net ${net}`);
    }
  }
  return found;
}

// a settled free bet's net (contract 8.4, D42): max(payout - stake, 0) with the payout as a
// paid bet of the same stake would have had it, after the cycle's payoutRounding (D46); null
// when it lost; undefined when its round or cycle is not there to tell
function freeBetNet(bet: BetRow, cycle: Cycle | undefined): bigint | null | undefined {
  if (!bet.round || !cycle) return undefined;
  let payout: bigint;
  if (bet.gameCode === 'gems') {
    // D41: the play's events' sum, as stored with its outcome
    const outcome = bet.round.outcome as { payoutMicro?: string } | null;
    if (!outcome?.payoutMicro) return undefined;
    payout = BigInt(outcome.payoutMicro);
    if (payout === 0n) return null;
  } else if (bet.gameCode === 'crash') {
    // D40: floor(stake * cents / 100), at most maxPayoutMicro
    if (bet.round.cashOutCents === null) return null;
    const max = (cycle.params as { maxPayoutMicro?: string } | null)?.maxPayoutMicro;
    payout = (bet.amountMicro * bet.round.cashOutCents) / 100n;
    if (max !== undefined && payout > BigInt(max)) payout = BigInt(max);
  } else {
    // dice, 8.4: gross = stake * multiplier / 100000, less commission = gross * commission / 100000
    if (bet.round.outcomeSide === null || bet.round.outcomeSide !== bet.side) return null;
    const gross = (bet.amountMicro * cycle.payoutMultiplierScaled) / 100000n;
    payout = gross - (gross * cycle.commissionMicro) / 100000n;
  }
  if (cycle.payoutRounding === 'minor_unit') payout -= payout % minorUnitMicro(bet.currency);
  const net = payout - bet.amountMicro;
  return net > 0n ? net : 0n;
}
