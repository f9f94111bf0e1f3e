import { expect } from 'chai';
import { createDb } from '../../../src/shared/platform/db/client.js';
import { liveDebitNodes } from '../../../src/shared/game/bets/debit.js';
import { placeBets } from '../../../src/shared/game/bets/place.js';
import { createRedis } from '../../../src/shared/platform/redis.js';
import { operatorWith, seatPlayer, until } from '../../support/game.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { TEST_REDIS_URL } from '../../support/env.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// A process with both the realtime and the bet role debits its own players' bets,
// without the bet queue (BET_HANDOFF=local, the default); BET_HANDOFF=queue, or a realtime
// node without the bet role, hands them to the bet pool. Either way the player sees the
// same thing: the ack, bet_placed, the balance, the wallet debited once.
const ALL = ROLE_NAMES;

describe('bet handoff: the node debits its own bets, or the bet queue carries them', function () {
  this.timeout(30_000);

  async function betThrough(h: Harness) {
    const operator = await operatorWith(h, { bettingWindowMs: 3000 });
    const { player, playerRef } = await seatPlayer(h, operator, 5_000_000n);
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    const ack = await player.request('place_bet', { side: 'LOW', amountMicro: '1000000' });
    expect(ack.ok, JSON.stringify(ack)).to.equal(true);
    expect((await player.waitFor('balance_update')).balanceMicro).to.equal('4000000');
    player.close();
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(4_000_000n);
    expect(h.wallet.requests.filter((r) => r.endpoint === 'bet' && (r.body as { playerRef?: string }).playerRef === playerRef)).to.have.length(1);
    return h.svc.db.bet.findUniqueOrThrow({ where: { id: ack.betId } });
  }

  describe('BET_HANDOFF=local (the default)', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({}, ALL);
    });
    after(() => h?.close());

    it('the bet row names this node, no bet job is queued, and the node keeps its heartbeat', async () => {
      const bet = await betThrough(h);
      expect(bet).to.include({ status: 'ACCEPTED', debitNode: h.svc.emitter.nodeId });
      // contract 2.13: the debit's audit row, written by the statement that wrote the bet row
      // (one transaction: the same created_at), holds the bytes the wallet received
      const [audit] = await h.svc.db.walletCall.findMany({ where: { transactionUuid: bet.betTransactionUuid, endpoint: 'bet' } });
      expect(audit, 'one audit row').to.not.equal(undefined);
      expect(audit!.createdAt.getTime()).to.equal(bet.createdAt.getTime());
      expect(audit).to.include({ attempt: 1, status: 'RS_OK', httpStatus: 200, sessionId: bet.sessionId });
      const received = h.wallet.requests.find((r) => r.endpoint === 'bet' && (r.body as { transactionUuid?: string }).transactionUuid === bet.betTransactionUuid);
      expect(received?.rawBody).to.equal(audit!.requestBody);
      expect(JSON.parse(audit!.requestBody)).to.deep.equal({
        requestUuid: audit!.requestUuid,
        operatorId: bet.operatorId,
        playerRef: bet.playerRef,
        currency: 'EUR',
        gameCode: bet.gameCode,
        transactionUuid: bet.betTransactionUuid,
        amountMicro: '1000000',
        roundId: bet.roundId,
      });
      expect(await h.svc.queues.bet.getJob(bet.id)).to.equal(undefined);
      expect([...(await liveDebitNodes(h.svc.redis, [h.svc.emitter.nodeId, 'another-node']))]).to.deep.equal([h.svc.emitter.nodeId]);
      const metrics = await fetch(`${h.baseUrl}/metrics`).then((response) => response.text());
      expect(metrics, 'nothing left in flight').to.match(/^rgs_local_debits_in_flight 0$/m);
    });

    it('the placement writes the audit row only for a node debiting a bet of the player the token names', async () => {
      const operator = await operatorWith(h, { bettingWindowMs: 3000 });
      const seated = await Promise.all([0, 1, 2].map(() => seatPlayer(h, operator, 5_000_000n)));
      await seated[0]!.player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
      const payer = (playerRef: string) => ({ operatorId: operator.operatorId, playerRef, currency: 'EUR', gameCode: 'dice' });
      const place = async (i: number, playerRef: string, debitNode: string | null) => {
        const [placed] = await placeBets(h.svc, [{ sessionId: seated[i]!.sessionId, side: 'LOW', amountMicro: 1_000_000n, payer: payer(playerRef) }], debitNode);
        if (!placed!.ok) throw new Error(placed!.reason);
        const audits = await h.svc.db.walletCall.findMany({ where: { transactionUuid: placed!.ticket.betTransactionUuid } });
        return { placed: placed!, audits };
      };
      const node = h.svc.emitter.nodeId;

      const debited = await place(0, seated[0]!.playerRef, node);
      expect(debited.audits.map((a) => a.requestBody)).to.deep.equal([debited.placed.audited?.bytes]);
      expect(debited.placed.audited?.target.wallet_url).to.equal(h.wallet.url);

      const otherPlayer = await place(1, 'someone-else', node);
      expect(otherPlayer.placed.audited, 'a payer the session does not name').to.equal(undefined);
      expect(otherPlayer.audits).to.deep.equal([]);

      const queued = await place(2, seated[2]!.playerRef, null);
      expect(queued.placed.audited, 'a bet for the bet queue').to.equal(undefined);
      expect(queued.audits).to.deep.equal([]);
      for (const { player } of seated) player.close();
    });
  });

  describe('BET_HANDOFF=queue', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ BET_HANDOFF: 'queue' }, ALL);
    });
    after(() => h?.close());

    it('the bet row names no node and its bet job went through the queue', async () => {
      const bet = await betThrough(h);
      expect(bet).to.include({ status: 'ACCEPTED', debitNode: null });
      const job = await h.svc.queues.bet.getJob(bet.id);
      expect(await job?.getState()).to.equal('completed');
      expect([...(await liveDebitNodes(h.svc.redis, [h.svc.emitter.nodeId]))], 'no heartbeat: this node debits nothing itself').to.deep.equal([]);
    });
  });

  it('on close (D12), the debit in flight finishes before the heartbeat goes', async () => {
    const h = await startHarness({}, ALL);
    const node = h.svc.emitter.nodeId;
    const redis = createRedis(TEST_REDIS_URL, { keyPrefix: `${h.svc.config.redisKeyPrefix}:`, enableOfflineQueue: true });
    try {
      const operator = await operatorWith(h, { bettingWindowMs: 3000 });
      const { player, sessionId } = await seatPlayer(h, operator, 5_000_000n);
      await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
      h.wallet.setFault('bet', { kind: 'delay', ms: 700 }, 1);
      player.socket.emit('place_bet', { side: 'LOW', amountMicro: '1000000' });
      await until('the debit at the wallet', async () => h.wallet.requests.some((r) => r.endpoint === 'bet' && r.response === 'pending'));
      const metrics = await fetch(`${h.baseUrl}/metrics`).then((response) => response.text());
      expect(metrics).to.match(/^rgs_local_debits_in_flight 1$/m);
      await h.close();
      const bet = await readBetAfterClose(h, sessionId);
      expect(bet, 'the debit finished: accepted, not left to recovery').to.include({ status: 'ACCEPTED', debitNode: node });
      expect([...(await liveDebitNodes(redis, [node]))], 'the heartbeat is gone').to.deep.equal([]);
    } finally {
      redis.disconnect();
    }
  });
});

// the harness is closed, its database connections too: the bet is read on a fresh one
async function readBetAfterClose(h: Harness, sessionId: string) {
  const db = createDb(h.svc.config.databaseUrl, 1);
  try {
    return await db.bet.findFirstOrThrow({ where: { sessionId } });
  } finally {
    await db.$disconnect();
  }
}
