import { expect } from 'chai';
import type { Bet, WalletJob } from '../../../src/shared/platform/db/client.js';
import { revokeCredential } from '../../../src/shared/wallet/credentials.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import type { RecordedRequest, WalletFault } from '../../../src/simulator/wallet-simulator.js';
import { startHarness, uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { seatPlayer, until } from '../../support/game.js';
import { Player } from '../../support/player.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';

// Every wallet status of contract 7.1 (completed by DECISIONS D13), as the service reacts
// to it on the bet call, the win call and the rollback call, through the real flow: a
// Socket.IO player places the bet, the bet worker debits, the engine rolls and settles, the
// settle worker credits, the rollback worker reverses. Faults come from the wallet
// simulator; what is asserted is what a player (messages, D4), the operator (its ledger,
// the wallet_calls audit, 2.13) and the service's records (bets, rounds, wallet_jobs) show.

const START = 5_000_000n;
const STAKE = 1_000_000n;
// contract 8.4 with the defaults (payoutMultiplier 2, commission 3000 micro = 3 %)
const NET_WIN = 1_940_000n;

type Session = { player: Player; playerRef: string; sessionId: string };

describe('wallet statuses (contract 7.1, D13)', function () {
  this.timeout(30_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h?.close());

  // every test leaves the simulator without faults and checks that the service never sent
  // anything a correct service would not send
  const restores: (() => void)[] = [];
  afterEach(() => {
    for (const endpoint of ['bet', 'win', 'rollback'] as const) h.wallet.setFault(endpoint, null);
    for (const restore of restores.splice(0)) restore();
  });

  // ------------------------------------------------------------------------------------
  // helpers


  // The operator's config: outcome forced to one side (D2: lowWeight 1 / highWeight 0 always
  // rolls LOW), short windows. A fresh operator per test: engines are per operator.
  async function operatorRolling(side: 'LOW' | 'HIGH', bettingWindowMs = 600): Promise<TestOperator> {
    const operator = await h.onboard();
    await setGameConfig(h.svc.db, operator.operatorId, 'dice', 'EUR', {
      bettingWindowMs,
      rollingWindowMs: 200,
      cooldownMs: 200,
      lowWeight: side === 'LOW' ? 1n : 0n,
      highWeight: side === 'HIGH' ? 1n : 0n,
    });
    return operator;
  }

  async function seated(operator: TestOperator): Promise<Session> {
    const { player, playerRef, sessionId, connected } = await seatPlayer(h, operator, START);
    expect(connected.balanceMicro).to.equal(START.toString());
    await player.waitFor('round_state', (p) => p.phase === 'BETTING_OPEN');
    return { player, playerRef, sessionId };
  }

  // the simulator's view of the calls concerning one movement
  const requestsTo = (endpoint: 'bet' | 'win' | 'rollback', field: 'transactionUuid' | 'referenceTransactionUuid', value: string) =>
    h.wallet.requests.filter((r) => r.endpoint === endpoint && (r.body as Record<string, unknown> | undefined)?.[field] === value);
  const ledgerOf = (playerRef: string) =>
    h.wallet.transactions.filter((t) => t.playerRef === playerRef).map((t) => [t.type, t.amountMicro] as const);
  const responseStatus = (r: RecordedRequest | undefined) => (r && typeof r.response === 'object' ? r.response.status : undefined);

  // contract 2.13: one audit row per HTTP call, written before it and completed with the
  // answer; its request_body is byte for byte what the wallet received (D6)
  async function expectAudited(record: RecordedRequest, expected: { endpoint: string; transactionUuid: string; sessionId: string; attempt: number; status: string; httpStatus: number | null; error?: RegExp }) {
    const body = record.body as { requestUuid: string };
    const row = await h.svc.db.walletCall.findUniqueOrThrow({ where: { requestUuid_attempt: { requestUuid: body.requestUuid, attempt: expected.attempt } } });
    expect(row.requestBody, 'request_body equals the bytes the wallet received').to.equal(record.rawBody);
    expect(row).to.include({
      endpoint: expected.endpoint,
      transactionUuid: expected.transactionUuid,
      sessionId: expected.sessionId,
      direction: 'OUT',
      status: expected.status,
      httpStatus: expected.httpStatus,
    });
    expect(row.respondedAt, 'completed with the answer').to.be.instanceOf(Date);
    expect(row.latencyMs).to.be.a('number');
    if (expected.error) expect(row.error).to.match(expected.error);
    else expect(row.error).to.equal(null);
    return row;
  }

  async function jobsOf(betId: string, endpoint: 'win' | 'rollback'): Promise<WalletJob[]> {
    return h.svc.db.walletJob.findMany({ where: { betId, endpoint } });
  }

  const completedJob = (id: string) =>
    until(`wallet job ${id} completed`, async () => {
      const job = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id } });
      return job.completedAt ? job : null;
    });

  // the BullMQ jobs behind a wallet job (a batch of first attempts, then its own retries)
  // finished for good: no retry is scheduled
  async function expectQueueJobDone(queue: 'settle' | 'rollback', walletJobId: string) {
    const state = await until(`queue jobs of ${walletJobId} finished`, async () => {
      const jobs = (await h.svc.queues[queue].getJobs(['completed', 'failed', 'active', 'waiting', 'delayed', 'prioritized'])).filter((job) =>
        job?.data.walletJobIds.includes(walletJobId),
      );
      const states = await Promise.all(jobs.map((job) => job.getState()));
      if (states.length === 0 || states.some((current) => current !== 'completed' && current !== 'failed')) return null;
      return states.includes('failed') ? 'failed' : 'completed';
    });
    expect(state).to.equal('completed');
  }

  // Records what the service alerts on (logger.error) while a test runs.
  function alerts() {
    const logger = h.svc.logger;
    const original = logger.error;
    const seen: { fields: Record<string, unknown>; msg: string }[] = [];
    logger.error = function (this: unknown, ...args: unknown[]) {
      const [first, second] = args;
      if (first && typeof first === 'object') seen.push({ fields: first as Record<string, unknown>, msg: String(second ?? '') });
      else seen.push({ fields: {}, msg: String(first) });
      return (original as (...a: unknown[]) => void).apply(this, args);
    } as typeof logger.error;
    const restore = () => void (logger.error = original);
    restores.push(restore);
    return { seen, restore };
  }

  // Places LOW 10.00 and waits for the verdict the player sees.
  async function placeBet(session: Session, clientBetId: string) {
    const ack = await session.player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString(), clientBetId });
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId: session.sessionId } });
    return { ack, bet };
  }

  // ------------------------------------------------------------------------------------
  describe('on the bet call', () => {
    type BetCase = {
      title: string;
      fault: WalletFault;
      accepted?: true;
      reason?: string;
      // uncertain (7.1): a rollback referencing the bet's transactionUuid is enqueued
      rollback?: true;
      // 7.1, 3.3: the status ends the session
      ends?: string;
      // 7.1 says "alert" (fatal statuses): logged at error level, naming the bet
      alert?: true;
      // what the audit row records
      audit: { status: string; httpStatus: number | null; error?: RegExp };
      // the simulator applied the debit before the answer went wrong (then the rollback refunds it)
      debited?: true;
    };
    const status = (s: string, httpStatus?: number): WalletFault => ({ kind: 'status', status: s, ...(httpStatus === undefined ? {} : { httpStatus }) });
    const answered = (s: string) => ({ status: s, httpStatus: 200 });
    const cases: BetCase[] = [
      { title: 'RS_OK', fault: status('RS_OK'), accepted: true, audit: answered('RS_OK') },
      { title: 'RS_ERROR_DUPLICATE_TRANSACTION', fault: status('RS_ERROR_DUPLICATE_TRANSACTION'), accepted: true, audit: answered('RS_ERROR_DUPLICATE_TRANSACTION') },
      { title: 'RS_ERROR_UNKNOWN', fault: status('RS_ERROR_UNKNOWN'), reason: 'wallet_rejected:RS_ERROR_UNKNOWN', rollback: true, audit: answered('RS_ERROR_UNKNOWN') },
      { title: 'RS_ERROR_TIMEOUT (answered by the wallet)', fault: status('RS_ERROR_TIMEOUT'), reason: 'wallet_rejected:RS_ERROR_TIMEOUT', rollback: true, audit: answered('RS_ERROR_TIMEOUT') },
      { title: 'RS_ERROR_NOT_ENOUGH_MONEY', fault: status('RS_ERROR_NOT_ENOUGH_MONEY'), reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY', audit: answered('RS_ERROR_NOT_ENOUGH_MONEY') },
      { title: 'RS_ERROR_LIMIT_REACHED', fault: status('RS_ERROR_LIMIT_REACHED'), reason: 'wallet_rejected:RS_ERROR_LIMIT_REACHED', audit: answered('RS_ERROR_LIMIT_REACHED') },
      { title: 'RS_ERROR_USER_DISABLED', fault: status('RS_ERROR_USER_DISABLED'), reason: 'wallet_rejected:RS_ERROR_USER_DISABLED', ends: 'RS_ERROR_USER_DISABLED', audit: answered('RS_ERROR_USER_DISABLED') },
      { title: 'RS_ERROR_TOKEN_EXPIRED', fault: status('RS_ERROR_TOKEN_EXPIRED'), reason: 'wallet_rejected:RS_ERROR_TOKEN_EXPIRED', ends: 'RS_ERROR_TOKEN_EXPIRED', audit: answered('RS_ERROR_TOKEN_EXPIRED') },
      { title: 'RS_ERROR_INVALID_TOKEN', fault: status('RS_ERROR_INVALID_TOKEN'), reason: 'wallet_rejected:RS_ERROR_INVALID_TOKEN', alert: true, ends: 'RS_ERROR_INVALID_TOKEN', audit: answered('RS_ERROR_INVALID_TOKEN') },
      { title: 'RS_ERROR_INVALID_SIGNATURE', fault: status('RS_ERROR_INVALID_SIGNATURE'), reason: 'wallet_rejected:RS_ERROR_INVALID_SIGNATURE', alert: true, audit: answered('RS_ERROR_INVALID_SIGNATURE') },
      { title: 'RS_ERROR_INVALID_PARTNER', fault: status('RS_ERROR_INVALID_PARTNER'), reason: 'wallet_rejected:RS_ERROR_INVALID_PARTNER', alert: true, audit: answered('RS_ERROR_INVALID_PARTNER') },
      { title: 'RS_ERROR_WRONG_CURRENCY', fault: status('RS_ERROR_WRONG_CURRENCY'), reason: 'wallet_rejected:RS_ERROR_WRONG_CURRENCY', alert: true, audit: answered('RS_ERROR_WRONG_CURRENCY') },
      { title: 'RS_ERROR_WRONG_SYNTAX', fault: status('RS_ERROR_WRONG_SYNTAX'), reason: 'wallet_rejected:RS_ERROR_WRONG_SYNTAX', alert: true, audit: answered('RS_ERROR_WRONG_SYNTAX') },
      { title: 'RS_ERROR_WRONG_TYPES', fault: status('RS_ERROR_WRONG_TYPES'), reason: 'wallet_rejected:RS_ERROR_WRONG_TYPES', alert: true, audit: answered('RS_ERROR_WRONG_TYPES') },
      // 7.1: "on win or rollback: treat as settled; otherwise fatal"
      { title: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', fault: status('RS_ERROR_TRANSACTION_DOES_NOT_EXIST'), reason: 'wallet_rejected:RS_ERROR_TRANSACTION_DOES_NOT_EXIST', alert: true, audit: answered('RS_ERROR_TRANSACTION_DOES_NOT_EXIST') },
      // D13: the transport failures and malformed answers are RS_ERROR_UNKNOWN
      { title: 'an unknown status string', fault: status('RS_ERROR_SOMETHING_NEW'), reason: 'wallet_rejected:RS_ERROR_UNKNOWN', rollback: true, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 200, error: /unknown status "RS_ERROR_SOMETHING_NEW"/ } },
      { title: 'HTTP 500 with an HTML page', fault: { kind: 'http', httpStatus: 500 }, reason: 'wallet_rejected:RS_ERROR_UNKNOWN', rollback: true, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 500, error: /HTTP 500: response is not JSON/ } },
      // D13: a 4xx that refuses is read like a 200 (docs/wallet-api.md asks for 401 on a bad
      // signature): fatal, nothing to undo; a 5xx or a 4xx claiming success stays uncertain
      { title: 'RS_ERROR_INVALID_SIGNATURE with HTTP 401', fault: status('RS_ERROR_INVALID_SIGNATURE', 401), reason: 'wallet_rejected:RS_ERROR_INVALID_SIGNATURE', alert: true, audit: { status: 'RS_ERROR_INVALID_SIGNATURE', httpStatus: 401 } },
      { title: 'RS_ERROR_NOT_ENOUGH_MONEY with HTTP 402', fault: status('RS_ERROR_NOT_ENOUGH_MONEY', 402), reason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY', audit: { status: 'RS_ERROR_NOT_ENOUGH_MONEY', httpStatus: 402 } },
      { title: 'RS_OK with HTTP 400', fault: status('RS_OK', 400), reason: 'wallet_rejected:RS_ERROR_UNKNOWN', rollback: true, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 400, error: /HTTP 400 with RS_OK/ } },
      { title: 'RS_ERROR_INVALID_SIGNATURE with HTTP 500', fault: status('RS_ERROR_INVALID_SIGNATURE', 500), reason: 'wallet_rejected:RS_ERROR_UNKNOWN', rollback: true, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 500, error: /^HTTP 500$/ } },
      { title: 'a body that is not JSON', fault: { kind: 'invalid_json' }, reason: 'wallet_rejected:RS_ERROR_UNKNOWN', rollback: true, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 200, error: /not JSON/ } },
      { title: 'a requestUuid that is not echoed', fault: { kind: 'wrong_request_uuid' }, reason: 'wallet_rejected:RS_ERROR_UNKNOWN', rollback: true, debited: true, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 200, error: /requestUuid does not echo/ } },
      // 8.1: no answer within WALLET_CALL_TIMEOUT_MS (1000 in tests)
      { title: 'no answer (timeout)', fault: { kind: 'hang' }, reason: 'wallet_timeout', rollback: true, audit: { status: 'RS_ERROR_TIMEOUT', httpStatus: null, error: /no answer within 1000 ms/ } },
      { title: 'an answer after the timeout (debit applied late)', fault: { kind: 'delay', ms: 1500 }, reason: 'wallet_timeout', rollback: true, debited: true, audit: { status: 'RS_ERROR_TIMEOUT', httpStatus: null, error: /no answer within 1000 ms/ } },
    ];

    for (const c of cases) {
      it(`${c.title}: ${c.accepted ? 'ACCEPTED' : `REJECTED ${c.reason}`}${c.rollback ? ', rolled back' : ''}${c.ends ? ', session ended' : ''}`, async () => {
        // the player bets LOW and the dice roll HIGH: no win call follows an accepted bet
        const operator = await operatorRolling('HIGH', 3000);
        const session = await seated(operator);
        const { player, playerRef, sessionId } = session;
        const alerted = alerts();
        h.wallet.setFault('bet', c.fault, 1);
        const clientBetId = uniqueId('cb');
        // D28: the ack travels before the session_ended that the same answer causes
        const acked = player.request('place_bet', { side: 'LOW', amountMicro: STAKE.toString(), clientBetId }, 8000).catch((err: Error) => ({ lost: err.message }));

        if (c.ends) {
          const rejected = await player.waitFor('bet_rejected');
          expect(rejected).to.include({ reason: c.reason, clientBetId });
          // D4: session_ended with the wallet status, then the socket is closed
          const ended = await player.waitFor('session_ended');
          expect(ended.reason).to.equal(`wallet_status:${c.ends}`);
          await player.waitFor('disconnect');
          const order = player.messages.map((m) => m.event).filter((e) => ['bet_rejected', 'session_ended', 'disconnect'].includes(e));
          expect(order).to.deep.equal(['bet_rejected', 'session_ended', 'disconnect']);
        }
        const ack = await acked;
        const bet = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId } });
        alerted.restore();
        expect(alerted.seen.some((a) => a.fields.betId === bet.id), 'alerted').to.equal(c.alert === true);

        if (c.accepted) {
          expect(ack).to.deep.equal({ ok: true, betId: bet.id, roundId: bet.roundId });
          expect(bet.status).to.equal('ACCEPTED');
          expect(bet.rejectReason).to.equal(null);
          const placed = await player.waitFor('bet_placed');
          expect(placed).to.include({ betId: bet.id, roundId: bet.roundId, side: 'LOW', amountMicro: STAKE.toString(), isFree: false });
          const round = await h.svc.db.round.findUniqueOrThrow({ where: { id: bet.roundId } });
          expect(round.betId).to.equal(bet.id);
          expect((await h.svc.db.pendingRoundBet.findUniqueOrThrow({ where: { betId: bet.id } })).state).to.equal('HELD');
        } else {
          expect(ack).to.deep.equal({ ok: false, reason: c.reason });
          expect(bet.status).to.equal('REJECTED');
          expect(bet.rejectReason).to.equal(c.reason);
          expect(await player.waitFor('bet_rejected')).to.include({ reason: c.reason, clientBetId });
          expect(player.messages.some((m) => m.event === 'bet_placed')).to.equal(false);
          expect(await h.svc.db.round.findUnique({ where: { id: bet.roundId } })).to.equal(null);
          expect(await h.svc.db.pendingRoundBet.findUnique({ where: { betId: bet.id } })).to.equal(null);
        }

        // the audit row of the bet call
        const betRequests = requestsTo('bet', 'transactionUuid', bet.betTransactionUuid);
        expect(betRequests).to.have.length(1);
        await expectAudited(betRequests[0]!, { endpoint: 'bet', transactionUuid: bet.betTransactionUuid, sessionId, attempt: 1, ...c.audit });
        expect(await h.svc.db.walletCall.count({ where: { transactionUuid: bet.betTransactionUuid } })).to.equal(1);

        // a rollback only for an uncertain outcome (7.1, 3.2)
        const rollbacks = await jobsOf(bet.id, 'rollback');
        if (c.rollback) {
          expect(rollbacks).to.have.length(1);
          const job = rollbacks[0]!;
          expect(job.purpose).to.equal('uncertain_bet');
          expect(job.transactionUuid).to.equal(bet.rollbackTransactionUuid);
          expect(job.transactionUuid).not.to.equal(bet.betTransactionUuid);
          // D13: its own transactionUuid, referencing the bet's
          expect(job.payload).to.include({ transactionUuid: bet.rollbackTransactionUuid, referenceTransactionUuid: bet.betTransactionUuid, roundId: bet.roundId, playerRef });
          const done = await completedJob(job.id);
          expect(done).to.include({ attempts: 1, lastError: null, nextAttemptAt: null });
          const sent = requestsTo('rollback', 'referenceTransactionUuid', bet.betTransactionUuid);
          expect(sent).to.have.length(1);
          expect(sent[0]!.body).to.include({ transactionUuid: bet.rollbackTransactionUuid });
          // a debit the wallet never booked is unknown to it (4.2 rollback rule 4)
          const answer = c.debited ? 'RS_OK' : 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST';
          expect(responseStatus(sent[0])).to.equal(answer);
          await expectAudited(sent[0]!, { endpoint: 'rollback', transactionUuid: bet.rollbackTransactionUuid!, sessionId, attempt: 1, status: answer, httpStatus: 200 });
          await expectQueueJobDone('rollback', job.id);
        } else {
          expect(rollbacks).to.deep.equal([]);
          expect(bet.rollbackTransactionUuid).to.equal(null);
          expect(requestsTo('rollback', 'referenceTransactionUuid', bet.betTransactionUuid)).to.deep.equal([]);
        }

        // the operator's ledger: a status fault answers without booking; a debit applied
        // behind a lost answer is refunded once
        expect(ledgerOf(playerRef)).to.deep.equal(c.debited ? [['bet', STAKE], ['rollback', STAKE]] : []);
        expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START);

        // 7.1, 3.3: only USER_DISABLED, TOKEN_EXPIRED and INVALID_TOKEN end the session
        const stored = await h.svc.db.session.findUniqueOrThrow({ where: { id: sessionId }, include: { seeds: true } });
        if (c.ends) {
          expect(stored.state).to.equal('TERMINATED');
          expect(stored.endReason).to.equal(`wallet_status:${c.ends}`);
          expect(stored.terminatedAt).to.be.instanceOf(Date);
          // D2: an ended session's seed becomes revealable
          expect(stored.seeds.every((s) => s.retiredAt !== null)).to.equal(true);
          expect(player.socket.connected).to.equal(false);
        } else {
          expect(stored).to.include({ state: 'ACTIVE', endReason: null, terminatedAt: null });
          expect(player.messages.some((m) => m.event === 'session_ended')).to.equal(false);
          expect(player.socket.connected).to.equal(true);
        }
        expect(h.wallet.violations).to.deep.equal([]);
        player.close();
      });
    }

    it('drop_after_apply: debited but the answer lost -> REJECTED, rolled back, balance restored', async () => {
      const operator = await operatorRolling('HIGH', 3000);
      const session = await seated(operator);
      const { player, playerRef, sessionId } = session;
      h.wallet.setFault('bet', { kind: 'drop_after_apply' }, 1);
      const { ack, bet } = await placeBet(session, 'dropped');
      expect(ack).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
      expect(bet).to.include({ status: 'REJECTED', rejectReason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
      expect(await player.waitFor('bet_rejected')).to.include({ reason: 'wallet_rejected:RS_ERROR_UNKNOWN', clientBetId: 'dropped' });

      const [job] = await jobsOf(bet.id, 'rollback');
      expect(job, 'a rollback job').to.not.equal(undefined);
      await completedJob(job!.id);
      const sent = requestsTo('rollback', 'referenceTransactionUuid', bet.betTransactionUuid);
      expect(sent).to.have.length(1);
      expect(sent[0]!.body).to.include({ referenceTransactionUuid: bet.betTransactionUuid, transactionUuid: bet.rollbackTransactionUuid });
      expect(responseStatus(sent[0])).to.equal('RS_OK');

      // debited once, refunded once
      expect(ledgerOf(playerRef)).to.deep.equal([['bet', STAKE], ['rollback', STAKE]]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START);
      const betCall = requestsTo('bet', 'transactionUuid', bet.betTransactionUuid);
      expect(betCall).to.have.length(1);
      expect(betCall[0]!.response).to.equal('no_response');
      await expectAudited(betCall[0]!, { endpoint: 'bet', transactionUuid: bet.betTransactionUuid, sessionId, attempt: 1, status: 'RS_ERROR_UNKNOWN', httpStatus: null, error: /network error/ });
      // the refund is a wallet answer that changes the balance (6.4)
      expect((await player.waitFor('balance_update', (p) => p.balanceMicro === START.toString())).currency).to.equal('EUR');
      expect(h.wallet.violations).to.deep.equal([]);
      player.close();
    });
  });

  describe('with no wallet credential to sign the bet call', () => {
    it('a credential revoked since the session began: the bet is refused service_unavailable, nothing is sent nor rolled back', async () => {
      const operator = await operatorRolling('HIGH', 3000);
      const session = await seated(operator);
      const { player, playerRef } = session;
      const seen = alerts();
      await revokeCredential(h.svc.db, operator.walletKeyId);
      const { ack, bet } = await placeBet(session, 'unsigned');
      expect(ack).to.deep.equal({ ok: false, reason: 'service_unavailable' });
      expect(bet).to.include({ status: 'REJECTED', rejectReason: 'service_unavailable', rollbackTransactionUuid: null });
      expect(await player.waitFor('bet_rejected')).to.include({ reason: 'service_unavailable', clientBetId: 'unsigned' });
      expect(requestsTo('bet', 'transactionUuid', bet.betTransactionUuid)).to.deep.equal([]);
      expect(await h.svc.db.walletCall.count({ where: { transactionUuid: bet.betTransactionUuid } }), 'no audit row: no call').to.equal(0);
      expect(await jobsOf(bet.id, 'rollback')).to.deep.equal([]);
      expect(ledgerOf(playerRef)).to.deep.equal([]);
      expect(seen.seen.map((a) => a.msg)).to.include(`operator ${operator.operatorId} has no valid wallet credential`);
      expect(player.socket.connected, 'the session goes on').to.equal(true);
      player.close();
    });
  });

  // ------------------------------------------------------------------------------------
  describe('on the win call', () => {
    // A winning round (LOW forced, bet LOW); resolves once the outcome is announced and the
    // win job exists.
    async function winningRound(clientBetId: string) {
      const operator = await operatorRolling('LOW');
      const session = await seated(operator);
      const { ack, bet } = await placeBet(session, clientBetId);
      expect(ack.ok, JSON.stringify(ack)).to.equal(true);
      const result = await session.player.waitFor('round_result', (p) => p.betId === bet.id);
      expect(result).to.include({ won: true, side: 'LOW', payoutMicro: NET_WIN.toString() });
      const job = await until('the win job', async () => (await jobsOf(bet.id, 'win'))[0]);
      const settledBet = await h.svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } });
      expect(job.transactionUuid).to.equal(settledBet.winTransactionUuid);
      expect(job.payload).to.include({
        transactionUuid: settledBet.winTransactionUuid,
        referenceTransactionUuid: bet.betTransactionUuid,
        amountMicro: NET_WIN.toString(),
        roundId: bet.roundId,
      });
      return { ...session, bet: settledBet, job };
    }

    const winRequests = (bet: Bet) => requestsTo('win', 'transactionUuid', bet.winTransactionUuid!);

    async function expectSettled(bet: Bet, payoutMicro: bigint) {
      const stored = await h.svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } });
      expect(stored.status).to.equal('SETTLED');
      expect(stored.payoutMicro).to.equal(payoutMicro);
      expect(stored.settledAt).to.be.instanceOf(Date);
      expect((await h.svc.db.pendingRoundBet.findUniqueOrThrow({ where: { betId: bet.id } })).state).to.equal('RESOLVED');
      expect((await h.svc.db.round.findUniqueOrThrow({ where: { id: bet.roundId } })).state).to.equal('SETTLED');
    }

    it('RS_OK credits the net payout once', async () => {
      const { player, playerRef, sessionId, bet, job } = await winningRound('win-ok');
      const done = await completedJob(job.id);
      expect(done).to.include({ attempts: 1, lastError: null, nextAttemptAt: null, abandonedAt: null });
      await expectSettled(bet, NET_WIN);
      expect(ledgerOf(playerRef)).to.deep.equal([['bet', STAKE], ['win', NET_WIN]]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START - STAKE + NET_WIN);
      expect((await player.waitFor('balance_update', (p) => p.balanceMicro === (START - STAKE + NET_WIN).toString())).currency).to.equal('EUR');
      const sent = winRequests(bet);
      expect(sent).to.have.length(1);
      await expectAudited(sent[0]!, { endpoint: 'win', transactionUuid: bet.winTransactionUuid!, sessionId, attempt: 1, status: 'RS_OK', httpStatus: 200 });
      await expectQueueJobDone('settle', job.id);
      expect(h.wallet.violations).to.deep.equal([]);
      player.close();
    });

    it('RS_ERROR_DUPLICATE_TRANSACTION counts as success', async () => {
      h.wallet.setFault('win', { kind: 'status', status: 'RS_ERROR_DUPLICATE_TRANSACTION' }, 1);
      const { player, playerRef, sessionId, bet, job } = await winningRound('win-dup');
      const done = await completedJob(job.id);
      expect(done).to.include({ attempts: 1, lastError: null, nextAttemptAt: null });
      await expectSettled(bet, NET_WIN);
      const sent = winRequests(bet);
      expect(sent).to.have.length(1);
      expect(responseStatus(sent[0])).to.equal('RS_ERROR_DUPLICATE_TRANSACTION');
      await expectAudited(sent[0]!, { endpoint: 'win', transactionUuid: bet.winTransactionUuid!, sessionId, attempt: 1, status: 'RS_ERROR_DUPLICATE_TRANSACTION', httpStatus: 200 });
      await expectQueueJobDone('settle', job.id);
      // the fault answers without booking: the ledger keeps only the debit
      expect(ledgerOf(playerRef)).to.deep.equal([['bet', STAKE]]);
      expect(h.wallet.violations).to.deep.equal([]);
      player.close();
    });

    it('RS_ERROR_TRANSACTION_DOES_NOT_EXIST: alert, bet SETTLED with payout 0, job abandoned (a ticket, D23), no retry', async () => {
      const alerted = alerts();
      try {
        h.wallet.setFault('win', { kind: 'status', status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, 1);
        const { player, playerRef, bet, job } = await winningRound('win-dne');
        const done = await until(`wallet job ${job.id} abandoned`, async () => {
          const row = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
          return row.abandonedAt ? row : null;
        });
        expect(done).to.include({ attempts: 1, lastError: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', nextAttemptAt: null, completedAt: null });
        // contract 4.2: treated as settled without payout
        await expectSettled(bet, 0n);
        await expectQueueJobDone('settle', job.id);
        expect(winRequests(bet)).to.have.length(1);
        expect(alerted.seen.some((a) => a.fields.transactionUuid === bet.winTransactionUuid && a.fields.endpoint === 'win')).to.equal(true);
        expect(ledgerOf(playerRef)).to.deep.equal([['bet', STAKE]]);
        expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START - STAKE);
        expect(h.wallet.violations).to.deep.equal([]);
        player.close();
      } finally {
        alerted.restore();
      }
    });

    it('uncertain answers (HTTP 500 twice) are retried with backoff from 1 s and credited once', async () => {
      h.wallet.setFault('win', { kind: 'http', httpStatus: 500 }, 2);
      const { player, playerRef, sessionId, bet, job } = await winningRound('win-500');

      // while retrying: the row says how far it got and when it tries next (2.13)
      const firstFailure = await until('the first failed attempt', async () => {
        const row = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
        return row.attempts === 1 ? row : null;
      });
      expect(firstFailure).to.include({ completedAt: null, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)', lastTimedOut: false });
      const first = winRequests(bet)[0]!;
      const firstCall = await expectAudited(first, { endpoint: 'win', transactionUuid: bet.winTransactionUuid!, sessionId, attempt: 1, status: 'RS_ERROR_UNKNOWN', httpStatus: 500, error: /HTTP 500/ });
      const firstDelay = firstFailure.nextAttemptAt!.getTime() - firstCall.respondedAt!.getTime();
      expect(firstDelay, 'first retry ~1 s (±20 %)').to.be.within(800, 1300);
      expect((await h.svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } })).status).to.equal('ACCEPTED');

      const secondFailure = await until('the second failed attempt', async () => {
        const row = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
        return row.attempts === 2 ? row : null;
      });
      expect(secondFailure).to.include({ completedAt: null, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)' });
      const secondCallRow = await h.svc.db.walletCall.findFirstOrThrow({ where: { transactionUuid: bet.winTransactionUuid!, httpStatus: 500 }, orderBy: { createdAt: 'desc' } });
      const secondDelay = secondFailure.nextAttemptAt!.getTime() - secondCallRow.respondedAt!.getTime();
      expect(secondDelay, 'second retry ~2 s (±20 %)').to.be.within(1600, 2500);

      const done = await completedJob(job.id);
      expect(done).to.include({ attempts: 3, lastError: null, nextAttemptAt: null });
      await expectSettled(bet, NET_WIN);
      const sent = winRequests(bet);
      expect(sent.map(responseStatus)).to.deep.equal([undefined, undefined, 'RS_OK']);
      expect(sent.map((r) => (typeof r.response === 'object' ? r.response.httpStatus : null))).to.deep.equal([500, 500, 200]);
      // the retries really waited: ~1 s, then ~2 s
      const gap1 = sent[1]!.receivedAt.getTime() - sent[0]!.receivedAt.getTime();
      const gap2 = sent[2]!.receivedAt.getTime() - sent[1]!.receivedAt.getTime();
      expect(gap1, 'first retry after ~1 s').to.be.within(800, 1700);
      expect(gap2, 'second retry after ~2 s').to.be.within(1600, 3000);
      // not a timeout, so each attempt is a new request for the same movement (4.3)
      const uuids = sent.map((r) => (r.body as { requestUuid: string }).requestUuid);
      expect(new Set(uuids).size).to.equal(3);
      for (const r of sent) expect(r.body).to.include({ transactionUuid: bet.winTransactionUuid, referenceTransactionUuid: bet.betTransactionUuid, amountMicro: NET_WIN.toString() });
      expect(await h.svc.db.walletCall.count({ where: { transactionUuid: bet.winTransactionUuid! } })).to.equal(3);

      expect(ledgerOf(playerRef)).to.deep.equal([['bet', STAKE], ['win', NET_WIN]]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START - STAKE + NET_WIN);
      await player.waitFor('balance_update', (p) => p.balanceMicro === (START - STAKE + NET_WIN).toString());
      await expectQueueJobDone('settle', job.id);
      expect(h.wallet.violations).to.deep.equal([]);
      player.close();
    });

    it('a timeout on the win: the retry resends the same requestUuid and bytes (D6), credited once', async () => {
      h.wallet.setFault('win', { kind: 'hang' }, 1);
      const { player, playerRef, sessionId, bet, job } = await winningRound('win-hang');
      const retrying = await until('the timed-out attempt', async () => {
        const row = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
        return row.attempts === 1 ? row : null;
      });
      const first = winRequests(bet)[0]!;
      expect(retrying).to.include({
        completedAt: null,
        lastError: 'RS_ERROR_TIMEOUT',
        lastTimedOut: true,
        lastRequestUuid: (first.body as { requestUuid: string }).requestUuid,
        lastBytes: first.rawBody,
      });
      expect(retrying.nextAttemptAt).to.be.instanceOf(Date);

      const done = await completedJob(job.id);
      expect(done).to.include({ attempts: 2, lastError: null, nextAttemptAt: null, lastTimedOut: false });
      const sent = winRequests(bet);
      expect(sent).to.have.length(2);
      expect(sent[1]!.rawBody, 'the same bytes').to.equal(sent[0]!.rawBody);
      expect((sent[1]!.body as { requestUuid: string }).requestUuid).to.equal((sent[0]!.body as { requestUuid: string }).requestUuid);
      expect(sent[0]!.response).to.equal('no_response');
      expect(responseStatus(sent[1])).to.equal('RS_OK');
      // two audit rows for the one request: attempts 1 and 2
      await expectAudited(sent[0]!, { endpoint: 'win', transactionUuid: bet.winTransactionUuid!, sessionId, attempt: 1, status: 'RS_ERROR_TIMEOUT', httpStatus: null, error: /no answer/ });
      await expectAudited(sent[1]!, { endpoint: 'win', transactionUuid: bet.winTransactionUuid!, sessionId, attempt: 2, status: 'RS_OK', httpStatus: 200 });

      await expectSettled(bet, NET_WIN);
      expect(ledgerOf(playerRef)).to.deep.equal([['bet', STAKE], ['win', NET_WIN]]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START - STAKE + NET_WIN);
      await expectQueueJobDone('settle', job.id);
      expect(h.wallet.violations).to.deep.equal([]);
      player.close();
    });

    it('drop_after_apply on the win: the retry is answered as already done, credited exactly once', async () => {
      h.wallet.setFault('win', { kind: 'drop_after_apply' }, 1);
      const { player, playerRef, bet, job } = await winningRound('win-drop');
      const done = await completedJob(job.id);
      expect(done).to.include({ attempts: 2, lastError: null, nextAttemptAt: null });
      const sent = winRequests(bet);
      expect(sent).to.have.length(2);
      expect(sent[0]!.response).to.equal('no_response');
      // the cached RS_OK (same requestUuid) or RS_ERROR_DUPLICATE_TRANSACTION (a new one), 4.3
      expect(['RS_OK', 'RS_ERROR_DUPLICATE_TRANSACTION']).to.include(responseStatus(sent[1]));
      await expectSettled(bet, NET_WIN);
      expect(ledgerOf(playerRef)).to.deep.equal([['bet', STAKE], ['win', NET_WIN]]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START - STAKE + NET_WIN);
      await player.waitFor('balance_update', (p) => p.balanceMicro === (START - STAKE + NET_WIN).toString());
      await expectQueueJobDone('settle', job.id);
      expect(h.wallet.violations).to.deep.equal([]);
      player.close();
    });
  });

  // ------------------------------------------------------------------------------------
  describe('on the rollback call (after an uncertain bet)', () => {
    async function uncertainBet(betFault: WalletFault, clientBetId: string) {
      const operator = await operatorRolling('HIGH', 3000);
      const session = await seated(operator);
      h.wallet.setFault('bet', betFault, 1);
      const { ack, bet } = await placeBet(session, clientBetId);
      expect(ack).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
      const [job] = await jobsOf(bet.id, 'rollback');
      expect(job, 'a rollback job').to.not.equal(undefined);
      return { ...session, bet, job: job! };
    }

    for (const status of ['RS_OK', 'RS_ERROR_DUPLICATE_TRANSACTION', 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST']) {
      it(`${status} completes the job after one attempt`, async () => {
        const alerted = alerts();
        try {
          h.wallet.setFault('rollback', { kind: 'status', status }, 1);
          const { player, sessionId, bet, job } = await uncertainBet({ kind: 'http', httpStatus: 503 }, `rb-${status}`);
          const done = await completedJob(job.id);
          expect(done).to.include({ attempts: 1, lastError: null, nextAttemptAt: null, abandonedAt: null });
          await expectQueueJobDone('rollback', job.id);
          const sent = requestsTo('rollback', 'referenceTransactionUuid', bet.betTransactionUuid);
          expect(sent).to.have.length(1);
          expect(responseStatus(sent[0])).to.equal(status);
          await expectAudited(sent[0]!, { endpoint: 'rollback', transactionUuid: bet.rollbackTransactionUuid!, sessionId, attempt: 1, status, httpStatus: 200 });
          // 7.1: "alert and treat as settled" for a transaction the wallet does not know
          const alert = alerted.seen.some((a) => a.fields.transactionUuid === bet.rollbackTransactionUuid);
          expect(alert).to.equal(status === 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST');
          expect((await h.svc.db.bet.findUniqueOrThrow({ where: { id: bet.id } })).status).to.equal('REJECTED');
          expect(h.wallet.violations).to.deep.equal([]);
          player.close();
        } finally {
          alerted.restore();
        }
      });
    }

    it('an HTTP 500 is retried, then the rollback completes and refunds once', async () => {
      h.wallet.setFault('rollback', { kind: 'http', httpStatus: 500 }, 1);
      const { player, playerRef, sessionId, bet, job } = await uncertainBet({ kind: 'drop_after_apply' }, 'rb-500');
      const retrying = await until('the failed rollback attempt', async () => {
        const row = await h.svc.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
        return row.attempts === 1 ? row : null;
      });
      expect(retrying).to.include({ completedAt: null, lastError: 'RS_ERROR_UNKNOWN (HTTP 500)' });
      const first = requestsTo('rollback', 'referenceTransactionUuid', bet.betTransactionUuid)[0]!;
      const firstCall = await expectAudited(first, { endpoint: 'rollback', transactionUuid: bet.rollbackTransactionUuid!, sessionId, attempt: 1, status: 'RS_ERROR_UNKNOWN', httpStatus: 500, error: /HTTP 500/ });
      expect(retrying.nextAttemptAt!.getTime() - firstCall.respondedAt!.getTime()).to.be.within(800, 1300);
      // the stake is still out while the rollback waits
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START - STAKE);

      const done = await completedJob(job.id);
      expect(done).to.include({ attempts: 2, lastError: null, nextAttemptAt: null });
      const sent = requestsTo('rollback', 'referenceTransactionUuid', bet.betTransactionUuid);
      expect(sent).to.have.length(2);
      expect(responseStatus(sent[1])).to.equal('RS_OK');
      // the same movement both times (its own transactionUuid, stable across retries, D13)
      for (const r of sent) expect(r.body).to.include({ transactionUuid: bet.rollbackTransactionUuid, referenceTransactionUuid: bet.betTransactionUuid });
      expect(ledgerOf(playerRef)).to.deep.equal([['bet', STAKE], ['rollback', STAKE]]);
      expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(START);
      await player.waitFor('balance_update', (p) => p.balanceMicro === START.toString());
      await expectQueueJobDone('rollback', job.id);
      expect(h.wallet.violations).to.deep.equal([]);
      player.close();
    });
  });
});
