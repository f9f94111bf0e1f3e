import { expect } from 'chai';
import pg from 'pg';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tick, until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { checkMoneyInvariants, waitForQuiescence } from '../../support/invariants.js';
import { WALLET_RETRY_BUDGET_MS } from '../../../src/shared/platform/queues.js';
import { crashOperator, crashSeed, seatCrashPlayer } from '../../support/crash.js';
import { curveTime } from '../../../src/shared/domain/games/crash-curve.js';
import { placeBets } from '../../../src/shared/game/bets/place.js';
import { resolveOrphanBets } from '../../../src/shared/game/rounds/recovery.js';
import { createCampaign } from '../../support/freebets.js';

// D42, contract 2.6 and 8.4: the player's side of free bets. A bet names freeBetGrantId
// instead of amountMicro; its debit carries isFree and bonusRef and moves no cash at the
// simulator; its win is net of the stake, "0" included (2.7); a grant's rounds bound its bets
// across sessions; an unusable grant is free_bet_unavailable with no wallet call.
describe('free bets: the player spends a grant (D42, contract 2.6, 8.4)', function () {
  this.timeout(60_000);
  let h: Harness;
  // a second node on the same database and Redis, for the race across nodes; started by the
  // test that needs it
  let other: Harness | undefined;
  before(async () => {
    h = await startHarness({}, ROLES_WITHOUT_CLOCK);
  });
  after(async () => {
    await other?.close();
    await h?.close();
  });
  afterEach(() => {
    for (const endpoint of ['bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
  });

  const FUNDS = 10_000_000n;
  const STAKE = 1_000_000n;
  const MINUTE = 60_000;

  const campaign = (operator: TestOperator, playerRefs: string[], overrides: Record<string, unknown> = {}) =>
    createCampaign(h, operator, { playerRefs, stakeMicro: STAKE, rounds: 3, ...overrides });

  // launches of one player in one second are told apart by their timestamps (D17: the same
  // bytes in the same second are a replay): each launch of a player a second before its
  // previous one, counted back from its first, so that no two share one
  const launches = new Map<string, { first: number; n: number }>();
  async function seat(operator: TestOperator, playerRef: string, body: Record<string, unknown> = {}, node: Harness = h) {
    h.wallet.setBalance(playerRef, 'EUR', FUNDS);
    const launched = launches.get(playerRef) ?? { first: Math.floor(Date.now() / 1000), n: 0 };
    launches.set(playerRef, { first: launched.first, n: launched.n + 1 });
    const timestamp = launched.first - launched.n;
    const launch = await operator.request('POST', '/v1/session', operator.sessionBody({ playerRef, ...body }), { timestamp });
    expect(launch.status, launch.text).to.equal(200);
    const player = await Player.connect(node.baseUrl, launch.body.sessionToken as string);
    const connected = await player.waitFor('connected');
    return { player, playerRef, sessionId: launch.body.sessionId as string, connected };
  }

  async function openCycle(operator: TestOperator) {
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    return pending.id;
  }

  async function settle(operator: TestOperator, cycleId: string) {
    await tick(h, { cycleId, from: 'BETTING_OPEN' });
    await tick(h, { cycleId, from: 'ROLLING' });
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
  }

  const callsOf = (playerRef: string, endpoint: 'bet' | 'win') =>
    h.wallet.requests.filter((r) => r.endpoint === endpoint && (r.body as { playerRef?: string } | undefined)?.playerRef === playerRef).map((r) => r.body as Record<string, unknown>);

  it('a won free dice bet: debited isFree with bonusRef and the stake, credited the net, the balance never lower; connected and free_bets count down', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const freeRef = uniqueId('player');
    const paidRef = uniqueId('player');
    const { campaignRef, grantOf } = await campaign(operator, [freeRef]);
    const grantId = grantOf.get(freeRef)!;
    const free = await seat(operator, freeRef);
    const paid = await seat(operator, paidRef);
    expect(free.connected.freeBets).to.have.length(1);
    expect(free.connected.freeBets[0]).to.include({ grantId, campaignRef, stakeMicro: STAKE.toString(), remaining: 3 });
    expect(free.connected.freeBets[0].expiresAt).to.be.a('string');
    expect(paid.connected.freeBets).to.deep.equal([]);
    const cycleId = await openCycle(operator);
    const told = free.player.next('free_bets');
    const [freeAck, paidAck] = await Promise.all([
      free.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId }),
      paid.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() }),
    ]);
    expect(freeAck.ok, JSON.stringify(freeAck)).to.equal(true);
    expect(paidAck.ok, JSON.stringify(paidAck)).to.equal(true);
    expect((await told).freeBets[0]).to.include({ grantId, remaining: 2 });
    const [bet] = callsOf(freeRef, 'bet');
    expect(bet).to.include({ isFree: true, bonusRef: campaignRef, amountMicro: STAKE.toString() });
    expect(callsOf(paidRef, 'bet')[0]).to.not.have.any.keys('isFree', 'bonusRef');
    expect(h.wallet.balanceOf(freeRef, 'EUR')).to.equal(FUNDS);
    const result = free.player.next('round_result');
    await settle(operator, cycleId);
    const paidBet = await h.svc.db.bet.findFirstOrThrow({ where: { playerRef: paidRef, cycleId } });
    const freeBet = await h.svc.db.bet.findFirstOrThrow({ where: { playerRef: freeRef, cycleId } });
    expect(freeBet).to.include({ isFree: true, freeBetGrantId: grantId, amountMicro: STAKE, status: 'SETTLED' });
    const net = paidBet.payoutMicro! - STAKE;
    expect(net > 0n).to.equal(true);
    expect(freeBet.payoutMicro).to.equal(net);
    expect(callsOf(freeRef, 'win').map((w) => w.amountMicro)).to.deep.equal([net.toString()]);
    expect((await result).payoutMicro).to.equal(net.toString());
    expect(h.wallet.balanceOf(freeRef, 'EUR')).to.equal(FUNDS + net);
    expect(h.wallet.balanceOf(paidRef, 'EUR')).to.equal(FUNDS - STAKE + paidBet.payoutMicro!);
    free.player.close();
    paid.player.close();
  });

  it('a won free bet whose net is 0 gets a win call of "0"; a lost free bet gets none', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n, payoutMultiplierScaled: 100000n, commissionMicro: 0n });
    const winner = uniqueId('player');
    const loser = uniqueId('player');
    const { grantOf } = await campaign(operator, [winner, loser]);
    const won = await seat(operator, winner);
    const lost = await seat(operator, loser);
    const cycleId = await openCycle(operator);
    const acks = await Promise.all([
      won.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(winner) }),
      lost.player.request('place_bet', { side: 'HIGH', freeBetGrantId: grantOf.get(loser) }),
    ]);
    expect(acks.every((a) => a.ok), JSON.stringify(acks)).to.equal(true);
    await settle(operator, cycleId);
    expect(callsOf(winner, 'win').map((w) => w.amountMicro)).to.deep.equal(['0']);
    expect(callsOf(loser, 'win')).to.deep.equal([]);
    const bets = await h.svc.db.bet.findMany({ where: { cycleId }, orderBy: { playerRef: 'asc' } });
    expect(bets.map((b) => [b.status, b.payoutMicro])).to.deep.equal([['SETTLED', 0n], ['SETTLED', 0n]]);
    expect(h.wallet.balanceOf(winner, 'EUR')).to.equal(FUNDS);
    expect(h.wallet.balanceOf(loser, 'EUR')).to.equal(FUNDS);
    won.player.close();
    lost.player.close();
  });

  it('a grant of 3 rounds spent from 4 sessions of its player at once: 3 bets accepted, the 4th free_bet_unavailable', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef]);
    const seats = [];
    for (let i = 0; i < 4; i++) seats.push(await seat(operator, playerRef));
    await openCycle(operator);
    const acks = await Promise.all(seats.map((s) => s.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(playerRef) })));
    expect(acks.filter((a) => a.ok), JSON.stringify(acks)).to.have.length(3);
    expect(acks.filter((a) => !a.ok).map((a) => a.reason)).to.deep.equal(['free_bet_unavailable']);
    expect(callsOf(playerRef, 'bet')).to.have.length(3);
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.status, totals.text).to.equal(200);
    expect(totals.body).to.include({ played: 3, remaining: 0 });
    for (const s of seats) s.player.close();
  });

  // D42: a grant is usable until expiresAt and not from it, with no job of its own: the
  // placement compares the instant (a second before it, accepted; just past it, refused)
  it('expiry at the instant: a free bet a second before expiresAt is taken, one just past it is free_bet_unavailable', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 5 * MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const expiresAt = new Date(h.svc.now().getTime() + 2 * MINUTE);
    const { grantOf } = await campaign(operator, [playerRef], { expiresAt: expiresAt.toISOString() });
    const grantId = grantOf.get(playerRef)!;
    const seated = await seat(operator, playerRef);
    await openCycle(operator);
    const shift = (to: number) => {
      const by = to - h.svc.now().getTime();
      h.shiftClock(by);
      return by;
    };
    let shifted = shift(expiresAt.getTime() - 1000);
    try {
      const before = await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId });
      expect(before.ok, JSON.stringify(before)).to.equal(true);
      shifted += shift(expiresAt.getTime());
      const after = await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId });
      expect(after.reason).to.equal('free_bet_unavailable');
      expect(callsOf(playerRef, 'bet')).to.have.length(1);
    } finally {
      h.shiftClock(-shifted);
    }
    seated.player.close();
  });

  it('an expired grant, a cancelled one, another player\'s and a demo session are free_bet_unavailable, with no wallet call', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const expiring = uniqueId('player');
    const cancelled = uniqueId('player');
    const other = uniqueId('player');
    const soon = await campaign(operator, [expiring, other], { expiresAt: new Date(h.svc.now().getTime() + MINUTE).toISOString() });
    const later = await campaign(operator, [cancelled]);
    const seats = { expiring: await seat(operator, expiring), cancelled: await seat(operator, cancelled) };
    expect(seats.cancelled.connected.freeBets).to.have.length(1);
    const toldCancelled = seats.cancelled.player.next('free_bets');
    const deleted = await operator.request('DELETE', `/v1/freebets/${later.campaignId}`);
    expect(deleted.status, deleted.text).to.equal(200);
    // the cancellation reaches the player's live session
    expect((await toldCancelled).freeBets).to.deep.equal([]);
    h.shiftClock(2 * MINUTE);
    try {
      await openCycle(operator);
      const acks = await Promise.all([
        seats.expiring.player.request('place_bet', { side: 'LOW', freeBetGrantId: soon.grantOf.get(expiring) }),
        seats.cancelled.player.request('place_bet', { side: 'LOW', freeBetGrantId: later.grantOf.get(cancelled) }),
      ]);
      expect(acks.map((a) => a.reason), JSON.stringify(acks)).to.deep.equal(['free_bet_unavailable', 'free_bet_unavailable']);
      expect(callsOf(expiring, 'bet')).to.deep.equal([]);
      expect(callsOf(cancelled, 'bet')).to.deep.equal([]);
    } finally {
      h.shiftClock(-2 * MINUTE);
    }
    // another player's grant, and (in a fresh cycle) a grant named by a demo session
    const live = await campaign(operator, [other]);
    const cycle = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' }));
    if (cycle.phase !== 'BETTING_OPEN') await openCycle(operator);
    const theirs = await seats.cancelled.player.request('place_bet', { side: 'LOW', freeBetGrantId: live.grantOf.get(other) });
    expect(theirs.reason).to.equal('free_bet_unavailable');
    const demoLaunch = await operator.request('POST', '/v1/session', operator.sessionBody({ playerRef: other, mode: 'demo' }));
    expect(demoLaunch.status, demoLaunch.text).to.equal(200);
    const demo = await Player.connect(h.baseUrl, demoLaunch.body.sessionToken as string);
    const connected = await demo.waitFor('connected');
    expect(connected.freeBets).to.deep.equal([]);
    const ack = await demo.request('place_bet', { side: 'LOW', freeBetGrantId: live.grantOf.get(other) });
    expect(ack.reason).to.equal('free_bet_unavailable');
    demo.close();
    expect(callsOf(other, 'bet')).to.deep.equal([]);
    for (const s of Object.values(seats)) s.player.close();
  });

  it('a free bet the wallet refuses is REJECTED and gives its round back', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef]);
    const seated = await seat(operator, playerRef);
    const cycleId = await openCycle(operator);
    h.wallet.setFault('bet', { kind: 'status', status: 'RS_ERROR_LIMIT_REACHED' }, 1);
    const told = seated.player.next('free_bets');
    const ack = await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(playerRef) });
    h.wallet.setFault('bet', null);
    expect(ack).to.include({ ok: false, reason: 'wallet_rejected:RS_ERROR_LIMIT_REACHED' });
    expect((await told).freeBets[0]).to.include({ remaining: 3 });
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { playerRef, cycleId } });
    expect(bet.status).to.equal('REJECTED');
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.body).to.include({ played: 0, remaining: 3 });
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(FUNDS);
    seated.player.close();
  });

  // D42: a cancellation counts what each grant played under the grant's lock, which a free
  // bet's placement holds until it commits: a bet committed while the cancellation waited is
  // played, not cancelled too (played + remaining + cancelled = granted)
  it('a cancellation that waits for a placement holding the grant counts the bet that placement committed', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef]);
    const seated = await seat(operator, playerRef);
    const cycleId = await openCycle(operator);
    // a bet row naming the grant, not live (the wallet refused it), to stand for a placement
    h.wallet.setFault('bet', { kind: 'status', status: 'RS_ERROR_LIMIT_REACHED' }, 1);
    await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(playerRef) });
    h.wallet.setFault('bet', null);
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { playerRef, cycleId } });
    // the placement: the grant's lock, its bet made live, not yet committed
    const placement = new pg.Client({ connectionString: h.svc.config.databaseUrl });
    await placement.connect();
    try {
      await placement.query('BEGIN');
      await placement.query('SELECT 1 FROM free_bet_grants WHERE id = $1 FOR UPDATE', [grantOf.get(playerRef)]);
      await placement.query("UPDATE bets SET status = 'ACCEPTED' WHERE id = $1", [bet.id]);
      const cancel = operator.request('DELETE', `/v1/freebets/${campaignId}`);
      await until('the cancellation to wait for the grant', async () => {
        const [row] = (await placement.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
        )).rows;
        return row!.n > 0;
      });
      await placement.query('COMMIT');
      const cancelled = await cancel;
      expect(cancelled.status, cancelled.text).to.equal(200);
      expect(cancelled.body).to.include({ granted: 3, played: 1, cancelled: 2, remaining: 0 });
    } finally {
      await placement.end();
    }
    seated.player.close();
  });

  // D42, contract 7.1: an uncertain debit is rejected and rolled back; the bet, REJECTED, is no
  // longer live, so the grant has its round back, once: with the rollback done, the grant is
  // spent exactly 3 times more (the first session bets again in the same cycle: a REJECTED bet
  // does not hold its place)
  it('a free bet whose wallet call is uncertain is rolled back and its grant round given back exactly once', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 0n, highWeight: 1n });
    const playerRef = uniqueId('player');
    const { campaignId, campaignRef, grantOf } = await campaign(operator, [playerRef]);
    const grantId = grantOf.get(playerRef)!;
    const seats = [];
    for (let i = 0; i < 4; i++) seats.push(await seat(operator, playerRef));
    const cycleId = await openCycle(operator);
    // the wallet books the debit and its answer is lost
    h.wallet.setFault('bet', { kind: 'drop_after_apply' }, 1);
    const told = seats[0]!.player.next('free_bets');
    const ack = await seats[0]!.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId });
    expect(ack).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
    expect((await told).freeBets[0]).to.include({ grantId, remaining: 3 });
    const uncertain = await h.svc.db.bet.findFirstOrThrow({ where: { playerRef, cycleId } });
    expect(uncertain).to.include({ status: 'REJECTED', isFree: true, freeBetGrantId: grantId });
    await until('the rollback', async () => (await h.svc.db.walletJob.findFirst({ where: { betId: uncertain.id, endpoint: 'rollback', completedAt: { not: null } } })) ?? null);
    // the debit and its rollback, both of the stake, neither moving cash
    const ledger = h.wallet.transactions.filter((t) => t.playerRef === playerRef);
    expect(ledger.map((t) => [t.type, t.amountMicro])).to.deep.equal([['bet', STAKE], ['rollback', STAKE]]);
    expect(callsOf(playerRef, 'bet')[0]).to.include({ isFree: true, bonusRef: campaignRef, amountMicro: STAKE.toString() });
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(FUNDS);
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.body).to.include({ granted: 3, played: 0, remaining: 3 });

    const acks = await Promise.all(seats.map((s) => s.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId })));
    expect(acks.filter((a) => a.ok), JSON.stringify(acks)).to.have.length(3);
    expect(acks.filter((a) => !a.ok).map((a) => a.reason)).to.deep.equal(['free_bet_unavailable']);
    await settle(operator, cycleId);
    const after = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(after.body).to.include({ granted: 3, played: 3, remaining: 0, cancelled: 0 });
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
    for (const s of seats) s.player.close();
  });

  // D42: a cancellation cancels what is unplayed; a bet already placed is played and stands,
  // through its settlement and its win
  it('cancel with a round in flight: the round in flight stands and is paid, the rest are cancelled', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef]);
    const grantId = grantOf.get(playerRef)!;
    const seated = await seat(operator, playerRef);
    const second = await seat(operator, playerRef);
    const cycleId = await openCycle(operator);
    const ack = await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await seated.player.waitFor('free_bets', (p) => p.freeBets[0]?.remaining === 2);
    const told = seated.player.next('free_bets');
    const cancelled = await operator.request('DELETE', `/v1/freebets/${campaignId}`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body).to.include({ granted: 3, played: 1, cancelled: 2, remaining: 0 });
    expect((await told).freeBets).to.deep.equal([]);
    // nothing more can be spent, from another session of the player either
    const again = await second.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId });
    expect(again.reason).to.equal('free_bet_unavailable');
    // the round in flight is settled and paid its net
    const result = seated.player.next('round_result', (p) => p.roundId === ack.roundId);
    await settle(operator, cycleId);
    const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } });
    expect(bet).to.include({ status: 'SETTLED', freeBetGrantId: grantId });
    expect(bet.payoutMicro! > 0n).to.equal(true);
    expect((await result).payoutMicro).to.equal(bet.payoutMicro!.toString());
    expect(callsOf(playerRef, 'win').map((w) => w.amountMicro)).to.deep.equal([bet.payoutMicro!.toString()]);
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.body).to.include({ granted: 3, played: 1, cancelled: 2, remaining: 0, totalPaidMicro: bet.payoutMicro!.toString() });
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
    seated.player.close();
    second.player.close();
  });

  // D42: a cancellation cancels every round its campaign has not played, then and later: a bet
  // in flight at the cancellation that is then refused gives its round to the cancelled ones
  // (a cancelled campaign gives nothing back to play), so played + remaining + cancelled stays
  // what was granted
  it('cancel while a free debit is in flight that the wallet then leaves uncertain: its round is cancelled, not lost', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef]);
    const grantId = grantOf.get(playerRef)!;
    const seated = await seat(operator, playerRef);
    const cycleId = await openCycle(operator);
    // the debit is never answered: it times out, uncertain, and is rolled back (contract 7.1)
    h.wallet.setFault('bet', { kind: 'hang' }, 1);
    const ack = seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId });
    await until('the free debit in flight', async () => (await h.svc.db.bet.findFirst({ where: { playerRef, cycleId, status: 'PENDING' } })) ?? null);
    const cancelled = await operator.request('DELETE', `/v1/freebets/${campaignId}`);
    expect(cancelled.body).to.include({ granted: 3, played: 1, cancelled: 2, remaining: 0 });
    expect((await ack).ok).to.equal(false);
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { playerRef, cycleId } });
    expect(bet.status).to.equal('REJECTED');
    await until('the rollback', async () => (await h.svc.db.walletJob.findFirst({ where: { betId: bet.id, endpoint: 'rollback', completedAt: { not: null } } })) ?? null);
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.body).to.include({ state: 'cancelled', granted: 3, played: 0, cancelled: 3, remaining: 0 });
    const listed = await operator.request('GET', `/v1/freebets?campaignRef=${encodeURIComponent(totals.body.campaignRef as string)}`);
    expect((listed.body.grants as Record<string, unknown>[]).map((g) => [g.played, g.cancelled, g.remaining, g.status])).to.deep.equal([[0, 3, 0, 'cancelled']]);
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
    seated.player.close();
  });

  // D42: "a grant is used at most rounds times across every node": the grant's row lock is
  // Postgres's, whichever node places the bet
  it('a grant of 3 rounds spent from 4 sessions on 2 nodes at once: 3 bets accepted, the 4th free_bet_unavailable', async () => {
    // the web and bet roles only: the settle and rollback work stays with the first node, whose
    // clock the tests move
    other ??= await startHarness({}, ['api', 'realtime', 'bet']);
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef]);
    const grantId = grantOf.get(playerRef)!;
    const seats = [];
    for (const node of [h, other, h, other]) seats.push(await seat(operator, playerRef, {}, node));
    const cycleId = await openCycle(operator);
    const acks = await Promise.all(seats.map((s) => s.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId })));
    expect(acks.filter((a) => a.ok), JSON.stringify(acks)).to.have.length(3);
    expect(acks.filter((a) => !a.ok).map((a) => a.reason)).to.deep.equal(['free_bet_unavailable']);
    expect(callsOf(playerRef, 'bet')).to.have.length(3);
    await settle(operator, cycleId);
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.body).to.include({ granted: 3, played: 3, remaining: 0 });
    expect(await h.svc.db.bet.count({ where: { freeBetGrantId: grantId, status: 'SETTLED' } })).to.equal(3);
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
    for (const s of seats) s.player.close();
  });

  // D42, contract 4.2 and D23: a free bet whose win is abandoned after 24 hours is voided after
  // its acknowledgement (and its result): its round is given back, and the session is told so
  it('a free bet voided after its acknowledgement (its win abandoned): the session is sent free_bets with the round back', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef]);
    const grantId = grantOf.get(playerRef)!;
    const seated = await seat(operator, playerRef);
    const cycleId = await openCycle(operator);
    const spent = seated.player.next('free_bets');
    const ack = await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    expect((await spent).freeBets[0]).to.include({ grantId, remaining: 2 });
    h.wallet.setFault('win', { kind: 'http', httpStatus: 500 });
    await tick(h, { cycleId, from: 'BETTING_OPEN' });
    await tick(h, { cycleId, from: 'ROLLING' });
    const win = await until('the win job', () => h.svc.db.walletJob.findFirst({ where: { betId: ack.betId, endpoint: 'win' } }));
    await until('the first failed win', async () => (await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: win.id } })).attempts >= 1);
    const told = seated.player.messages.length;
    h.shiftClock(WALLET_RETRY_BUDGET_MS + MINUTE);
    try {
      await seated.player.waitFor('win_failed', (p) => p.betId === ack.betId, 15_000);
      const back = await seated.player.waitFor('free_bets', () => true, 10_000, told);
      expect(back.freeBets[0]).to.include({ grantId, remaining: 3 });
      expect(await h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } })).to.include({ status: 'VOIDED' });
      h.wallet.setFault('win', null);
      await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    } finally {
      h.shiftClock(-(WALLET_RETRY_BUDGET_MS + MINUTE));
    }
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.body).to.include({ granted: 3, played: 0, remaining: 3 });
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
    seated.player.close();
  });

  // D42: a free bet rejected after its acknowledgement told the player wallet_timeout (its bet
  // still PENDING then, its round still spent): recovery's rejection gives the round back and
  // tells the session
  it('a free bet left PENDING and rejected by recovery: the session is sent free_bets with the round back', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { grantOf } = await campaign(operator, [playerRef]);
    const grantId = grantOf.get(playerRef)!;
    const seated = await seat(operator, playerRef);
    await openCycle(operator);
    // a bet row placed as the realtime node places it, whose debit never ran (its process died)
    const [placed] = await placeBets(h.svc, [{ sessionId: seated.sessionId, side: 'LOW', amountMicro: 0n, freeBetGrantId: grantId }], null);
    if (!placed!.ok) throw new Error(placed!.reason);
    await h.svc.db.bet.update({ where: { id: placed!.ticket.betId }, data: { createdAt: new Date(Date.now() - 10 * MINUTE) } });
    const back = seated.player.next('free_bets');
    await resolveOrphanBets(h.svc, 'all');
    expect((await back).freeBets[0]).to.include({ grantId, remaining: 3 });
    expect(await h.svc.db.bet.findUniqueOrThrow({ where: { id: placed!.ticket.betId } })).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    expect(await checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] })).to.deep.equal([]);
    seated.player.close();
  });

  // the fault suite's free-bet invariants (test/support/invariants.ts) see what they are for:
  // the rows of a settled free bet, then each bent the way a fault could bend it
  it('the free-bet invariants find a grant with more live bets than rounds, a debit not at the campaign stake and a win not the net', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef], { rounds: 1 });
    const grantId = grantOf.get(playerRef)!;
    const seated = await seat(operator, playerRef);
    const cycleId = await openCycle(operator);
    const ack = await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantId });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await settle(operator, cycleId);
    const check = () => checkMoneyInvariants(h.svc.db, h.wallet, { operatorIds: [operator.operatorId] });
    expect(await check()).to.deep.equal([]);
    const findings = async (bend: () => Promise<unknown>, unbend: () => Promise<unknown>) => {
      await bend();
      try {
        return (await check()).join('\n');
      } finally {
        await unbend();
      }
    };
    expect(
      await findings(
        () => h.svc.db.freeBetGrant.update({ where: { id: grantId }, data: { cancelled: 1 } }),
        () => h.svc.db.freeBetGrant.update({ where: { id: grantId }, data: { cancelled: 0 } }),
      ),
    ).to.match(/rounds cancelled in a campaign that is not[\s\S]*more live bets than rounds not cancelled/);
    expect(
      await findings(
        () => h.svc.db.freeBetCampaign.update({ where: { id: campaignId }, data: { stakeMicro: 2n * STAKE } }),
        () => h.svc.db.freeBetCampaign.update({ where: { id: campaignId }, data: { stakeMicro: STAKE } }),
      ),
    ).to.match(/its stake is not its campaign's[\s\S]*its debit carried isFree true, amountMicro 1000000/);
    const cycle = await h.svc.db.cycle.findUniqueOrThrow({ where: { id: cycleId } });
    expect(
      await findings(
        () => h.svc.db.cycle.update({ where: { id: cycleId }, data: { commissionMicro: 0n } }),
        () => h.svc.db.cycle.update({ where: { id: cycleId }, data: { commissionMicro: cycle.commissionMicro } }),
      ),
    ).to.contain(`its win call was for 940000, its net is max(payout - stake, 0) = ${STAKE}`);
    expect(await check()).to.deep.equal([]);
    seated.player.close();
  });

  // 8.3, D42: the responsible-gambling limits count a free bet's stake as 0, and a free bet
  // goes through the same placement under limits
  it('a free bet is taken under a daily wager limit below its stake, and adds nothing to what the limit counts', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    const { grantOf } = await campaign(operator, [playerRef]);
    const seated = await seat(operator, playerRef, { rgLimits: { dailyWagerMicro: (STAKE / 2n).toString() } });
    const cycleId = await openCycle(operator);
    const ack = await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(playerRef) });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    // the player's other session, under the same limit: a paid stake that reaches the limit is
    // still allowed: the free bet counted 0 of the player's 24 hours
    const other = await seat(operator, playerRef, { rgLimits: { dailyWagerMicro: (STAKE / 2n).toString() } });
    const paid = await other.player.request('place_bet', { side: 'LOW', amountMicro: (STAKE / 2n).toString() });
    expect(paid.ok, JSON.stringify(paid)).to.equal(true);
    await settle(operator, cycleId);
    seated.player.close();
    other.player.close();
  });

  it('place_bet names exactly one of amountMicro and freeBetGrantId, the grant as a uuid', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE });
    const seated = await seat(operator, uniqueId('player'));
    await openCycle(operator);
    for (const payload of [
      { side: 'LOW' },
      { side: 'LOW', amountMicro: '1000000', freeBetGrantId: '00000000-0000-4000-8000-000000000000' },
      { side: 'LOW', freeBetGrantId: 'not-a-uuid' },
    ]) {
      const ack = await seated.player.request('place_bet', payload);
      expect(ack.reason, JSON.stringify(payload)).to.equal('invalid_payload');
    }
    const unknown = await seated.player.request('place_bet', { side: 'LOW', freeBetGrantId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.reason).to.equal('free_bet_unavailable');
    seated.player.close();
  });

  // D40 and D42: a crash cash-out of a free bet pays the net; its ack and round_result say so
  it('crash: a free bet cashed out by hand is paid its payout less the stake, as its ack and round_result tell', async () => {
    const { serverSeed } = crashSeed(300n, 500n);
    const operator = await crashOperator(h);
    const playerRef = uniqueId('player');
    const { campaignRef, grantOf } = await campaign(operator, [playerRef], { gameCode: 'crash' });
    const seated = await seatCrashPlayer(h, operator, serverSeed, 100_000_000n, { playerRef });
    expect(seated.connected.freeBets.map((f: { campaignRef: string }) => f.campaignRef)).to.deep.equal([campaignRef]);
    const pending = await until('the cycle', () => currentCycle(h.svc, { operatorId: operator.operatorId, gameCode: 'crash', currency: 'EUR' }));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    const ack = await seated.player.request('place_bet', { freeBetGrantId: grantOf.get(seated.playerRef) });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    await tick(h, { cycleId: pending.id, from: 'BETTING_OPEN' });
    const cycle = await h.svc.db.cycle.findUniqueOrThrow({ where: { id: pending.id } });
    h.shiftClock(curveTime(200n) - (h.svc.now().getTime() - cycle.flightStartedAt!.getTime()) + 5);
    const out = await seated.player.request('cash_out', {});
    expect(out.ok, JSON.stringify(out)).to.equal(true);
    const cents = BigInt(out.cashOutMultiplier.replace('.', ''));
    const net = (STAKE * cents) / 100n - STAKE;
    expect(net > 0n).to.equal(true);
    expect(out.payoutMicro).to.equal(net.toString());
    const result = await seated.player.waitFor('round_result', (p) => p.roundId === ack.roundId);
    expect(result).to.include({ won: true, payoutMicro: net.toString() });
    await until('the win', async () => callsOf(seated.playerRef, 'win').length > 0);
    expect(callsOf(seated.playerRef, 'bet')[0]).to.include({ isFree: true, bonusRef: campaignRef, amountMicro: STAKE.toString() });
    expect(callsOf(seated.playerRef, 'win').map((w) => w.amountMicro)).to.deep.equal([net.toString()]);
    await until('the win booked', async () => h.wallet.balanceOf(seated.playerRef, 'EUR') === 100_000_000n + net);
    seated.player.close();
  });
});
