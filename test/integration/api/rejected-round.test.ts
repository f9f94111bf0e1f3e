import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { WalletFault } from '../../../src/simulator/wallet-simulator.js';
import { bettingWindowWithRoom, operatorWith, seatPlayer, until, type SeatedPlayer } from '../../support/game.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { MT_UNDER_DEFAULT, walletCallAsReported } from '../../support/game.js';

// DECISIONS D22: every roundId the service sent to a wallet resolves. A bet the wallet
// refused, or whose debit was uncertain and rolled back, never became a round, yet its
// roundId went out with the debit: GET /v1/rounds/{id} answers it as a VOIDED round
// (voidReason bet_rejected, the stake, no payout) with its bet and its wallet calls, in the
// shape of any round detail (D10); its proof stays 404 round_not_settled. A roundId never
// sent to a wallet stays 404. Through the real flow: a Socket.IO player bets, the bet worker
// debits, the simulator refuses or hangs, the rollback worker reverses.

const STAKE = 1_000_000n;

describe('a roundId that never became a round (D22)', function () {
  this.timeout(30_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h?.close());
  afterEach(() => h.wallet.setFault('bet', null));

  const seated = async (operator: TestOperator): Promise<SeatedPlayer> => {
    const seat = await seatPlayer(h, operator, 5n * STAKE);
    await bettingWindowWithRoom(seat.player, 2000);
    return seat;
  };

  // the player's bet, refused at the wallet with `fault`
  async function refusedBet(operator: TestOperator, fault: WalletFault) {
    const seat = await seated(operator);
    h.wallet.setFault('bet', fault, 1);
    const ack = await seat.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() }, 8000);
    expect(ack.ok, JSON.stringify(ack)).to.equal(false);
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId: seat.sessionId } });
    expect(bet.status).to.equal('REJECTED');
    // the roundId really went out with the debit (contract 2.6)
    const debits = h.wallet.requests.filter((r) => r.endpoint === 'bet' && (r.body as { roundId?: unknown }).roundId === bet.roundId);
    expect(debits).to.have.length(1);
    expect(await h.svc.db.round.findUnique({ where: { id: bet.roundId } }), 'no round row').to.equal(null);
    return { seat, bet, ack };
  }

  const auditOf = (transactionUuids: string[]) =>
    h.svc.db.walletCall.findMany({ where: { transactionUuid: { in: transactionUuids } }, orderBy: [{ createdAt: 'asc' }, { attempt: 'asc' }, { id: 'asc' }] });

  it('a bet the wallet refused: 200 VOIDED bet_rejected with the stake, the REJECTED bet and its debit; proof 404 round_not_settled', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 4000 });
    const { seat, bet, ack } = await refusedBet(operator, { kind: 'status', status: 'RS_ERROR_NOT_ENOUGH_MONEY' });
    expect(ack.reason).to.equal('wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY');
    const [debit, ...others] = await auditOf([bet.betTransactionUuid]);
    expect(others).to.deep.equal([]);

    const detail = await operator.request('GET', `/v1/rounds/${bet.roundId}`);
    expect(detail.status, detail.text).to.equal(200);
    expect(detail.body).to.deep.equal({
      roundId: bet.roundId,
      cycleId: bet.cycleId,
      sessionId: seat.sessionId,
      playerRef: seat.playerRef,
      gameCode: 'dice',
      currency: 'EUR',
      state: 'VOIDED',
      nonce: null,
      outcomeSide: null,
      outcomeSum: null,
      isFree: false,
      bonusRef: null,
      totalBetsMicro: STAKE.toString(),
      totalPayoutsMicro: '0',
      createdAt: bet.createdAt.toISOString(),
      settledAt: null,
      // when the wallet's answer decided the bet
      voidedAt: debit!.respondedAt!.toISOString(),
      sandbox: false,
      jurisdiction: MT_UNDER_DEFAULT,
      voidReason: 'bet_rejected',
      demo: false,
      bets: [
        {
          betId: bet.id,
          status: 'REJECTED',
          reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY',
          side: 'LOW',
          amountMicro: STAKE.toString(),
          isFree: false,
          freeBetGrantId: null,
          bonusRef: null,
          payoutMicro: null,
          betTransactionUuid: bet.betTransactionUuid,
          winTransactionUuid: null,
          rollbackTransactionUuid: null,
          createdAt: bet.createdAt.toISOString(),
          acceptedAt: null,
          settledAt: null,
          voidedAt: null,
          winCall: null,
        },
      ],
      walletCalls: [debit!].map(walletCallAsReported),
    });
    expect(debit).to.include({ endpoint: 'bet', status: 'RS_ERROR_NOT_ENOUGH_MONEY' });

    // the same shape as the detail of a round that exists (D10)
    const accepted = await seated(operator);
    const placed = await accepted.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString() });
    expect(placed.ok, JSON.stringify(placed)).to.equal(true);
    const round = await operator.request('GET', `/v1/rounds/${placed.roundId}`);
    expect(round.status, round.text).to.equal(200);
    expect(Object.keys(detail.body)).to.deep.equal(Object.keys(round.body));
    expect(Object.keys(detail.body.bets[0])).to.deep.equal(Object.keys(round.body.bets[0]));
    expect(round.body).to.include({ voidReason: null });
    expect(round.body.bets[0]).to.include({ reason: null });

    // its proof: not settled, never a proof (D2, D22)
    const proof = await operator.request('GET', `/v1/rounds/${bet.roundId}/proof`);
    expect(proof.status, proof.text).to.equal(404);
    expect(proof.body.error).to.equal('round_not_settled');

    // another operator learns nothing (D10)
    const other = await h.onboard();
    expect((await other.request('GET', `/v1/rounds/${bet.roundId}`)).status).to.equal(404);
    expect((await other.request('GET', `/v1/rounds/${bet.roundId}/proof`)).body.error).to.equal('round_not_found');
  });

  it('an uncertain (timed out) debit that was rolled back: the debit and its rollback', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 4000 });
    const { seat, bet, ack } = await refusedBet(operator, { kind: 'hang' });
    expect(ack.reason).to.equal('wallet_timeout');
    expect(bet.rollbackTransactionUuid).to.be.a('string');
    const job = await h.svc.db.walletJob.findFirstOrThrow({ where: { betId: bet.id, endpoint: 'rollback' } });
    await until('the rollback', async () => (await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: job.id } })).completedAt);
    const calls = await auditOf([bet.betTransactionUuid, bet.rollbackTransactionUuid!]);
    expect(calls.map((c) => [c.endpoint, c.status])).to.deep.equal([
      ['bet', 'RS_ERROR_TIMEOUT'],
      // the simulator never booked the debit (4.2 rollback rule 4)
      ['rollback', 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST'],
    ]);

    const detail = await operator.request('GET', `/v1/rounds/${bet.roundId.toUpperCase()}`);
    expect(detail.status, detail.text).to.equal(200);
    expect(detail.body).to.include({
      roundId: bet.roundId,
      sessionId: seat.sessionId,
      state: 'VOIDED',
      voidReason: 'bet_rejected',
      totalBetsMicro: STAKE.toString(),
      totalPayoutsMicro: '0',
      voidedAt: calls[0]!.respondedAt!.toISOString(),
    });
    expect(detail.body.bets).to.have.length(1);
    expect(detail.body.bets[0]).to.include({ status: 'REJECTED', reason: 'wallet_timeout', rollbackTransactionUuid: bet.rollbackTransactionUuid });
    expect(detail.body.walletCalls).to.deep.equal(calls.map(walletCallAsReported));

    const proof = await operator.request('GET', `/v1/rounds/${bet.roundId}/proof`);
    expect(proof.status, proof.text).to.equal(404);
    expect(proof.body.error).to.equal('round_not_settled');
  });

  it('a roundId never sent to a wallet stays 404', async () => {
    const operator = await h.onboard();
    const unknown = randomUUID();
    const detail = await operator.request('GET', `/v1/rounds/${unknown}`);
    expect(detail.status, detail.text).to.equal(404);
    expect(detail.body.error).to.equal('not_found');
    expect((await operator.request('GET', `/v1/rounds/${unknown}/proof`)).body.error).to.equal('round_not_found');
  });
});
