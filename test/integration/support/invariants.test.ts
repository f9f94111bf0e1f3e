import { expect } from 'chai';
import { createDb, type Bet, type Db } from '../../../src/shared/platform/db/client.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import type { WalletSimulator } from '../../../src/simulator/wallet-simulator.js';
import { TEST_DATABASE_URL } from '../../support/env.js';
import { startHarness, type TestOperator } from '../../support/harness.js';
import { checkMoneyInvariants, waitForQuiescence } from '../../support/invariants.js';
import { Player } from '../../support/player.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// The fault suite's money checker on real data: one cycle of dice through every role, with
// a win, a loss, a void, a clean reject and an uncertain debit, is found clean; then each
// kind of corruption written into the records (or the wallet) is reported.

const START = 5_000_000n;
const NET_WIN = 1_940_000n; // contract 8.4 on 1.00 with the defaults (x2, 3 % commission)

describe('test support: money invariants', function () {
  this.timeout(30_000);
  let db: Db;
  let wallet: WalletSimulator;
  let operator: TestOperator;
  const names = ['uncertain', 'winner', 'loser', 'voided', 'poor'] as const;
  const sessionIds = new Map<(typeof names)[number], string>();
  const bets = {} as Record<(typeof names)[number], Bet>;

  before(async () => {
    const h = await startHarness({}, ROLE_NAMES);
    wallet = h.wallet;
    const players: Player[] = [];
    try {
      operator = await h.onboard();
      // D2: lowWeight 1, highWeight 0 always rolls LOW
      await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {
        bettingWindowMs: 2000,
        rollingWindowMs: 200,
        cooldownMs: 200,
        lowWeight: 1n,
        highWeight: 0n,
      });
      const seat = async (balance: bigint) => {
        const body = operator.sessionBody();
        h.wallet.setBalance(body.playerRef as string, 'EUR', balance);
        const launch = await operator.request('POST', '/v1/session', body);
        expect(launch.status, launch.text).to.equal(200);
        const player = await Player.connect(h.baseUrl, launch.body.sessionToken);
        players.push(player);
        return { player, sessionId: launch.body.sessionId as string };
      };
      const seats = {
        uncertain: await seat(START),
        winner: await seat(START),
        loser: await seat(START),
        voided: await seat(START),
        poor: await seat(100_000n),
      };
      for (const name of names) sessionIds.set(name, seats[name].sessionId);
      // every bet in one fresh betting window, so none meets a closing phase
      await seats.winner.player.next('round_state', (p) => p.phase === 'BETTING_OPEN');
      const place = (name: keyof typeof seats, side: 'LOW' | 'HIGH', amountMicro: string) =>
        seats[name].player.request('place_bet', { side, amountMicro });

      // the wallet books the debit and the answer is lost: uncertain, rejected, rolled back
      h.wallet.setFault('bet', { kind: 'drop_after_apply' }, 1);
      expect((await place('uncertain', 'LOW', '1000000')).ok).to.equal(false);
      expect((await place('winner', 'LOW', '1000000')).ok).to.equal(true);
      expect((await place('loser', 'HIGH', '500000')).ok).to.equal(true);
      const voided = await place('voided', 'LOW', '300000');
      expect(voided.ok).to.equal(true);
      const terminated = await operator.request('POST', `/v1/session/${seats.voided.sessionId}/terminate`, {});
      expect(terminated.body.voidedRoundIds, terminated.text).to.deep.equal([voided.roundId]);
      expect(await place('poor', 'LOW', '1000000')).to.include({ ok: false, reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY' });

      await waitForQuiescence(h.svc.db, { timeoutMs: 15_000, operatorIds: [operator.operatorId] });
    } finally {
      for (const player of players) player.close();
      await h.close();
    }
    // the ledger outlives the simulator's HTTP server; the records are read afresh
    db = createDb(TEST_DATABASE_URL, 2);
    for (const name of names) bets[name] = await db.bet.findFirstOrThrow({ where: { sessionId: sessionIds.get(name)! } });
  });
  after(() => db?.$disconnect());

  // corrupts, checks, and puts things back so that each test starts from the clean records
  async function corrupted(corrupt: () => Promise<() => Promise<unknown>>, check: (violations: string[]) => void | Promise<void>) {
    const restore = await corrupt();
    try {
      await check(await checkMoneyInvariants(db, wallet));
    } finally {
      await restore();
    }
  }

  it('the played cycle is what the tests below rely on', () => {
    expect(bets.uncertain).to.include({ status: 'REJECTED', rejectReason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
    expect(bets.winner).to.include({ status: 'SETTLED', payoutMicro: NET_WIN });
    expect(bets.loser).to.include({ status: 'SETTLED', payoutMicro: 0n });
    expect(bets.voided.status).to.equal('VOIDED');
    expect(bets.poor.status).to.equal('REJECTED');
    const kinds = wallet.transactions.map((t) => [t.type, t.amountMicro]);
    expect(kinds).to.deep.include.members([
      ['bet', 1_000_000n], // the uncertain debit...
      ['rollback', 1_000_000n], // ...and its rollback, then the voided stake's
      ['win', NET_WIN],
      ['bet', 500_000n],
      ['bet', 300_000n],
      ['rollback', 300_000n],
    ]);
  });

  it('real play, faults included, shows no violation', async () => {
    expect(await checkMoneyInvariants(db, wallet)).to.deep.equal([]);
  });

  it('a settled win whose payout_micro differs from the credit', async () => {
    const { winner } = bets;
    await corrupted(
      async () => {
        await db.bet.update({ where: { id: winner.id }, data: { payoutMicro: NET_WIN + 1n } });
        return () => db.bet.update({ where: { id: winner.id }, data: { payoutMicro: NET_WIN } });
      },
      (violations) => {
        expect(violations).to.include(`bet ${winner.id} (SETTLED, stake 1000000, payout 1940001): credited 1940000, its payout_micro is 1940001`);
        expect(violations.some((v) => v.startsWith(`balance of ${winner.playerRef} EUR is 5940000,`)), violations.join('\n')).to.equal(true);
      },
    );
  });

  it('a bet marked SETTLED that was never debited', async () => {
    const { poor } = bets;
    await corrupted(
      async () => {
        await db.bet.update({ where: { id: poor.id }, data: { status: 'SETTLED', payoutMicro: 0n } });
        return () => db.bet.update({ where: { id: poor.id }, data: { status: 'REJECTED', payoutMicro: null } });
      },
      (violations) => {
        expect(violations).to.include(`bet ${poor.id} (SETTLED, stake 1000000, payout 0): settled but never debited`);
        expect(violations).to.include(`bet ${poor.id} is SETTLED but has no round`);
      },
    );
  });

  it('a wallet balance the settled bets do not explain', async () => {
    const { loser } = bets;
    const balance = wallet.balanceOf(loser.playerRef, 'EUR');
    await corrupted(
      async () => {
        wallet.setBalance(loser.playerRef, 'EUR', balance + 1n);
        return async () => wallet.setBalance(loser.playerRef, 'EUR', balance);
      },
      (violations) => {
        expect(violations).to.deep.equal([`balance of ${loser.playerRef} EUR is 4500001, the settled bets make it 5000000 - 500000 = 4500000`]);
      },
    );
  });

  it('work left open: waitForQuiescence times out naming it, the checker reports it', async () => {
    const { loser, uncertain } = bets;
    const job = await db.walletJob.findFirstOrThrow({ where: { betId: uncertain.id } });
    await corrupted(
      async () => {
        await db.bet.update({ where: { id: loser.id }, data: { status: 'ACCEPTED' } });
        await db.walletJob.update({ where: { id: job.id }, data: { completedAt: null, nextAttemptAt: null } });
        return async () => {
          await db.bet.update({ where: { id: loser.id }, data: { status: 'SETTLED' } });
          await db.walletJob.update({ where: { id: job.id }, data: { completedAt: job.completedAt } });
        };
      },
      async (violations) => {
        expect(violations).to.include(`bet ${loser.id} is still ACCEPTED`);
        expect(violations).to.include(`round ${loser.roundId} is SETTLED but its bet ${loser.id} is ACCEPTED`);
        expect(violations.some((v) => v.startsWith(`wallet job ${job.id} (uncertain_bet):`) && v.includes('(stranded)')), violations.join('\n')).to.equal(true);
        const waited = await waitForQuiescence(db, { timeoutMs: 200, operatorIds: [operator.operatorId] }).then(() => null, (err: Error) => err);
        expect(waited?.message).to.match(/^not quiescent after 200 ms:/);
        expect(waited?.message).to.include(`bet ${loser.id} is ACCEPTED`);
        expect(waited?.message).to.include(`wallet job ${job.id} (uncertain_bet)`);
      },
    );
    expect(await checkMoneyInvariants(db, wallet)).to.deep.equal([]);
  });
});
