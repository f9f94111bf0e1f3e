import { expect } from 'chai';
import { EVENT_TYPES } from '../../../src/shared/domain/events.js';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { startScheduler } from '../../../src/workers/scheduler.js';
import { finishCampaigns } from '../../../src/shared/game/freebets/campaigns.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { operatorWith, tick, until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { checkWebhookInvariants } from '../../support/webhook-invariants.js';
import { createCampaign } from '../../support/freebets.js';

// D42, D31: freebet.campaign_finished. A campaign is finished once its totals are final: every
// round played, cancelled or past its end, and no bet of it still undecided (PENDING or
// ACCEPTED: such a bet may yet give its round back or be paid). A cancellation whose totals
// are final writes the event in its own transaction; otherwise the leader's sweep
// (finishCampaigns) writes it, with the stored state, under a conditional update, so each
// campaign has exactly one event. The sweep is called here by hand, with the clock the
// service reads (svc.now()).
describe('freebet.campaign_finished: a campaign\'s one event, with its final totals (D42, D31)', function () {
  this.timeout(60_000);
  let h: Harness;
  let receiver: WebhookReceiver;
  let shifted = 0;
  before(async () => {
    // no scheduler: the test runs the sweep and the clock itself; a debit may take 2 s
    h = await startHarness({ WALLET_CALL_TIMEOUT_MS: '5000' }, ['api', 'realtime', 'bet', 'settle', 'rollback', 'webhooks']);
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await h?.close();
  });
  afterEach(() => {
    h.shiftClock(-shifted);
    shifted = 0;
    h.wallet.setFault('bet', null);
  });

  const FUNDS = 10_000_000n;
  const STAKE = 1_000_000n;
  const MINUTE = 60_000;

  async function operatorWithWebhook(): Promise<TestOperator> {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    receiver.addCredential(operator.walletKeyId, operator.walletSignatureSecret);
    await h.svc.db.webhookEndpoint.create({ data: { operatorId: operator.operatorId, url: receiver.url, events: [...EVENT_TYPES] } });
    return operator;
  }

  const campaign = (operator: TestOperator, playerRefs: string[], overrides: Record<string, unknown> = {}) =>
    createCampaign(h, operator, { playerRefs, stakeMicro: STAKE, rounds: 1, ...overrides });

  let launches = 0;
  async function seat(operator: TestOperator, playerRef: string) {
    h.wallet.setBalance(playerRef, 'EUR', FUNDS);
    const timestamp = Math.floor(Date.now() / 1000) - (launches++ % 30);
    const launch = await operator.request('POST', '/v1/session', operator.sessionBody({ playerRef }), { timestamp });
    expect(launch.status, launch.text).to.equal(200);
    const player = await Player.connect(h.baseUrl, launch.body.sessionToken as string);
    await player.waitFor('connected');
    return player;
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

  const sweep = () => finishCampaigns({ sql: h.svc.sql, now: h.svc.now() });

  // sweeps until one of them has looked at the campaign, or it is finished (the database holds
  // this file's other campaigns, and a sweep looks at a bounded number, least recently looked
  // at first)
  async function sweepOver(campaignId: string) {
    const since = h.svc.now().getTime();
    await until('a sweep to look at the campaign', async () => {
      await sweep();
      const row = await h.svc.db.freeBetCampaign.findUniqueOrThrow({ where: { id: campaignId } });
      return row.finishedAt !== null || (row.sweptAt !== null && row.sweptAt.getTime() >= since);
    });
  }

  const eventsOf = async (campaignId: string) =>
    (await h.svc.db.webhookEvent.findMany({ where: { eventType: 'freebet.campaign_finished' }, orderBy: { occurredAt: 'asc' } })).filter(
      (row) => (row.data as { campaignId?: string }).campaignId === campaignId,
    );

  async function expectDelivered(operator: TestOperator) {
    await until(
      'every event delivered',
      async () => (await h.svc.db.webhookEvent.count({ where: { operatorId: operator.operatorId, status: { not: 'delivered' } } })) === 0,
    );
    expect(await checkWebhookInvariants(h.svc.db, [operator.operatorId], receiver)).to.deep.equal([]);
  }

  // the event's data: the campaign's totals as GET /v1/freebets/{campaignId} gives them
  const expectedData = (totals: Record<string, unknown>, reason: string, finishedAt: string) => ({
    campaignId: totals.campaignId,
    campaignRef: totals.campaignRef,
    gameCode: totals.gameCode,
    currency: totals.currency,
    stakeMicro: totals.stakeMicro,
    reason,
    grants: totals.grants,
    granted: totals.granted,
    played: totals.played,
    remaining: totals.remaining,
    cancelled: totals.cancelled,
    totalPaidMicro: totals.totalPaidMicro,
    finishedAt,
  });

  it('played: not while a free bet is PENDING or ACCEPTED; once every round is settled, one event with the exact totals', async () => {
    const operator = await operatorWithWebhook();
    const slow = uniqueId('player');
    const quick = uniqueId('player');
    const { campaignId, campaignRef, grantOf } = await campaign(operator, [slow, quick]);
    const players = { slow: await seat(operator, slow), quick: await seat(operator, quick) };
    const cycleId = await openCycle(operator);
    expect((await players.quick.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(quick) })).ok).to.equal(true);
    // the other debit in flight: its bet is PENDING, and the campaign has no round left
    h.wallet.setFault('bet', { kind: 'delay', ms: 2000 }, 1);
    const slowAck = players.slow.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(slow) });
    await until('the free bet in flight', () => h.svc.db.bet.findFirst({ where: { playerRef: slow, cycleId, status: 'PENDING' } }));
    expect((await operator.request('GET', `/v1/freebets/${campaignId}`)).body).to.include({ played: 2, remaining: 0 });
    await sweepOver(campaignId);
    expect(await eventsOf(campaignId)).to.deep.equal([]);
    const slowAnswer = await slowAck;
    expect(slowAnswer.ok, JSON.stringify(slowAnswer)).to.equal(true);
    // accepted, not settled: its win is not yet known
    await sweepOver(campaignId);
    expect(await eventsOf(campaignId)).to.deep.equal([]);
    expect((await h.svc.db.freeBetCampaign.findUniqueOrThrow({ where: { id: campaignId } })).state).to.equal('ACTIVE');

    await settle(operator, cycleId);
    await sweepOver(campaignId);
    await Promise.all([sweep(), sweep()]);
    const events = await eventsOf(campaignId);
    expect(events).to.have.length(1);
    const bets = await h.svc.db.bet.findMany({ where: { cycleId, freeBetGrantId: { not: null } } });
    const paid = bets.reduce((sum, b) => sum + b.payoutMicro!, 0n);
    expect(paid > 0n).to.equal(true);
    const stored = await h.svc.db.freeBetCampaign.findUniqueOrThrow({ where: { id: campaignId } });
    expect(stored).to.include({ state: 'FINISHED', finishedReason: 'played' });
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.body).to.include({ state: 'finished', granted: 2, played: 2, remaining: 0, cancelled: 0, totalPaidMicro: paid.toString() });
    expect(events[0]!.data).to.deep.equal(expectedData(totals.body, 'played', stored.finishedAt!.toISOString()));
    expect(events[0]!.occurredAt.toISOString()).to.equal(stored.finishedAt!.toISOString());
    // the list shows the grants used
    const list = await operator.request('GET', `/v1/freebets?campaignRef=${campaignRef}`);
    expect(list.body.grants.map((g: { status: string }) => g.status)).to.deep.equal(['used', 'used']);
    await expectDelivered(operator);
    players.slow.close();
    players.quick.close();
  });

  it('cancelled: one event in the cancellation\'s transaction; a second DELETE and a sweep write none', async () => {
    const operator = await operatorWithWebhook();
    const { campaignId } = await campaign(operator, [uniqueId('player'), uniqueId('player')], { rounds: 3 });
    const cancelled = await operator.request('DELETE', `/v1/freebets/${campaignId}`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body).to.include({ state: 'cancelled', granted: 6, played: 0, remaining: 0, cancelled: 6, totalPaidMicro: '0' });
    const [event, ...more] = await eventsOf(campaignId);
    expect(more).to.deep.equal([]);
    const stored = await h.svc.db.freeBetCampaign.findUniqueOrThrow({ where: { id: campaignId } });
    expect(stored).to.include({ state: 'CANCELLED', finishedReason: 'cancelled' });
    expect(stored.finishedAt!.toISOString()).to.equal(stored.cancelledAt!.toISOString());
    expect(event!.data).to.deep.equal(expectedData(cancelled.body, 'cancelled', stored.finishedAt!.toISOString()));
    const again = await operator.request('DELETE', `/v1/freebets/${campaignId}`);
    expect(again.body).to.deep.equal(cancelled.body);
    await sweepOver(campaignId);
    expect(await eventsOf(campaignId)).to.have.length(1);
    await expectDelivered(operator);
  });

  it('cancelled with a free bet undecided: its event waits for the bet, then tells what it paid', async () => {
    const operator = await operatorWithWebhook();
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef], { rounds: 3 });
    const player = await seat(operator, playerRef);
    const cycleId = await openCycle(operator);
    expect((await player.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(playerRef) })).ok).to.equal(true);
    const cancelled = await operator.request('DELETE', `/v1/freebets/${campaignId}`);
    expect(cancelled.body).to.include({ state: 'cancelled', played: 1, cancelled: 2, remaining: 0, totalPaidMicro: '0' });
    expect(await eventsOf(campaignId)).to.deep.equal([]);
    await sweepOver(campaignId);
    expect(await eventsOf(campaignId)).to.deep.equal([]);
    await settle(operator, cycleId);
    await sweepOver(campaignId);
    const events = await eventsOf(campaignId);
    expect(events).to.have.length(1);
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    const stored = await h.svc.db.freeBetCampaign.findUniqueOrThrow({ where: { id: campaignId } });
    expect(stored).to.include({ state: 'CANCELLED', finishedReason: 'cancelled' });
    expect(BigInt(totals.body.totalPaidMicro as string) > 0n).to.equal(true);
    expect(events[0]!.data).to.deep.equal(expectedData(totals.body, 'cancelled', stored.finishedAt!.toISOString()));
    await expectDelivered(operator);
    player.close();
  });

  it('expired: past its end (by the service\'s clock) with rounds left, one event from concurrent sweeps', async () => {
    const operator = await operatorWithWebhook();
    const playerRef = uniqueId('player');
    const { campaignId, grantOf } = await campaign(operator, [playerRef, uniqueId('player')], {
      rounds: 2,
      expiresAt: new Date(h.svc.now().getTime() + MINUTE).toISOString(),
    });
    const player = await seat(operator, playerRef);
    const cycleId = await openCycle(operator);
    expect((await player.request('place_bet', { side: 'LOW', freeBetGrantId: grantOf.get(playerRef) })).ok).to.equal(true);
    await settle(operator, cycleId);
    await sweepOver(campaignId);
    expect(await eventsOf(campaignId)).to.deep.equal([]);
    // past its end: read as expired at once; stored, and told, by the next sweep
    h.shiftClock(5 * MINUTE);
    shifted += 5 * MINUTE;
    const at = { timestamp: Math.floor(h.svc.now().getTime() / 1000) };
    expect((await operator.request('GET', `/v1/freebets/${campaignId}`, undefined, at)).body.state).to.equal('expired');
    // a cancellation after its end leaves it expired, and tells nothing
    const late = await operator.request('DELETE', `/v1/freebets/${campaignId}`, undefined, { timestamp: at.timestamp - 1 });
    expect(late.body).to.include({ state: 'expired', cancelled: 0, remaining: 3 });
    expect(await eventsOf(campaignId)).to.deep.equal([]);
    // four sweeps at once: this campaign is finished and told once (they may also finish other
    // files' campaigns that the moved clock put past their end, in a database a parallel
    // worker's files share, so what they count is not this campaign's alone)
    await Promise.all([sweep(), sweep(), sweep(), sweep()]);
    await sweepOver(campaignId);
    const events = await eventsOf(campaignId);
    expect(events).to.have.length(1);
    const stored = await h.svc.db.freeBetCampaign.findUniqueOrThrow({ where: { id: campaignId } });
    expect(stored).to.include({ state: 'FINISHED', finishedReason: 'expired' });
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`, undefined, { timestamp: at.timestamp + 1 });
    expect(totals.body).to.include({ state: 'expired', granted: 4, played: 1, remaining: 3, cancelled: 0 });
    expect(events[0]!.data).to.deep.equal(expectedData(totals.body, 'expired', stored.finishedAt!.toISOString()));
    // a cancellation after the end changes nothing and tells nothing more
    const deleted = await operator.request('DELETE', `/v1/freebets/${campaignId}`, undefined, { timestamp: at.timestamp + 2 });
    expect(deleted.body).to.deep.equal(totals.body);
    expect(await eventsOf(campaignId)).to.have.length(1);
    await expectDelivered(operator);
    player.close();
  });

  it('an operator whose endpoint does not take the type gets no event, and its campaign is finished all the same', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE });
    const { campaignId } = await campaign(operator, [uniqueId('player')]);
    expect((await operator.request('DELETE', `/v1/freebets/${campaignId}`)).status).to.equal(200);
    expect(await eventsOf(campaignId)).to.deep.equal([]);
    const stored = await h.svc.db.freeBetCampaign.findUniqueOrThrow({ where: { id: campaignId } });
    expect(stored.finishedReason).to.equal('cancelled');
    expect(stored.finishedAt).to.not.equal(null);
  });

  // last: the scheduler's recovery on election may void the cycles the tests above left open
  it('the scheduler\'s leader runs the sweep (on election, then every interval)', async () => {
    const operator = await operatorWithWebhook();
    const { campaignId } = await campaign(operator, [uniqueId('player')]);
    // its end a day behind: as a campaign left past its end while no leader swept
    await h.svc.sql.query(`UPDATE free_bet_campaigns SET valid_from = $2, expires_at = $3 WHERE id = $1`, [
      campaignId,
      new Date(h.svc.now().getTime() - 2 * 24 * 60 * MINUTE),
      new Date(h.svc.now().getTime() - 24 * 60 * MINUTE),
    ]);
    const scheduler = startScheduler(h.svc);
    try {
      const [event] = await until('the campaign finished by the leader', async () => {
        const events = await eventsOf(campaignId);
        return events.length > 0 ? events : null;
      });
      expect(event!.data).to.include({ campaignId, reason: 'expired', played: 0, remaining: 1 });
    } finally {
      await scheduler.close();
    }
    expect(await eventsOf(campaignId)).to.have.length(1);
  });
});
