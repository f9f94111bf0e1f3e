import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { roundFixtures, type RoundFixture } from '../../support/round-fixtures.js';
import { startHarness, type Harness, type TestOperator } from '../../support/harness.js';
import { send, type ApiResponse } from '../../support/signed-client.js';
import { MT_UNDER_DEFAULT, walletCallAsReported } from '../../support/game.js';

// The reconciliation reads of DECISIONS D10 (contract 4.1 "not shown"): GET /v1/rounds,
// GET /v1/rounds/{id}, GET /v1/reports/ggr, GET /v1/reports/wallet-calls. Money as strings
// (D18), demo rounds excluded (D8), errors per D3, the read bucket of contract 8.1. Game
// history is written straight to the database with test/support/round-fixtures.ts.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * MINUTE);
const iso = (date: Date) => date.toISOString();
const query = (params: Record<string, string | number>) =>
  `?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()}`;
// the first hour after T0
const HOUR_AFTER_T0 = query({ from: iso(at(0)), to: iso(at(60)) });

function expectError(response: ApiResponse, status: number, error: string) {
  expect(response.status, response.text).to.equal(status);
  expect(response.body.error, response.text).to.equal(error);
  expect(response.body.message).to.be.a('string').and.not.equal('');
}

function expectInvalid(response: ApiResponse, path: string) {
  expectError(response, 400, 'invalid_request');
  expect(response.body.status).to.equal('RS_ERROR_WRONG_TYPES');
  expect(response.body.details.map((d: { path: string }) => d.path), response.text).to.include(path);
}

describe('reconciliation reads (D10)', () => {
  let h: Harness;
  let f: ReturnType<typeof roundFixtures>;
  before(async () => {
    h = await startHarness();
    f = roundFixtures(h.svc);
  });
  after(() => h.close());

  const get = (operator: TestOperator, path: string) => operator.request('GET', path);
  const roundIds = (response: ApiResponse): string[] => {
    expect(response.status, response.text).to.equal(200);
    return response.body.rounds.map((r: { roundId: string }) => r.roundId);
  };
  // every page of a listing, following nextCursor
  async function allPages(operator: TestOperator, params: Record<string, string | number>): Promise<ApiResponse[]> {
    const pages: ApiResponse[] = [];
    let cursor: string | null = null;
    do {
      const page = await get(operator, `/v1/rounds${query(cursor ? { ...params, cursor } : params)}`);
      expect(page.status, page.text).to.equal(200);
      pages.push(page);
      cursor = page.body.nextCursor;
      expect(pages.length, 'pages').to.be.at.most(20);
    } while (cursor !== null);
    return pages;
  }

  describe('GET /v1/rounds', () => {
    it('lists settled and voided rounds with their player and exact totals: won, lost, voided, free bets (D18, 8.4)', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId, { playerRef: 'player-4711' });
      const won = await f.round(session, { at: at(1), bet: { side: 'LOW', amountMicro: 1_000_000n, payoutMicro: 1_940_000n } });
      const lost = await f.round(session, { at: at(2), bet: { side: 'HIGH', amountMicro: 500_000n } });
      const voided = await f.round(session, { state: 'VOIDED', at: at(3), bet: { amountMicro: 2_000_000n } });
      const freeWon = await f.round(session, { at: at(4), bet: { isFree: true, amountMicro: 300_000n, payoutMicro: 582_000n } });
      const freeLost = await f.round(session, { at: at(5), bet: { isFree: true, amountMicro: 300_000n } });

      const response = await get(operator, `/v1/rounds${HOUR_AFTER_T0}`);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.have.all.keys('rounds', 'nextCursor');
      expect(response.body.nextCursor).to.equal(null);
      const row = (round: RoundFixture, minute: number, fields: Record<string, unknown>) => ({
        roundId: round.roundId,
        cycleId: round.cycleId,
        sessionId: session.sessionId,
        playerRef: 'player-4711',
        gameCode: 'dice',
        currency: 'EUR',
        nonce: round.nonce,
        isFree: false,
        bonusRef: null,
        createdAt: new Date(T0 + minute * MINUTE - 20_000).toISOString(),
        settledAt: null,
        voidedAt: null,
        sandbox: false,
        jurisdiction: MT_UNDER_DEFAULT,
        ...fields,
      });
      const settledAt = (minute: number) => iso(at(minute));
      expect(response.body.rounds).to.deep.equal([
        row(won, 1, { state: 'SETTLED', outcomeSide: 'LOW', outcomeSum: 2, totalBetsMicro: '1000000', totalPayoutsMicro: '1940000', settledAt: settledAt(1) }),
        row(lost, 2, { state: 'SETTLED', outcomeSide: 'LOW', outcomeSum: 2, totalBetsMicro: '500000', totalPayoutsMicro: '0', settledAt: settledAt(2) }),
        // D18: a voided round reports its stake and no payout
        row(voided, 3, { state: 'VOIDED', outcomeSide: null, outcomeSum: null, totalBetsMicro: '2000000', totalPayoutsMicro: '0', voidedAt: iso(at(3)) }),
        // 8.4: a free bet debited no stake (these rows name no grant, so no campaign: bonusRef null)
        row(freeWon, 4, { state: 'SETTLED', outcomeSide: 'LOW', outcomeSum: 2, isFree: true, totalBetsMicro: '0', totalPayoutsMicro: '582000', settledAt: settledAt(4) }),
        row(freeLost, 5, { state: 'SETTLED', outcomeSide: 'HIGH', outcomeSum: 5, isFree: true, totalBetsMicro: '0', totalPayoutsMicro: '0', settledAt: settledAt(5) }),
      ]);
      expect(response.body.rounds.map((r: { nonce: number }) => r.nonce)).to.deep.equal([0, 1, 2, 3, 4]);
    });

    it('selects on settledAt or voidedAt within [from, to), not on createdAt', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId);
      // created long before the range, settled at its first instant: listed
      const atFrom = await f.round(session, { at: at(0), createdAt: at(-600) });
      // created in the range, settled at its end (exclusive): not listed
      const atTo = await f.round(session, { at: at(60), createdAt: at(30) });
      const voidedInside = await f.round(session, { state: 'VOIDED', at: at(59) });
      const settledBefore = await f.round(session, { at: new Date(T0 - 1) });
      // settled inside the range but voided after it (a win that exhausted its retries,
      // contract 4.2): it is a voided round, placed by voidedAt
      const voidedAfter = await f.round(session, { state: 'VOIDED', settledAt: at(10), at: at(90), bet: { payoutMicro: 1_940_000n } });

      expect(roundIds(await get(operator, `/v1/rounds${HOUR_AFTER_T0}`))).to.deep.equal([atFrom.roundId, voidedInside.roundId]);
      expect(roundIds(await get(operator, `/v1/rounds${query({ from: iso(at(60)) })}`))).to.deep.equal([atTo.roundId, voidedAfter.roundId]);
      expect(roundIds(await get(operator, `/v1/rounds${query({ to: iso(at(0)) })}`))).to.deep.equal([settledBefore.roundId]);
      // no bounds: everything finished, in order
      expect(roundIds(await get(operator, '/v1/rounds'))).to.deep.equal([
        settledBefore.roundId,
        atFrom.roundId,
        voidedInside.roundId,
        atTo.roundId,
        voidedAfter.roundId,
      ]);
      // an offset is honoured: 13:00+01:00 is 12:00Z
      expect(roundIds(await get(operator, `/v1/rounds${query({ from: '2026-03-01T13:00:00+01:00', to: '2026-03-01T13:00:00.001+01:00' })}`))).to.deep.equal([
        atFrom.roundId,
      ]);
      // the round voided after settlement shows D18's voided totals
      const listed = (await get(operator, `/v1/rounds${query({ from: iso(at(60)) })}`)).body.rounds[1];
      expect(listed).to.include({ state: 'VOIDED', totalBetsMicro: '1000000', totalPayoutsMicro: '0', settledAt: iso(at(10)), voidedAt: iso(at(90)) });
    });

    it('does not list unfinished rounds nor demo rounds (D8)', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId);
      const demo = await f.session(operator.operatorId, { demo: true });
      const settled = await f.round(session, { at: at(5) });
      for (const state of ['BETTING_OPEN', 'ROLLING', 'RESULT'] as const) await f.round(session, { state, at: at(6) });
      await f.round(demo, { at: at(7) });
      await f.round(demo, { state: 'VOIDED', at: at(8) });

      expect(roundIds(await get(operator, `/v1/rounds${HOUR_AFTER_T0}`))).to.deep.equal([settled.roundId]);
      expect(roundIds(await get(operator, '/v1/rounds'))).to.deep.equal([settled.roundId]);
    });

    it('pages with an opaque cursor: 3 pages of 2 in a stable order, equal timestamps ordered by id', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId);
      const rounds = [
        await f.round(session, { at: at(1) }),
        // four rounds finishing in the same millisecond, settled and voided mixed
        await f.round(session, { at: at(2) }),
        await f.round(session, { state: 'VOIDED', at: at(2) }),
        await f.round(session, { at: at(2) }),
        await f.round(session, { state: 'VOIDED', at: at(2) }),
        await f.round(session, { at: at(3) }),
      ];
      const sameInstant = rounds.slice(1, 5).map((r) => r.roundId).sort();
      const expected = [rounds[0]!.roundId, ...sameInstant, rounds[5]!.roundId];

      const pages = await allPages(operator, { from: iso(at(0)), to: iso(at(60)), limit: 2 });
      expect(pages.map((page) => page.body.rounds.length)).to.deep.equal([2, 2, 2]);
      expect(pages.flatMap(roundIds)).to.deep.equal(expected);
      // a full last page says there is no more
      expect(pages.map((page) => page.body.nextCursor === null)).to.deep.equal([false, false, true]);
      for (const page of pages.slice(0, 2)) expect(page.body.nextCursor).to.be.a('string').and.match(/^[A-Za-z0-9_-]+$/);

      // the same cursor gives the same page
      const again = await get(operator, `/v1/rounds${query({ from: iso(at(0)), to: iso(at(60)), limit: 2, cursor: pages[0]!.body.nextCursor })}`);
      expect(roundIds(again)).to.deep.equal(roundIds(pages[1]!));
      expect(again.body.nextCursor).to.equal(pages[1]!.body.nextCursor);

      // five rounds: the third page holds one
      const fewer = await allPages(operator, { from: iso(at(0)), to: iso(at(3)), limit: 2 });
      expect(fewer.map((page) => page.body.rounds.length)).to.deep.equal([2, 2, 1]);
      expect(fewer.flatMap(roundIds)).to.deep.equal(expected.slice(0, 5));
    });

    it('limit defaults to 100 and accepts 1 to 500', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId);
      const ids: string[] = [];
      for (let i = 0; i < 101; i++) ids.push((await f.round(session, { at: new Date(T0 + i * 1000) })).roundId);

      const first = await get(operator, '/v1/rounds');
      expect(roundIds(first)).to.deep.equal(ids.slice(0, 100));
      expect(first.body.nextCursor).to.be.a('string');
      const rest = await get(operator, `/v1/rounds${query({ cursor: first.body.nextCursor })}`);
      expect(roundIds(rest)).to.deep.equal(ids.slice(100));
      expect(rest.body.nextCursor).to.equal(null);

      expect(roundIds(await get(operator, '/v1/rounds?limit=1'))).to.deep.equal(ids.slice(0, 1));
      expect(roundIds(await get(operator, '/v1/rounds?limit=500'))).to.deep.equal(ids);
      expect((await get(operator, '/v1/rounds?limit=500')).body.nextCursor).to.equal(null);
      for (const limit of ['0', '501', 'x', '1.5', '-1', '', '0100', '1e2']) {
        expectInvalid(await get(operator, `/v1/rounds?limit=${limit}`), '/limit');
      }
    });

    it('400 invalid_request RS_ERROR_WRONG_TYPES for a bad query (D3); unknown parameters are ignored', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId);
      const round = await f.round(session, { at: at(1) });
      const bad: [string, string][] = [
        ['from=yesterday', '/from'],
        ['from=2026-03-01', '/from'],
        ['from=2026-03-01T12:00:00', '/from'],
        ['to=2026-02-30T00:00:00Z', '/to'],
        ['to=2026-12-31T23:59:60Z', '/to'],
        ['to=0000-01-01T00:00:00Z', '/to'],
        ['from=2026-03-01T00:00:00Z&from=2026-03-02T00:00:00Z', '/from'],
        ['cursor=not-a-cursor', '/cursor'],
        ['cursor=%21%21%21', '/cursor'],
        [`cursor=${Buffer.from(`${T0}/not-a-uuid`).toString('base64url')}`, '/cursor'],
        ['cursor=', '/cursor'],
        ['limit=2&limit=3', '/limit'],
        ['operatorId=', '/operatorId'],
      ];
      for (const [params, path] of bad) {
        expectInvalid(await get(operator, `/v1/rounds?${params}`), path);
      }
      for (const params of ['from=yesterday', 'to=2026-02-30T00:00:00Z', 'from=1&from=2']) {
        expectInvalid(await get(operator, `/v1/reports/ggr?${params}`), params.startsWith('to') ? '/to' : '/from');
        expectInvalid(await get(operator, `/v1/reports/wallet-calls?${params}`), params.startsWith('to') ? '/to' : '/from');
      }

      const ignored = await get(operator, `/v1/rounds${HOUR_AFTER_T0}&foo=bar&limit=5&page=2`);
      expect(roundIds(ignored)).to.deep.equal([round.roundId]);
      expect(ignored.text).to.not.include('foo');
      expect((await get(operator, `/v1/reports/ggr${HOUR_AFTER_T0}&foo=bar`)).status).to.equal(200);
      expect((await get(operator, `/v1/rounds/${round.roundId}?foo=bar`)).status).to.equal(200);
    });

    it('operatorId in the query: the key\'s own is fine, another is 403 operator_mismatch on every read', async () => {
      const operator = await h.onboard();
      const other = await h.onboard();
      const session = await f.session(operator.operatorId);
      const round = await f.round(session, { at: at(1) });

      const own = await get(operator, `/v1/rounds${HOUR_AFTER_T0}&operatorId=${operator.operatorId}`);
      expect(roundIds(own)).to.deep.equal([round.roundId]);
      for (const path of ['/v1/rounds', `/v1/rounds/${round.roundId}`, '/v1/reports/ggr', '/v1/reports/wallet-calls']) {
        expect((await get(operator, `${path}?operatorId=${operator.operatorId}`)).status, path).to.equal(200);
        expectError(await get(operator, `${path}?operatorId=${other.operatorId}`), 403, 'operator_mismatch');
        expectError(await get(operator, `${path}?operatorId=no-such-operator`), 403, 'operator_mismatch');
      }
    });
  });

  describe('GET /v1/rounds/{roundId}', () => {
    it('the round with its bet and the wallet audit rows of its transactions', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId, { playerRef: 'player-detail' });
      const round = await f.round(session, { at: at(1), bet: { side: 'HIGH', amountMicro: 2_500_000n, payoutMicro: 4_850_000n } });
      const { sessionId } = session;
      const debit = await f.walletCall(operator.operatorId, { endpoint: 'bet', sessionId, transactionUuid: round.bet.betTransactionUuid, latencyMs: 31, createdAt: at(0.5) });
      // the first win attempt timed out, the retry resent it (D6) and was answered
      const winTimeout = await f.walletCall(operator.operatorId, {
        endpoint: 'win',
        sessionId,
        transactionUuid: round.bet.winTransactionUuid,
        status: 'RS_ERROR_TIMEOUT',
        httpStatus: null,
        latencyMs: 1000,
        createdAt: at(1),
      });
      const winRetry = await f.walletCall(operator.operatorId, {
        endpoint: 'win',
        sessionId,
        transactionUuid: round.bet.winTransactionUuid,
        attempt: 2,
        latencyMs: 12,
        createdAt: at(1.5),
      });
      // not this round's: the session's balance call and another round's debit
      await f.walletCall(operator.operatorId, { endpoint: 'balance', sessionId, createdAt: at(0) });
      const another = await f.round(session, { at: at(2) });
      await f.walletCall(operator.operatorId, { endpoint: 'bet', sessionId, transactionUuid: another.bet.betTransactionUuid, createdAt: at(1.2) });

      const response = await get(operator, `/v1/rounds/${round.roundId}`);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.equal({
        roundId: round.roundId,
        cycleId: round.cycleId,
        sessionId,
        playerRef: 'player-detail',
        gameCode: 'dice',
        currency: 'EUR',
        state: 'SETTLED',
        nonce: 0,
        outcomeSide: 'HIGH',
        outcomeSum: 5,
        isFree: false,
        bonusRef: null,
        totalBetsMicro: '2500000',
        totalPayoutsMicro: '4850000',
        createdAt: iso(new Date(T0 + MINUTE - 20_000)),
        settledAt: iso(at(1)),
        voidedAt: null,
        sandbox: false,
        jurisdiction: MT_UNDER_DEFAULT,
        voidReason: null,
        demo: false,
        bets: [
          {
            betId: round.bet.betId,
            status: 'SETTLED',
            reason: null,
            side: 'HIGH',
            amountMicro: '2500000',
            isFree: false,
            freeBetGrantId: null,
            bonusRef: null,
            payoutMicro: '4850000',
            betTransactionUuid: round.bet.betTransactionUuid,
            winTransactionUuid: round.bet.winTransactionUuid,
            rollbackTransactionUuid: null,
            createdAt: iso(new Date(T0 + MINUTE - 20_000)),
            acceptedAt: iso(new Date(T0 + MINUTE - 20_000)),
            settledAt: iso(at(1)),
            voidedAt: null,
            // D23: where the win call stands (no wallet job in this fixture)
            winCall: null,
          },
        ],
        walletCalls: [debit, winTimeout, winRetry].map(walletCallAsReported),
      });
      expect(response.body.walletCalls[1]).to.include({ status: 'RS_ERROR_TIMEOUT', httpStatus: null, attempt: 1 });
      // the id is matched whatever its case
      expect((await get(operator, `/v1/rounds/${round.roundId.toUpperCase()}`)).body.roundId).to.equal(round.roundId);
    });

    it('a voided round shows its rollback; unfinished and demo rounds are shown too (demo: true)', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId);
      const voided = await f.round(session, { state: 'VOIDED', at: at(3), bet: { amountMicro: 700_000n } });
      const debit = await f.walletCall(operator.operatorId, { endpoint: 'bet', transactionUuid: voided.bet.betTransactionUuid, createdAt: at(2.7) });
      const rollback = await f.walletCall(operator.operatorId, { endpoint: 'rollback', transactionUuid: voided.bet.rollbackTransactionUuid, createdAt: at(3) });
      const detail = await get(operator, `/v1/rounds/${voided.roundId}`);
      expect(detail.status, detail.text).to.equal(200);
      expect(detail.body).to.include({ state: 'VOIDED', totalBetsMicro: '700000', totalPayoutsMicro: '0', settledAt: null, voidedAt: iso(at(3)), voidReason: 'terminated', demo: false });
      expect(detail.body.bets).to.have.length(1);
      expect(detail.body.bets[0]).to.include({
        status: 'VOIDED',
        amountMicro: '700000',
        payoutMicro: null,
        rollbackTransactionUuid: voided.bet.rollbackTransactionUuid,
        voidedAt: iso(at(3)),
      });
      expect(detail.body.walletCalls).to.deep.equal([debit, rollback].map(walletCallAsReported));

      const open = await f.round(session, { state: 'BETTING_OPEN', at: at(4), bet: { amountMicro: 400_000n } });
      const openDetail = await get(operator, `/v1/rounds/${open.roundId}`);
      expect(openDetail.status, openDetail.text).to.equal(200);
      expect(openDetail.body).to.include({
        state: 'BETTING_OPEN',
        outcomeSide: null,
        outcomeSum: null,
        totalBetsMicro: '400000',
        totalPayoutsMicro: '0',
        settledAt: null,
        voidedAt: null,
      });
      expect(openDetail.body.bets[0]).to.include({ status: 'ACCEPTED', payoutMicro: null, settledAt: null });
      expect(openDetail.body.walletCalls).to.deep.equal([]);

      const demoSession = await f.session(operator.operatorId, { demo: true });
      const demo = await f.round(demoSession, { at: at(5), bet: { payoutMicro: 1_940_000n } });
      const demoDetail = await get(operator, `/v1/rounds/${demo.roundId}`);
      expect(demoDetail.status, demoDetail.text).to.equal(200);
      expect(demoDetail.body).to.include({ roundId: demo.roundId, demo: true, state: 'SETTLED', totalPayoutsMicro: '1940000' });
    });

    it('404 not_found for an unknown id and for an id that is not a uuid', async () => {
      const operator = await h.onboard();
      expectError(await get(operator, `/v1/rounds/${randomUUID()}`), 404, 'not_found');
      expectError(await get(operator, '/v1/rounds/not-a-uuid'), 404, 'not_found');
      expectError(await get(operator, '/v1/rounds/12345'), 404, 'not_found');
    });
  });

  describe('GET /v1/reports/ggr', () => {
    it('per gameCode and currency over finished non-demo rounds: rounds, bets, stakes, payouts, ggr, voided (by hand)', async () => {
      const operator = await h.onboard();
      const eur = await f.session(operator.operatorId, { currency: 'EUR' });
      await f.round(eur, { at: at(1), bet: { amountMicro: 1_000_000n, payoutMicro: 1_940_000n } });
      await f.round(eur, { at: at(2), bet: { amountMicro: 500_000n } });
      await f.round(eur, { at: at(3), bet: { amountMicro: 2_500_000n } });
      // voided: counted, its refunded stake not
      await f.round(eur, { state: 'VOIDED', at: at(4), bet: { amountMicro: 2_000_000n } });
      // free bet: no stake, its payout counts (8.4)
      await f.round(eur, { at: at(5), bet: { isFree: true, amountMicro: 300_000n, payoutMicro: 582_000n } });
      // not in the report: unfinished, outside the range, demo
      await f.round(eur, { state: 'RESULT', at: at(6), bet: { amountMicro: 9_000_000n } });
      await f.round(eur, { at: at(60), bet: { amountMicro: 9_000_000n } });
      await f.round(eur, { at: at(-1), bet: { amountMicro: 9_000_000n } });
      const demo = await f.session(operator.operatorId, { currency: 'EUR', demo: true });
      await f.round(demo, { at: at(7), bet: { amountMicro: 9_000_000n } });

      // the players won more: negative GGR
      const gbp = await f.session(operator.operatorId, { currency: 'GBP' });
      await f.round(gbp, { at: at(8), bet: { amountMicro: 1_000_000n, payoutMicro: 1_940_000n } });
      await f.round(gbp, { state: 'VOIDED', at: at(9), bet: { amountMicro: 5_000_000n } });
      // sums beyond 2^53 stay exact
      const big = await f.session(operator.operatorId, { currency: 'BTC' });
      await f.round(big, { at: at(10), bet: { amountMicro: 9_007_199_254_740_993n } });
      await f.round(big, { at: at(11), bet: { amountMicro: 9_007_199_254_740_993n, payoutMicro: 1n } });
      // another game, same currency
      const other = await f.session(operator.operatorId, { currency: 'EUR', gameCode: 'dice-turbo' });
      await f.round(other, { at: at(12), bet: { amountMicro: 100_000n } });

      const response = await get(operator, `/v1/reports/ggr${HOUR_AFTER_T0}`);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.equal({
        from: iso(at(0)),
        to: iso(at(60)),
        games: [
          { gameCode: 'dice', currency: 'BTC', rounds: 2, bets: 2, stakesMicro: '18014398509481986', payoutsMicro: '1', ggrMicro: '18014398509481985', voidedRounds: 0, sandbox: false },
          { gameCode: 'dice', currency: 'EUR', rounds: 5, bets: 4, stakesMicro: '4000000', payoutsMicro: '2522000', ggrMicro: '1478000', voidedRounds: 1, sandbox: false },
          { gameCode: 'dice', currency: 'GBP', rounds: 2, bets: 1, stakesMicro: '1000000', payoutsMicro: '1940000', ggrMicro: '-940000', voidedRounds: 1, sandbox: false },
          { gameCode: 'dice-turbo', currency: 'EUR', rounds: 1, bets: 1, stakesMicro: '100000', payoutsMicro: '0', ggrMicro: '100000', voidedRounds: 0, sandbox: false },
        ],
        // no game with a jackpot was played (D41)
        jackpots: [],
      });

      // an empty range has no rows
      const empty = await get(operator, `/v1/reports/ggr${query({ from: iso(at(-600)), to: iso(at(-300)) })}`);
      expect(empty.body.games).to.deep.equal([]);
    });

    it('covers the last 24 hours unless from and to are given', async () => {
      const operator = await h.onboard();
      const session = await f.session(operator.operatorId);
      const now = Date.now();
      await f.round(session, { at: new Date(now - HOUR), bet: { amountMicro: 100_000n } });
      await f.round(session, { at: new Date(now - 25 * HOUR), bet: { amountMicro: 200_000n } });

      const response = await get(operator, '/v1/reports/ggr');
      expect(response.status, response.text).to.equal(200);
      const to = Date.parse(response.body.to);
      expect(to).to.be.within(now - 1000, Date.now() + 1000);
      expect(Date.parse(response.body.from)).to.equal(to - 24 * HOUR);
      expect(response.body.games).to.deep.equal([
        { gameCode: 'dice', currency: 'EUR', rounds: 1, bets: 1, stakesMicro: '100000', payoutsMicro: '0', ggrMicro: '100000', voidedRounds: 0, sandbox: false },
      ]);
      // only `from`: up to now
      const since = await get(operator, `/v1/reports/ggr${query({ from: iso(new Date(now - 30 * HOUR)) })}`);
      expect(since.body.games[0]).to.include({ rounds: 2, stakesMicro: '300000' });
    });
  });

  describe('GET /v1/reports/wallet-calls', () => {
    it('per endpoint: calls, ok, failed, p50/p99 latency, open-circuit rejections, abandoned jobs (by hand)', async () => {
      const operator = await h.onboard();
      const id = operator.operatorId;
      // bet: ten answered calls at 10..100 ms (7 RS_OK, 1 duplicate = ok; 1 clean reject, 1
      // HTTP 500 = failed) and one still without a response (failed, no latency)
      const betStatuses = ['RS_OK', 'RS_OK', 'RS_OK', 'RS_ERROR_NOT_ENOUGH_MONEY', 'RS_OK', 'RS_ERROR_DUPLICATE_TRANSACTION', 'RS_OK', 'RS_ERROR_UNKNOWN', 'RS_OK', 'RS_OK'];
      for (const [i, status] of betStatuses.entries()) {
        await f.walletCall(id, { endpoint: 'bet', status, httpStatus: status === 'RS_ERROR_UNKNOWN' ? 500 : 200, latencyMs: (i + 1) * 10, createdAt: at(i) });
      }
      await f.walletCall(id, { endpoint: 'bet', status: null, latencyMs: null, createdAt: at(20) });
      // win: three answered calls and one refused by the open circuit without being sent
      for (const [i, latencyMs] of [300, 5, 7].entries()) await f.walletCall(id, { endpoint: 'win', latencyMs, createdAt: at(30 + i) });
      await f.walletCall(id, { endpoint: 'win', status: 'RS_ERROR_TIMEOUT', httpStatus: null, latencyMs: null, error: 'circuit_open', createdAt: at(34) });
      // balance: one call
      await f.walletCall(id, { endpoint: 'balance', latencyMs: 42, createdAt: at(40) });
      // a timeout is not an open-circuit rejection
      await f.walletCall(id, { endpoint: 'balance', status: 'RS_ERROR_TIMEOUT', httpStatus: null, latencyMs: 1000, error: 'no answer within 1000 ms', createdAt: at(41) });
      // rollback: no call in range, two jobs abandoned in range
      await f.walletJob(id, { endpoint: 'rollback', abandonedAt: at(10) });
      await f.walletJob(id, { endpoint: 'rollback', abandonedAt: at(59) });
      await f.walletJob(id, { endpoint: 'win', abandonedAt: at(50) });
      // outside the range or not abandoned: not counted
      await f.walletCall(id, { endpoint: 'rollback', createdAt: at(-1) });
      await f.walletCall(id, { endpoint: 'bet', latencyMs: 5000, createdAt: at(60) });
      await f.walletJob(id, { endpoint: 'rollback', abandonedAt: at(60) });
      await f.walletJob(id, { endpoint: 'rollback', completedAt: at(5) });
      await f.walletJob(id, { endpoint: 'win' });

      const response = await get(operator, `/v1/reports/wallet-calls${HOUR_AFTER_T0}`);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.equal({
        from: iso(at(0)),
        to: iso(at(60)),
        sandbox: false,
        endpoints: [
          { endpoint: 'balance', calls: 2, ok: 1, failed: 1, p50LatencyMs: 42, p99LatencyMs: 1000, openCircuitRejections: 0, abandonedJobs: 0, circuit: 'closed' },
          { endpoint: 'bet', calls: 11, ok: 8, failed: 3, p50LatencyMs: 50, p99LatencyMs: 100, openCircuitRejections: 0, abandonedJobs: 0, circuit: 'closed' },
          { endpoint: 'win', calls: 4, ok: 3, failed: 1, p50LatencyMs: 7, p99LatencyMs: 300, openCircuitRejections: 1, abandonedJobs: 1, circuit: 'closed' },
          { endpoint: 'rollback', calls: 0, ok: 0, failed: 0, p50LatencyMs: null, p99LatencyMs: null, openCircuitRejections: 0, abandonedJobs: 2, circuit: 'closed' },
        ],
      });
    });

    it('covers the last 24 hours unless from and to are given', async () => {
      const operator = await h.onboard();
      const now = Date.now();
      await f.walletCall(operator.operatorId, { endpoint: 'bet', latencyMs: 11, createdAt: new Date(now - HOUR) });
      await f.walletCall(operator.operatorId, { endpoint: 'bet', latencyMs: 99, createdAt: new Date(now - 25 * HOUR) });
      await f.walletJob(operator.operatorId, { endpoint: 'rollback', abandonedAt: new Date(now - 2 * HOUR) });
      await f.walletJob(operator.operatorId, { endpoint: 'rollback', abandonedAt: new Date(now - 26 * HOUR) });

      const response = await get(operator, '/v1/reports/wallet-calls');
      expect(response.status, response.text).to.equal(200);
      const to = Date.parse(response.body.to);
      expect(to).to.be.within(now - 1000, Date.now() + 1000);
      expect(Date.parse(response.body.from)).to.equal(to - 24 * HOUR);
      const byEndpoint = Object.fromEntries(response.body.endpoints.map((e: { endpoint: string }) => [e.endpoint, e]));
      expect(byEndpoint.bet).to.include({ calls: 1, ok: 1, p50LatencyMs: 11, p99LatencyMs: 11 });
      expect(byEndpoint.rollback).to.include({ calls: 0, abandonedJobs: 1 });
    });
  });

  it('tenant isolation: operator B never sees operator A\'s rounds, bets, wallet calls or jobs', async () => {
    const a = await h.onboard();
    const b = await h.onboard();
    const aSession = await f.session(a.operatorId);
    const aRound = await f.round(aSession, { at: at(1), bet: { amountMicro: 1_000_000n, payoutMicro: 1_940_000n } });
    const aVoided = await f.round(aSession, { state: 'VOIDED', at: at(2) });
    await f.walletCall(a.operatorId, { endpoint: 'bet', transactionUuid: aRound.bet.betTransactionUuid, createdAt: at(1) });
    await f.walletJob(a.operatorId, { endpoint: 'rollback', abandonedAt: at(3) });
    const bSession = await f.session(b.operatorId);
    const bRound = await f.round(bSession, { at: at(4), bet: { amountMicro: 300_000n } });

    expect(roundIds(await get(b, `/v1/rounds${HOUR_AFTER_T0}`))).to.deep.equal([bRound.roundId]);
    expect(roundIds(await get(b, '/v1/rounds'))).to.deep.equal([bRound.roundId]);
    expect(roundIds(await get(a, '/v1/rounds'))).to.deep.equal([aRound.roundId, aVoided.roundId]);
    // A's round asked by B: 404, like an unknown id (D10)
    expectError(await get(b, `/v1/rounds/${aRound.roundId}`), 404, 'not_found');
    expectError(await get(b, `/v1/rounds/${aVoided.roundId}`), 404, 'not_found');
    expect((await get(a, `/v1/rounds/${aRound.roundId}`)).status).to.equal(200);
    // B's cursor cannot reach A's rounds: it is only a position
    const bPage = await get(b, '/v1/rounds?limit=1');
    expect(roundIds(bPage)).to.deep.equal([bRound.roundId]);
    expect(bPage.body.nextCursor).to.equal(null);

    const ggr = await get(b, `/v1/reports/ggr${HOUR_AFTER_T0}`);
    expect(ggr.body.games).to.deep.equal([
      { gameCode: 'dice', currency: 'EUR', rounds: 1, bets: 1, stakesMicro: '300000', payoutsMicro: '0', ggrMicro: '300000', voidedRounds: 0, sandbox: false },
    ]);
    const calls = await get(b, `/v1/reports/wallet-calls${HOUR_AFTER_T0}`);
    for (const row of calls.body.endpoints) expect(row, row.endpoint).to.include({ calls: 0, abandonedJobs: 0 });
    const aCalls = await get(a, `/v1/reports/wallet-calls${HOUR_AFTER_T0}`);
    expect(aCalls.body.endpoints.find((e: { endpoint: string }) => e.endpoint === 'bet')).to.include({ calls: 1 });
  });

  it('every read requires a signature: unsigned is 401 invalid_signature', async () => {
    const round = await f.round(await f.session((await h.onboard()).operatorId), { at: at(1) });
    for (const path of ['/v1/rounds', `/v1/rounds/${round.roundId}`, '/v1/reports/ggr', '/v1/reports/wallet-calls']) {
      const response = await send(`${h.baseUrl}${path}`, { method: 'GET' });
      expectError(response, 401, 'invalid_signature');
      expect(response.body.status).to.equal('RS_ERROR_INVALID_SIGNATURE');
    }
  });

  it('the reads share the per-operator read bucket: burst 60, then 429 rate_limited with Retry-After (8.1)', async () => {
    const operator = await h.onboard();
    const other = await h.onboard();
    const round = await f.round(await f.session(operator.operatorId), { at: at(1) });
    // D10: every GET /v1 endpoint shares the bucket; the dispute pack is one of them
    const paths = ['/v1/rounds', `/v1/rounds/${round.roundId}`, '/v1/reports/ggr', '/v1/reports/wallet-calls', `/v1/rounds/${round.roundId}/dispute-pack`];
    // 200 reads, 40 per endpoint: within any one endpoint's share of a separate bucket, not
    // within one shared bucket of 60; enough that the bucket's refill (20 per second) cannot
    // keep up on a slow, loaded machine either
    const count = 200;
    const results: ApiResponse[] = new Array(count);
    let next = 0;
    const startedAt = performance.now();
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        while (next < count) {
          const index = next++;
          results[index] = await get(operator, paths[index % paths.length]!);
        }
      }),
    );
    const seconds = (performance.now() - startedAt) / 1000;

    const limited = results.filter((r) => r.status === 429);
    const passed = count - limited.length;
    for (const response of results) expect([200, 429], response.text).to.include(response.status);
    expect(passed, 'the whole burst passes').to.be.at.least(60);
    expect(passed, 'nothing beyond the burst and what refilled meanwhile').to.be.at.most(60 + Math.ceil(20 * seconds));
    // implied by the bound above whenever the burst outran the refill, as it does unless the
    // machine took seconds over it
    if (60 + 20 * seconds < count) expect(limited).to.not.be.empty;
    for (const response of limited) {
      expectError(response, 429, 'rate_limited');
      expect(response.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
    }
    // per operator: another operator's reads pass meanwhile
    expect((await get(other, '/v1/reports/ggr')).status).to.equal(200);
  });
});
