import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Bet, WalletJob } from '../../../src/shared/platform/db/client.js';
import type { GameConfigValues } from '../../../src/shared/game/operators/game-config.js';
import type { OnboardedOperator } from '../../../src/shared/game/operators/operators.js';
import type { WalletEndpoint, WalletFault } from '../../../src/simulator/wallet-simulator.js';
import { ALL_ROLES, startDeployment, type Deployment, type Seat } from '../../support/deployment.js';
import { bettingWindowWithRoom, until } from '../../support/game.js';
import type { Player } from '../../support/player.js';
import { signedRequest } from '../../support/signed-client.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { circuitKey } from '../../../src/shared/wallet/circuit.js';

// Every wallet fault on the three movements of a round (contract 3.2, 3.4, 4.2, 4.3,
// 7.1; D6, D13), against one all-in-one service process: a timeout, HTTP 5xx, a body that is
// not JSON, an unknown status, RS_ERROR_TRANSACTION_DOES_NOT_EXIST, a slow answer within the
// timeout, a connection reset mid-call and a black hole that loses the bytes in flight (a TCP
// proxy between the service and the simulator), a movement the wallet applied while its answer was lost, and a debit
// held back until after its own rollback (D27). Then the
// circuit breaker opening, refusing and closing. After each case the money invariants hold
// and the player, the operator's ledger and the service's records show what 7.1 says.
// Every other case's bet is a free bet (D42: its player's grant, made before the fault), so
// that the free-bet invariants hold after each fault too: debited isFree with no cash moved,
// its win the net of its stake, its round given back when it is refused, rolled back or
// voided, and its session told so (free_bets).

const FUNDS = 10_000_000n;
const STAKE = 1_000_000n;
// contract 8.4 with the defaults: 2 x stake minus 3 % commission
const WIN = 1_940_000n;
// D42: a free bet's win is its payout less the stake it never paid
const FREE_WIN = WIN - STAKE;

type Network = 'reset' | 'blackhole';
// seat(true): a player with a grant of one free round, which place() spends
type Table = { operator: OnboardedOperator; seat: (free?: boolean) => Promise<Seat> };

describe('faults: the operator wallet failing on bet, win and rollback', function () {
  this.timeout(60_000);
  let d: Deployment;
  let proxy: TcpProxy;
  let redis: Redis;
  const players: Player[] = [];
  before(async () => {
    d = await startDeployment();
    const wallet = new URL(d.wallet.url);
    proxy = await startTcpProxy({ target: { host: wallet.hostname, port: Number(wallet.port) } });
    redis = new Redis(d.redisUrl);
    await d.start('all', ALL_ROLES);
  });
  after(async () => {
    for (const player of players) player.close();
    await d?.close();
    await proxy?.close();
    redis?.disconnect();
  });
  afterEach(() => {
    for (const endpoint of ['bet', 'win', 'rollback'] as const) d.wallet.setFault(endpoint, null);
    proxy.blackhole(false);
    for (const player of players.splice(0)) player.close();
  });

  // d.table, with the operator's wallet behind the proxy: still the deployment's simulator,
  // so d.settle() checks its ledger for this operator
  // free: how many of its players have a grant (one campaign, made before any fault)
  async function proxiedTable(config: Partial<GameConfigValues>, free = 0): Promise<Table> {
    const table = await d.table({ rollingWindowMs: 200, cooldownMs: 200, ...config }, { walletUrl: proxy.via(d.wallet.url) });
    const campaign = free > 0 ? await d.freeBets(table.operator, { players: free, stakeMicro: STAKE }) : undefined;
    const unseated = [...(campaign?.playerRefs ?? [])];
    return {
      operator: table.operator,
      seat: async (isFree = false) => {
        const playerRef = isFree ? unseated.shift() : undefined;
        if (isFree && !playerRef) throw new Error('no grant left on this table');
        const seat = await table.seat(FUNDS, undefined, playerRef);
        players.push(seat.player);
        if (playerRef) grants.set(seat, campaign!.grantOf.get(playerRef)!);
        return seat;
      },
    };
  }
  // the grant a free seat spends
  const grants = new Map<Seat, string>();
  // D42: the session is told its grant has its round again (free_bets)
  const roundBack = (seat: Seat) => seat.player.waitFor('free_bets', (p) => p.freeBets.some((f: { grantId: string; remaining: number }) => f.grantId === grants.get(seat) && f.remaining === 1));

  // one table's cases share windows (one bet per player per round, one player per case)
  const inWindow = (seat: Seat, leftMs: number) => bettingWindowWithRoom(seat.player, leftMs);

  const place = (seat: Seat) => {
    const grantId = grants.get(seat);
    return seat.player.request('place_bet', { side: 'LOW', ...(grantId ? { freeBetGrantId: grantId } : { amountMicro: STAKE.toString() }) }, 15_000);
  };
  const betOf = (seat: Seat) => d.db.bet.findFirstOrThrow({ where: { sessionId: seat.sessionId } });
  const jobOf = (bet: Bet, endpoint: 'win' | 'rollback') => d.db.walletJob.findFirst({ where: { betId: bet.id, endpoint } });
  // the operator's ledger for one player, in order
  const movements = (seat: Seat) => d.wallet.transactions.filter((t) => t.playerRef === seat.playerRef).map((t) => [t.type, t.amountMicro]);
  const requestsOf = (seat: Seat, endpoint: WalletEndpoint) =>
    d.wallet.requests.filter((r) => r.endpoint === endpoint && (r.body as { playerRef?: string } | undefined)?.playerRef === seat.playerRef);
  const pendingAt = (seat: Seat, endpoint: WalletEndpoint) => async () => requestsOf(seat, endpoint).some((r) => r.response === 'pending');
  // the audit rows (2.13) of one movement, attempt by attempt
  const callsOf = (transactionUuid: string) => d.db.walletCall.findMany({ where: { transactionUuid }, orderBy: { attempt: 'asc' } });
  const jobWithAttempts = (job: WalletJob, attempts: number) =>
    until(`wallet job ${job.id} at ${attempts} attempt(s)`, async () => {
      const row = await d.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
      return row.attempts >= attempts ? row : null;
    });
  const alerted = (match: (line: Record<string, unknown>) => boolean) => d.processes.get('all')!.waitForLog((line) => line.level === 50 && match(line), 5000);

  // A connection reset mid-call: once the request is at the wallet (its fault applies the
  // movement and holds the answer back), every connection through the proxy is reset.
  async function resetMidCall(seat: Seat, endpoint: WalletEndpoint): Promise<void> {
    await until(`the ${endpoint} request at the wallet`, pendingAt(seat, endpoint));
    proxy.resetAll();
  }
  // what a reset needs from the simulator: the movement applied, the answer held back (less
  // than the 2 s call timeout, so the reset, not a timeout, ends the call)
  const HELD_ANSWER: WalletFault = { kind: 'delay', ms: 1500 };

  // D6, 4.3: a timed-out call is resent with the same requestUuid and bytes; any other
  // failure is retried under a fresh requestUuid for the same transactionUuid
  async function expectRetriedAs(transactionUuid: string, sameRequest: boolean, seat: Seat, endpoint: WalletEndpoint) {
    const calls = await callsOf(transactionUuid);
    expect(calls.map((c) => c.attempt)).to.deep.equal(sameRequest ? [1, 2] : [1, 1]);
    expect(calls[0]!.requestUuid === calls[1]!.requestUuid, 'the same requestUuid').to.equal(sameRequest);
    expect(calls[0]!.requestBody === calls[1]!.requestBody, 'the same bytes').to.equal(sameRequest);
    // the bytes the wallet received are those audited
    const audited = new Set(calls.map((c) => c.requestBody));
    for (const request of requestsOf(seat, endpoint)) expect(audited.has(request.rawBody)).to.equal(true);
  }

  // ------------------------------------------------------------------------------------
  describe('on the bet call', () => {
    // LOW never wins here: an accepted bet settles without a win call
    let table: Table;
    before(async () => {
      table = await proxiedTable({ bettingWindowMs: 3000, lowWeight: 0n, highWeight: 1n }, 4);
    });

    type BetCase = {
      title: string;
      fault?: WalletFault;
      network?: Network;
      reason: string;
      // 7.1: uncertain, so the debit is rolled back under the bet's transactionUuid
      rollback: boolean;
      // the wallet booked the debit before the answer went wrong
      debited: boolean;
      audit: { status: string; httpStatus: number | null; error: RegExp };
    };
    const UNKNOWN = 'wallet_rejected:RS_ERROR_UNKNOWN';
    // In this order the circuit (5 consecutive uncertain answers) stays closed: the fatal
    // answer between them is a healthy one (D13).
    const cases: BetCase[] = [
      { title: 'a timeout', fault: { kind: 'hang' }, reason: 'wallet_timeout', rollback: true, debited: false, audit: { status: 'RS_ERROR_TIMEOUT', httpStatus: null, error: /no answer within 2000 ms/ } },
      { title: 'HTTP 503', fault: { kind: 'http', httpStatus: 503 }, reason: UNKNOWN, rollback: true, debited: false, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 503, error: /HTTP 503/ } },
      { title: 'a body that is not JSON', fault: { kind: 'invalid_json' }, reason: UNKNOWN, rollback: true, debited: false, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 200, error: /not JSON/ } },
      { title: 'an unknown status', fault: { kind: 'status', status: 'RS_ERROR_SOMETHING_NEW' }, reason: UNKNOWN, rollback: true, debited: false, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: 200, error: /unknown status/ } },
      { title: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST (fatal on a bet)', fault: { kind: 'status', status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, reason: 'wallet_rejected:RS_ERROR_TRANSACTION_DOES_NOT_EXIST', rollback: false, debited: false, audit: { status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', httpStatus: 200, error: /^$/ } },
      { title: 'a connection reset mid-call, the debit applied', fault: HELD_ANSWER, network: 'reset', reason: UNKNOWN, rollback: true, debited: true, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: null, error: /network error/ } },
      { title: 'a black hole', network: 'blackhole', reason: 'wallet_timeout', rollback: true, debited: false, audit: { status: 'RS_ERROR_TIMEOUT', httpStatus: null, error: /no answer within 2000 ms/ } },
      { title: 'drop_after_apply: the debit applied, its answer lost', fault: { kind: 'drop_after_apply' }, reason: UNKNOWN, rollback: true, debited: true, audit: { status: 'RS_ERROR_UNKNOWN', httpStatus: null, error: /network error/ } },
    ];

    for (const [i, c] of cases.entries()) {
      const free = i % 2 === 1;
      it(`${c.title}: ${free ? 'a free bet ' : ''}REJECTED ${c.reason}${c.rollback ? ', rolled back' : ', no rollback'}${c.debited ? ', refunded once' : ''}${free ? ', its round given back' : ''}`, async () => {
        const seat = await table.seat(free);
        await inWindow(seat, 300);
        if (c.fault) d.wallet.setFault('bet', c.fault, 1);
        if (c.network === 'blackhole') proxy.blackhole(true);
        const acked = place(seat);
        if (c.network === 'reset') await resetMidCall(seat, 'bet');
        const ack = await acked;
        proxy.blackhole(false);

        expect(ack).to.deep.equal({ ok: false, reason: c.reason });
        expect(await seat.player.waitFor('bet_rejected')).to.include({ reason: c.reason });
        expect(await d.settle(15_000)).to.deep.equal([]);
        const bet = await betOf(seat);
        expect(bet).to.include({ status: 'REJECTED', rejectReason: c.reason });
        expect(await d.db.round.findUnique({ where: { id: bet.roundId } }), 'no round').to.equal(null);
        const [call] = await callsOf(bet.betTransactionUuid);
        expect(call).to.include({ endpoint: 'bet', status: c.audit.status, httpStatus: c.audit.httpStatus });
        expect(call!.error ?? '').to.match(c.audit.error);

        const job = await jobOf(bet, 'rollback');
        if (c.rollback) {
          expect(job, 'a rollback job').to.not.equal(null);
          expect(job!.completedAt).to.be.instanceOf(Date);
          expect(job!.payload).to.include({ transactionUuid: bet.rollbackTransactionUuid, referenceTransactionUuid: bet.betTransactionUuid });
          // 4.2 rule 4: a debit the wallet never booked is unknown to it, which completes the job
          const answered = requestsOf(seat, 'rollback').map((r) => (typeof r.response === 'object' ? r.response.status : r.response));
          expect(answered).to.deep.equal([c.debited ? 'RS_OK' : 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST']);
        } else {
          expect(job, 'no rollback').to.equal(null);
          expect(bet.rollbackTransactionUuid).to.equal(null);
          // 7.1: fatal, so alerted
          await alerted((line) => line.betId === bet.id);
        }
        // a free debit is booked with its stake and moves nothing (D42)
        expect(movements(seat)).to.deep.equal(c.debited ? [['bet', STAKE], ['rollback', STAKE]] : []);
        expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS);
        if (free) {
          expect(bet).to.include({ isFree: true, freeBetGrantId: grants.get(seat) });
          await roundBack(seat);
        }
      });
    }

    // D27: the debit is delayed on the way (held in the proxy) past the call's timeout; the
    // service rolls the bet back, the rollback reaches the wallet first, then the debit does.
    it('a debit that arrives after its own rollback (D27): moves no money, the bet stays REJECTED', async () => {
      const seat = await table.seat();
      await inWindow(seat, 300);
      const held = proxy.holdMatching('POST /wallet/bet');
      try {
        expect(await place(seat)).to.deep.equal({ ok: false, reason: 'wallet_timeout' });
        expect(held.connections, 'the debit is held back').to.equal(1);
        const bet = await betOf(seat);
        expect(bet).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });

        // the rollback overtakes the debit: the wallet knows no such debit (4.2 rule 4),
        // which completes the job and is alerted; it keeps a tombstone (D27)
        const job = await until('the rollback completed', async () => {
          const row = await jobOf(bet, 'rollback');
          return row?.completedAt ? row : null;
        });
        expect(job).to.include({ purpose: 'uncertain_bet', attempts: 1, transactionUuid: bet.rollbackTransactionUuid });
        const answered = (r: { response: unknown }) => (typeof r.response === 'object' ? (r.response as { status?: string }).status : r.response);
        expect(requestsOf(seat, 'rollback').map(answered)).to.deep.equal(['RS_ERROR_TRANSACTION_DOES_NOT_EXIST']);
        expect(requestsOf(seat, 'bet'), 'the debit has not reached the wallet yet').to.deep.equal([]);
        await alerted((line) => line.walletJobId === job.id && line.msg === 'wallet does not know the referenced transaction; treated as settled');

        // now the held debit arrives, the very bytes the service audited
        held.release();
        const late = await until('the late debit at the wallet', async () => requestsOf(seat, 'bet').find((r) => r.response !== 'pending'));
        const [call] = await callsOf(bet.betTransactionUuid);
        expect(late.rawBody).to.equal(call!.requestBody);
        expect(call).to.include({ status: 'RS_ERROR_TIMEOUT', httpStatus: null });
        // D27: refused, nothing booked (the answer finds the service's connection gone)
        expect(d.wallet.transactions.filter((t) => t.transactionUuid === bet.betTransactionUuid)).to.deep.equal([]);
        expect(answered(late)).to.equal('RS_ERROR_TRANSACTION_DOES_NOT_EXIST');

        expect(await d.settle(15_000)).to.deep.equal([]);
        expect(await betOf(seat)).to.include({ status: 'REJECTED', rejectReason: 'wallet_timeout' });
        expect(await d.db.round.findUnique({ where: { id: bet.roundId } }), 'no round').to.equal(null);
        expect(movements(seat)).to.deep.equal([]);
        expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS);
      } finally {
        held.release();
      }
    });

    it('a slow answer within the timeout: ACCEPTED and settled normally', async () => {
      const seat = await table.seat();
      await inWindow(seat, 1500);
      d.wallet.setFault('bet', { kind: 'delay', ms: 1000 }, 1);
      const ack = await place(seat);
      const bet = await betOf(seat);
      expect(ack).to.deep.equal({ ok: true, betId: bet.id, roundId: bet.roundId });
      expect(await seat.player.waitFor('bet_placed')).to.include({ betId: bet.id });
      expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS - STAKE);
      expect(await d.settle(15_000)).to.deep.equal([]);
      const [call] = await callsOf(bet.betTransactionUuid);
      expect(call).to.include({ status: 'RS_OK', error: null });
      expect(call!.latencyMs).to.be.within(1000, 1999);
      expect(await betOf(seat)).to.include({ status: 'SETTLED', payoutMicro: 0n });
      expect(await jobOf(bet, 'rollback')).to.equal(null);
      expect(movements(seat)).to.deep.equal([['bet', STAKE]]);
      expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS - STAKE);
    });
  });

  // ------------------------------------------------------------------------------------
  describe('on the win call', () => {
    // LOW always wins here; one winning bet per round, so that the fault hits its win call
    let table: Table;
    before(async () => {
      table = await proxiedTable({ bettingWindowMs: 700, lowWeight: 1n, highWeight: 0n }, 5);
    });

    type WinCase = {
      title: string;
      fault?: WalletFault;
      network?: Network;
      attempts: number;
      // D6: a timed-out call is resent with the same requestUuid and bytes
      sameRequest?: boolean;
      // 4.2: a win the wallet cannot match is settled without payout
      payout: bigint;
    };
    const cases: WinCase[] = [
      { title: 'a timeout', fault: { kind: 'hang' }, attempts: 2, sameRequest: true, payout: WIN },
      { title: 'HTTP 500', fault: { kind: 'http', httpStatus: 500 }, attempts: 2, sameRequest: false, payout: WIN },
      { title: 'a body that is not JSON', fault: { kind: 'invalid_json' }, attempts: 2, sameRequest: false, payout: WIN },
      { title: 'an unknown status', fault: { kind: 'status', status: 'RS_ERROR_SOMETHING_NEW' }, attempts: 2, sameRequest: false, payout: WIN },
      { title: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST', fault: { kind: 'status', status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, attempts: 1, payout: 0n },
      { title: 'a slow answer within the timeout', fault: { kind: 'delay', ms: 1000 }, attempts: 1, payout: WIN },
      { title: 'a connection reset mid-call, the credit applied', fault: HELD_ANSWER, network: 'reset', attempts: 2, sameRequest: false, payout: WIN },
      { title: 'a black hole', network: 'blackhole', attempts: 2, sameRequest: true, payout: WIN },
      { title: 'drop_after_apply: the credit applied, its answer lost', fault: { kind: 'drop_after_apply' }, attempts: 2, sameRequest: false, payout: WIN },
    ];

    for (const [i, c] of cases.entries()) {
      const free = i % 2 === 1;
      const outcome = c.payout > 0n ? `credited exactly once${free ? ', its net' : ''}` : 'settled without payout, alerted';
      // D42: a free bet's win is its net, and its debit took nothing
      const payout = free && c.payout > 0n ? FREE_WIN : c.payout;
      const balance = free ? FUNDS + payout : FUNDS - STAKE + payout;
      it(`${c.title}${free ? ' (a free bet)' : ''}: ${c.attempts === 1 ? 'one attempt' : 'retried'}, ${outcome}`, async () => {
        const seat = await table.seat(free);
        await inWindow(seat, 300);
        const ack = await place(seat);
        expect(ack.ok, JSON.stringify(ack)).to.equal(true);
        // the debit is done: from here the win call is the next call to the wallet
        if (c.fault) d.wallet.setFault('win', c.fault, 1);
        if (c.network === 'blackhole') proxy.blackhole(true);
        if (c.network === 'reset') await resetMidCall(seat, 'win');
        const bet = await betOf(seat);
        const job = await until('the win job', () => jobOf(bet, 'win'), 10_000);
        if (c.network === 'blackhole') {
          // the partition heals after the call timed out, before its retry
          await jobWithAttempts(job, 1);
          proxy.blackhole(false);
        }

        expect(await d.settle(15_000)).to.deep.equal([]);
        const done = await d.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
        if (c.payout > 0n) {
          expect(done).to.include({ attempts: c.attempts, abandonedAt: null, lastError: null });
          expect(done.completedAt).to.be.instanceOf(Date);
        } else {
          // D23: a win the wallet does not know failed the player: its job is a ticket
          expect(done).to.include({ attempts: c.attempts, completedAt: null, lastError: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' });
          expect(done.abandonedAt).to.be.instanceOf(Date);
        }
        expect(await betOf(seat)).to.include({ status: 'SETTLED', payoutMicro: payout, isFree: free });
        if (c.sameRequest !== undefined) await expectRetriedAs(job.transactionUuid, c.sameRequest, seat, 'win');
        if (c.network === 'blackhole') expect(requestsOf(seat, 'win'), 'the lost attempt never reached the wallet').to.have.length(1);
        if (c.payout > 0n) {
          expect(movements(seat)).to.deep.equal([['bet', STAKE], ['win', payout]]);
          await seat.player.waitFor('balance_update', (p) => p.balanceMicro === balance.toString());
        } else {
          expect(movements(seat)).to.deep.equal([['bet', STAKE]]);
          await alerted((line) => line.walletJobId === job.id && line.msg === 'wallet does not know the referenced transaction; treated as settled');
        }
        expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(balance);
      });
    }
  });

  // ------------------------------------------------------------------------------------
  describe('on the rollback call', () => {
    let table: Table;
    before(async () => {
      table = await proxiedTable({ bettingWindowMs: 3000, lowWeight: 0n, highWeight: 1n }, 4);
    });

    type RollbackCase = { title: string; fault?: WalletFault; network?: Network; attempts: number; sameRequest?: boolean };
    const cases: RollbackCase[] = [
      { title: 'a timeout', fault: { kind: 'hang' }, attempts: 2, sameRequest: true },
      { title: 'HTTP 502', fault: { kind: 'http', httpStatus: 502 }, attempts: 2, sameRequest: false },
      { title: 'a body that is not JSON', fault: { kind: 'invalid_json' }, attempts: 2, sameRequest: false },
      { title: 'an unknown status', fault: { kind: 'status', status: 'RS_ERROR_SOMETHING_NEW' }, attempts: 2, sameRequest: false },
      { title: 'a slow answer within the timeout', fault: { kind: 'delay', ms: 1000 }, attempts: 1 },
      { title: 'a connection reset mid-call, the refund applied', fault: HELD_ANSWER, network: 'reset', attempts: 2, sameRequest: false },
      { title: 'a black hole', network: 'blackhole', attempts: 2, sameRequest: true },
      { title: 'drop_after_apply: the refund applied, its answer lost', fault: { kind: 'drop_after_apply' }, attempts: 2, sameRequest: false },
    ];

    // The operator terminates the session mid-round: its round is voided and the accepted
    // bet rolled back (8.6), which is the call that fails.
    for (const [i, c] of cases.entries()) {
      const free = i % 2 === 1;
      it(`${c.title} on the rollback of a voided ${free ? 'free ' : ''}bet: ${c.attempts === 1 ? 'one attempt' : 'retried'}, refunded exactly once`, async () => {
        const seat = await table.seat(free);
        await inWindow(seat, 1000);
        const ack = await place(seat);
        expect(ack.ok, JSON.stringify(ack)).to.equal(true);
        if (c.fault) d.wallet.setFault('rollback', c.fault, 1);
        if (c.network === 'blackhole') proxy.blackhole(true);
        const key = { kid: table.operator.apiKeyId, secret: table.operator.apiSecret };
        const ended = await signedRequest(d.url('all'), key, 'POST', `/v1/session/${seat.sessionId}/terminate`, { reason: 'wallet fault suite' });
        expect(ended.status, ended.text).to.equal(200);
        expect(ended.body.voidedRoundIds).to.deep.equal([ack.roundId]);
        const bet = await betOf(seat);
        const job = (await jobOf(bet, 'rollback'))!;
        expect(job, 'a rollback job').to.not.equal(null);
        if (c.network === 'reset') await resetMidCall(seat, 'rollback');
        if (c.network === 'blackhole') {
          await jobWithAttempts(job, 1);
          proxy.blackhole(false);
        }

        expect(await d.settle(15_000)).to.deep.equal([]);
        expect(await seat.player.waitFor('round_voided')).to.include({ roundId: ack.roundId });
        const done = await d.db.walletJob.findUniqueOrThrow({ where: { id: job.id } });
        expect(done).to.include({ attempts: c.attempts, abandonedAt: null, lastError: null, purpose: 'round_voided' });
        expect(done.completedAt).to.be.instanceOf(Date);
        expect(await betOf(seat)).to.include({ status: 'VOIDED', isFree: free });
        expect(await d.db.round.findUniqueOrThrow({ where: { id: ack.roundId } })).to.include({ state: 'VOIDED' });
        if (c.sameRequest !== undefined) await expectRetriedAs(job.transactionUuid, c.sameRequest, seat, 'rollback');
        if (c.network === 'blackhole') expect(requestsOf(seat, 'rollback'), 'the lost attempt never reached the wallet').to.have.length(1);
        expect(movements(seat)).to.deep.equal([['bet', STAKE], ['rollback', STAKE]]);
        expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS);
      });
    }

    it('RS_ERROR_TRANSACTION_DOES_NOT_EXIST on the rollback of an uncertain bet: completed at once, alerted, nothing moved', async () => {
      const seat = await table.seat();
      await inWindow(seat, 300);
      // the debit never reached the ledger: the wallet truly does not know it (4.2 rule 4)
      d.wallet.setFault('bet', { kind: 'http', httpStatus: 500 }, 1);
      d.wallet.setFault('rollback', { kind: 'status', status: 'RS_ERROR_TRANSACTION_DOES_NOT_EXIST' }, 1);
      expect(await place(seat)).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
      expect(await d.settle(15_000)).to.deep.equal([]);
      const bet = await betOf(seat);
      const job = (await jobOf(bet, 'rollback'))!;
      expect(job).to.include({ attempts: 1, lastError: null, purpose: 'uncertain_bet' });
      expect(job.completedAt).to.be.instanceOf(Date);
      expect(requestsOf(seat, 'rollback')).to.have.length(1);
      await alerted((line) => line.walletJobId === job.id && line.msg === 'wallet does not know the referenced transaction; treated as settled');
      expect(await betOf(seat)).to.include({ status: 'REJECTED', rejectReason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
      expect(movements(seat)).to.deep.equal([]);
      expect(d.wallet.balanceOf(seat.playerRef, 'EUR')).to.equal(FUNDS);
    });
  });

  // ------------------------------------------------------------------------------------
  describe('the circuit breaker (3.4, D13)', () => {
    it('opens after 5 consecutive uncertain bet answers, refuses bets without calling the wallet, and one probe closes it', async () => {
      const table = await proxiedTable({ bettingWindowMs: 5000, lowWeight: 0n, highWeight: 1n });
      const { operatorId } = table.operator;
      const seats = await Promise.all(Array.from({ length: 8 }, () => table.seat()));
      const betRequests = () => d.wallet.requests.filter((r) => r.endpoint === 'bet' && (r.body as { operatorId?: string } | undefined)?.operatorId === operatorId).length;
      const key = { kid: table.operator.apiKeyId, secret: table.operator.apiSecret };
      // what the operator sees of it (the wallet-calls report)
      const circuit = async () => {
        const report = await signedRequest(d.url('all'), key, 'GET', '/v1/reports/wallet-calls');
        expect(report.status, report.text).to.equal(200);
        return (report.body.endpoints as { endpoint: string; circuit: string }[]).find((row) => row.endpoint === 'bet')?.circuit;
      };
      // the deployment's Redis key prefix is its own: find the circuit's hash by its suffix
      const circuitKeys = async () => {
        const found: string[] = [];
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `*${circuitKey(operatorId, 'bet')}`, 'COUNT', 1000);
          cursor = next;
          found.push(...keys);
        } while (cursor !== '0');
        return found;
      };

      await inWindow(seats[0]!, 3500);
      d.wallet.setFault('bet', { kind: 'http', httpStatus: 503 }, 5);
      for (const seat of seats.slice(0, 5)) expect(await place(seat)).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_UNKNOWN' });
      expect(betRequests()).to.equal(5);
      expect(await circuit()).to.equal('open');

      // D13: an open circuit's refusal is wallet_rejected:RS_ERROR_TIMEOUT, and no request is made
      expect(await place(seats[5]!)).to.deep.equal({ ok: false, reason: 'wallet_rejected:RS_ERROR_TIMEOUT' });
      expect(betRequests(), 'refused without calling the wallet').to.equal(5);
      const refused = await betOf(seats[5]!);
      const [call] = await callsOf(refused.betTransactionUuid);
      expect(call).to.include({ status: 'RS_ERROR_TIMEOUT', error: 'circuit_open', httpStatus: null });

      // the 30 s of 3.4 pass: the open-until time moves into the past
      const keys = await circuitKeys();
      expect(keys).to.have.length(1);
      await redis.hset(keys[0]!, 'openUntil', '1');
      expect(await circuit()).to.equal('half_open');
      const probe = await place(seats[6]!);
      expect(probe.ok, JSON.stringify(probe)).to.equal(true);
      expect(betRequests(), 'the probe went through').to.equal(6);
      expect(await circuit()).to.equal('closed');
      expect(await circuitKeys()).to.deep.equal([]);
      const next = await place(seats[7]!);
      expect(next.ok, JSON.stringify(next)).to.equal(true);
      expect(betRequests()).to.equal(7);

      expect(await d.settle(15_000)).to.deep.equal([]);
      // every refused or uncertain debit was rolled back; nothing was booked for them
      expect(seats.map((s) => d.wallet.balanceOf(s.playerRef, 'EUR'))).to.deep.equal([...Array(6).fill(FUNDS), FUNDS - STAKE, FUNDS - STAKE]);
      const rollbacks = await d.db.walletJob.findMany({ where: { operatorId, endpoint: 'rollback' } });
      expect(rollbacks.map((j) => j.purpose)).to.deep.equal(Array(6).fill('uncertain_bet'));
    });
  });
});
