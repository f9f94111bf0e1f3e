import { expect } from 'chai';
import { EVENT_TYPES, type EventType } from '../../../src/shared/domain/events.js';
import { DICE_RNG_VERSION } from '../../../src/shared/domain/dice.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { recordEvent } from '../../../src/shared/platform/outbox.js';
import { WALLET_RETRY_BUDGET_MS } from '../../../src/shared/platform/queues.js';
import { revokeCredential, rotateCredential } from '../../../src/shared/wallet/credentials.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { Player } from '../../support/player.js';
import { operatorWith, until } from '../../support/game.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { checkWebhookInvariants } from '../../support/webhook-invariants.js';

// D31: the transactional outbox. Each state change an operator hears of writes its event in
// the statement or transaction that makes the change, with the documented data, only for an
// operator whose enabled endpoint takes that type; real-money play only (D8). Delivery itself
// is tested in delivery.test.ts; here, what is written, and that each type arrives as
// written, signed (the receiver verifies every request).

const START = 5_000_000n;
const STAKE = 1_000_000n;
// contract 8.4 with the defaults: 2 x stake minus 3 % commission
const NET_WIN = 1_940_000n;

type Row = { id: string; eventType: string; occurredAt: Date; data: Record<string, unknown>; status: string };

describe('the webhook outbox: which changes write which events (D31)', function () {
  this.timeout(30_000);
  let h: Harness;
  let receiver: WebhookReceiver;
  let shifted = 0;
  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await h?.close();
  });
  afterEach(() => {
    h.shiftClock(-shifted);
    shifted = 0;
    for (const endpoint of ['bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
  });

  // an operator with an endpoint taking `events`, whose rounds always roll `roll`
  async function operatorWithWebhook(events: readonly EventType[] = EVENT_TYPES, roll: 'LOW' | 'HIGH' = 'LOW'): Promise<TestOperator> {
    const operator = await operatorWith(h, { bettingWindowMs: 600, rollingWindowMs: 200, lowWeight: roll === 'LOW' ? 1n : 0n, highWeight: roll === 'HIGH' ? 1n : 0n });
    receiver.addCredential(operator.walletKeyId, operator.walletSignatureSecret);
    await h.svc.db.webhookEndpoint.create({ data: { operatorId: operator.operatorId, url: receiver.url, events: [...events] } });
    return operator;
  }

  // every event of the operator delivered, each as written and signed (D31)
  async function expectDelivered(operator: TestOperator) {
    await until(
      'every event delivered',
      async () => (await h.svc.db.webhookEvent.count({ where: { operatorId: operator.operatorId, status: { not: 'delivered' } } })) === 0,
    );
    expect(await checkWebhookInvariants(h.svc.db, [operator.operatorId], receiver)).to.deep.equal([]);
  }

  const eventsOf = async (operatorId: string, type?: EventType): Promise<Row[]> =>
    (await h.svc.db.webhookEvent.findMany({ where: { operatorId, ...(type ? { eventType: type } : {}) }, orderBy: { occurredAt: 'asc' } })) as Row[];

  async function seat(operator: TestOperator, body: Record<string, unknown> = {}) {
    const launchBody = operator.sessionBody(body);
    const playerRef = launchBody.playerRef as string;
    h.wallet.setBalance(playerRef, 'EUR', START);
    const launch = await operator.request('POST', '/v1/session', launchBody);
    expect(launch.status, launch.text).to.equal(200);
    const player = await Player.connect(h.baseUrl, launch.body.sessionToken as string);
    await player.waitFor('connected');
    return { player, playerRef, sessionId: launch.body.sessionId as string };
  }

  async function betAndWaitForResult(operator: TestOperator, side: 'LOW' | 'HIGH') {
    const seated = await seat(operator);
    await seated.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const ack = await seated.player.request('place_bet', { side, amountMicro: STAKE.toString() });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId: seated.sessionId } });
    await seated.player.waitFor('round_result', (p) => p.betId === bet.id);
    return { ...seated, bet };
  }

  it('round.settled for a won and a lost round: the fields GET /v1/rounds gives (contract 6.2)', async () => {
    const operator = await operatorWithWebhook();
    const won = await betAndWaitForResult(operator, 'LOW');
    const lost = await betAndWaitForResult(operator, 'HIGH');
    const settled = await until('two round.settled events', async () => {
      const rows = await eventsOf(operator.operatorId, 'round.settled');
      return rows.length === 2 ? rows : null;
    });
    for (const [{ bet }, payout] of [
      [won, NET_WIN],
      [lost, 0n],
    ] as const) {
      const event = settled.find((row) => row.data.roundId === bet.roundId)!;
      const view = await operator.request('GET', `/v1/rounds/${bet.roundId}`);
      expect(event.data).to.deep.equal({
        roundId: bet.roundId,
        sessionId: bet.sessionId,
        gameCode: 'dice',
        currency: 'EUR',
        totalBetsMicro: STAKE.toString(),
        totalPayoutsMicro: payout.toString(),
        settledAt: view.body.settledAt,
        rngVersion: DICE_RNG_VERSION,
        outcomeSide: 'LOW',
        outcomeSum: view.body.outcomeSum,
      });
      expect(event.occurredAt.toISOString()).to.equal(view.body.settledAt);
    }
    await expectDelivered(operator);
    won.player.close();
    lost.player.close();
  });

  it('nothing for an operator without an endpoint, for a type its endpoint does not take, for a disabled endpoint, or for demo play (D8)', async () => {
    const without = await h.onboard();
    await setGameConfig(h.svc.db, without.operatorId, 'dice', 'EUR', { bettingWindowMs: 600, rollingWindowMs: 200, cooldownMs: 200 });
    const voidedOnly = await operatorWithWebhook(['round.voided']);
    const disabled = await operatorWithWebhook();
    await h.svc.db.webhookEndpoint.update({ where: { operatorId: disabled.operatorId }, data: { enabled: false } });
    const demo = await operatorWithWebhook();
    const plays = [await betAndWaitForResult(without, 'LOW'), await betAndWaitForResult(voidedOnly, 'LOW'), await betAndWaitForResult(disabled, 'LOW')];
    const demoPlayer = await seat(demo, { mode: 'demo' });
    await demoPlayer.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    expect((await demoPlayer.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() })).ok).to.equal(true);
    await demoPlayer.player.waitFor('round_result');
    // the demo round settled; a real one of the same moment would have been reported by now
    await until('the demo round settled', () => h.svc.db.round.findFirst({ where: { sessionId: demoPlayer.sessionId, state: 'SETTLED' } }));
    for (const operator of [without, voidedOnly, disabled, demo]) expect(await eventsOf(operator.operatorId)).to.deep.equal([]);
    for (const play of [...plays, demoPlayer]) play.player.close();
  });

  it('a termination mid-round: session.terminated and round.voided, in the termination transaction', async () => {
    const operator = await operatorWithWebhook();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 5000 });
    const { player, playerRef, sessionId } = await seat(operator);
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    expect((await player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() })).ok).to.equal(true);
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId } });
    const terminated = await operator.request('POST', `/v1/session/${sessionId}/terminate`, { reason: 'responsible_gambling_intervention' });
    expect(terminated.status, terminated.text).to.equal(200);
    expect(terminated.body.voidedRoundIds).to.deep.equal([bet.roundId]);

    const [session] = await eventsOf(operator.operatorId, 'session.terminated');
    expect(session!.data).to.deep.equal({ sessionId, playerRef, reason: 'responsible_gambling_intervention', terminatedAt: terminated.body.terminatedAt });
    const [voided] = await eventsOf(operator.operatorId, 'round.voided');
    const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: bet.roundId } });
    expect(voided!.data).to.deep.equal({
      roundId: bet.roundId,
      sessionId,
      gameCode: 'dice',
      currency: 'EUR',
      totalBetsMicro: STAKE.toString(),
      reason: 'session_terminated',
      voidedAt: round.voidedAt!.toISOString(),
    });
    // terminating again changes nothing, and reports nothing
    await operator.request('POST', `/v1/session/${sessionId}/terminate`, {});
    expect(await eventsOf(operator.operatorId, 'session.terminated')).to.have.length(1);
    await expectDelivered(operator);
    player.close();
  });

  it('session.rg_limit_tripped once per session and limit, however many bets the limit refuses', async () => {
    const operator = await operatorWithWebhook();
    const { player, playerRef, sessionId } = await seat(operator, { rgLimits: { dailyWagerMicro: '1500000' } });
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    expect((await player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() })).ok).to.equal(true);
    for (let i = 0; i < 2; i++) {
      await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN' && player.messages.filter((m) => m.event === 'round_state' && m.payload.phase === 'BETTING_OPEN').length > i + 1);
      const refused = await player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
      expect(refused).to.deep.include({ ok: false, reason: 'rg_limit_reached' });
    }
    const trips = await eventsOf(operator.operatorId, 'session.rg_limit_tripped');
    expect(trips).to.have.length(1);
    expect(trips[0]!.data).to.deep.equal({ sessionId, playerRef, limit: 'dailyWager', limitMicro: '1500000', trippedAt: trips[0]!.occurredAt.toISOString() });
    await expectDelivered(operator);
    player.close();
  });

  it('reconciliation.discrepancy: a win the wallet does not know (win_not_found), and one abandoned after 24 hours (win_abandoned, with its round.voided)', async () => {
    h.wallet.setFault('win', { kind: 'status', status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, 1);
    const notFoundOperator = await operatorWithWebhook();
    const notFound = await betAndWaitForResult(notFoundOperator, 'LOW');
    const [first] = await until('the win_not_found event', async () => {
      const rows = await eventsOf(notFoundOperator.operatorId, 'reconciliation.discrepancy');
      return rows.length > 0 ? rows : null;
    });
    const bet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: notFound.bet.id } });
    expect(first!.data).to.deep.equal({
      kind: 'win_not_found',
      roundId: bet.roundId,
      transactionUuid: bet.winTransactionUuid,
      endpoint: 'win',
      amountMicro: NET_WIN.toString(),
      detectedAt: first!.occurredAt.toISOString(),
    });
    await expectDelivered(notFoundOperator);
    notFound.player.close();

    h.wallet.setFault('win', { kind: 'http', httpStatus: 500 });
    const abandonedOperator = await operatorWithWebhook();
    const abandoned = await betAndWaitForResult(abandonedOperator, 'LOW');
    const win = await until('the win job', () => h.svc.db.walletJob.findFirst({ where: { betId: abandoned.bet.id, endpoint: 'win' } }));
    await until('the first failed win', async () => (await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: win.id } })).attempts === 1);
    h.shiftClock(WALLET_RETRY_BUDGET_MS + 60_000);
    shifted += WALLET_RETRY_BUDGET_MS + 60_000;
    const [discrepancy] = await until('the win_abandoned event', async () => {
      const rows = await eventsOf(abandonedOperator.operatorId, 'reconciliation.discrepancy');
      return rows.length > 0 ? rows : null;
    });
    expect(discrepancy!.data).to.deep.include({ kind: 'win_abandoned', roundId: abandoned.bet.roundId, transactionUuid: win.transactionUuid, endpoint: 'win', amountMicro: NET_WIN.toString() });
    const [voided] = await eventsOf(abandonedOperator.operatorId, 'round.voided');
    expect(voided!.data).to.deep.include({ roundId: abandoned.bet.roundId, reason: 'win_exhausted', totalBetsMicro: STAKE.toString() });
    abandoned.player.close();
  });

  it('reconciliation.discrepancy: a rollback abandoned after 24 hours (rollback_abandoned, the stake it would have returned)', async () => {
    h.wallet.setFault('rollback', { kind: 'http', httpStatus: 500 });
    const operator = await operatorWithWebhook();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', { bettingWindowMs: 5000 });
    const { player, sessionId } = await seat(operator);
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    expect((await player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() })).ok).to.equal(true);
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId } });
    expect((await operator.request('POST', `/v1/session/${sessionId}/terminate`, {})).status).to.equal(200);
    const rollback = await until('the failed rollback', () => h.svc.db.walletJob.findFirst({ where: { betId: bet.id, endpoint: 'rollback', attempts: { gte: 1 } } }));
    h.shiftClock(WALLET_RETRY_BUDGET_MS + 60_000);
    shifted += WALLET_RETRY_BUDGET_MS + 60_000;
    const [discrepancy] = await until('the rollback_abandoned event', async () => {
      const rows = await eventsOf(operator.operatorId, 'reconciliation.discrepancy');
      return rows.length > 0 ? rows : null;
    });
    expect(discrepancy!.data).to.deep.equal({
      kind: 'rollback_abandoned',
      roundId: bet.roundId,
      transactionUuid: rollback.transactionUuid,
      endpoint: 'rollback',
      amountMicro: STAKE.toString(),
      detectedAt: discrepancy!.occurredAt.toISOString(),
    });
    player.close();
  });

  it('credential.rotated and credential.revoked, never with a secret; a second revocation reports nothing', async () => {
    const operator = await operatorWithWebhook();
    const rotation = await rotateCredential(h.svc.db, h.svc.config.masterKey, operator.operatorId, 'WALLET');
    await revokeCredential(h.svc.db, operator.apiKeyId);
    await revokeCredential(h.svc.db, operator.apiKeyId);
    const rotated = await eventsOf(operator.operatorId, 'credential.rotated');
    expect(rotated.map((row) => row.data)).to.deep.equal([
      { kind: 'wallet', kid: rotation.kid, previousKid: operator.walletKeyId, previousNotAfter: rotation.previousNotAfter },
    ]);
    expect(JSON.stringify(rotated)).not.to.include(rotation.secret);
    expect((await eventsOf(operator.operatorId, 'credential.revoked')).map((row) => row.data)).to.deep.equal([{ kid: operator.apiKeyId }]);
    // signed with the newest wallet credential, the one the rotation made (D6)
    receiver.addCredential(rotation.kid, rotation.secret);
    await expectDelivered(operator);
    expect(new Set(receiver.deliveries.filter((d) => d.envelope.operatorId === operator.operatorId).map((d) => d.keyId))).to.deep.equal(new Set([rotation.kid]));
  });

  it('an event written in a transaction that rolls back does not exist', async () => {
    const operator = await operatorWithWebhook();
    const failed = await h.svc.db
      .$transaction(async (tx) => {
        await recordEvent(tx, 'credential.revoked', operator.operatorId, new Date(), { kid: 'k' });
        throw new Error('the change failed');
      })
      .catch((err: Error) => err.message);
    expect(failed).to.equal('the change failed');
    expect(await eventsOf(operator.operatorId)).to.deep.equal([]);
  });
});
