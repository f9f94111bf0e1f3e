import { expect } from 'chai';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import { startHarness, uniqueId, type Harness } from '../../support/harness.js';
import { roundFixtures } from '../../support/round-fixtures.js';

// D42: the operator side of free-bet campaigns: POST /v1/freebets (idempotent on campaignRef),
// GET /v1/freebets (the grants, D10 paging), GET and DELETE /v1/freebets/{campaignId}.
describe('free-bet campaigns: the operator API (D42)', function () {
  this.timeout(60_000);
  let h: Harness;

  before(async () => {
    h = await startHarness({}, ROLE_NAMES);
  });
  after(() => h?.close());

  const DAY = 24 * 3600 * 1000;
  const inDays = (days: number) => new Date(h.svc.now().getTime() + days * DAY).toISOString();
  const campaign = (overrides: Record<string, unknown> = {}) => ({
    campaignRef: uniqueId('camp').replace(/[^A-Za-z0-9._:-]/g, '-'),
    gameCode: 'dice',
    currency: 'EUR',
    stakeMicro: '100000',
    rounds: 10,
    playerRefs: ['p-1', 'p-2', 'p-3'],
    expiresAt: inDays(7),
    ...overrides,
  });

  it('creates a campaign once: the same campaignRef and terms answer the same 201 body; other terms 409 campaign_conflict', async () => {
    const operator = await h.onboard();
    const body = campaign();
    const first = await operator.request('POST', '/v1/freebets', body);
    expect(first.status, first.text).to.equal(201);
    expect(first.body).to.have.keys(['campaignId', 'grants']);
    expect(first.body.grants).to.equal(3);
    // the same terms, playerRefs in another order: a retry
    const again = await operator.request('POST', '/v1/freebets', { ...body, playerRefs: ['p-3', 'p-1', 'p-2'] });
    expect(again.status, again.text).to.equal(201);
    expect(again.body).to.deep.equal(first.body);
    const campaigns = await h.svc.db.freeBetCampaign.count({ where: { operatorId: operator.operatorId } });
    expect(campaigns).to.equal(1);
    for (const other of [{ stakeMicro: '200000' }, { rounds: 11 }, { playerRefs: ['p-1', 'p-2'] }, { expiresAt: inDays(8) }]) {
      const conflict = await operator.request('POST', '/v1/freebets', { ...body, ...other });
      expect(conflict.status, JSON.stringify(other)).to.equal(409);
      expect(conflict.body.error).to.equal('campaign_conflict');
    }
    // the same campaignRef is another operator's own
    const other = await h.onboard();
    const theirs = await other.request('POST', '/v1/freebets', body);
    expect(theirs.status, theirs.text).to.equal(201);
    expect(theirs.body.campaignId).to.not.equal(first.body.campaignId);
  });

  it('makes one campaign of concurrent creates with the same terms, each answered the same body', async () => {
    const operator = await h.onboard();
    const body = campaign({ playerRefs: Array.from({ length: 500 }, (_, i) => `p-${i}`) });
    const second = Math.floor(Date.now() / 1000);
    // each signed at its own timestamp: the same bytes in the same second are a replay (D17)
    const answers = await Promise.all([0, 1, 2, 3].map((i) => operator.request('POST', '/v1/freebets', body, { timestamp: second - i })));
    expect(answers.map((answer) => answer.status), answers.map((answer) => answer.text).join('\n')).to.deep.equal([201, 201, 201, 201]);
    for (const answer of answers) expect(answer.body).to.deep.equal({ campaignId: answers[0]!.body.campaignId, grants: 500 });
    expect(await h.svc.db.freeBetGrant.count({ where: { operatorId: operator.operatorId } })).to.equal(500);
  });

  it('refuses what it cannot grant, each with its code and never a 500', async () => {
    // an operator per few requests: the writes share the freebets bucket, burst 10 (D42)
    const configured = async () => {
      const fresh = await h.onboard();
      await setGameConfig(h.svc.db, fresh.operatorId, 'dice', 'EUR', {}, { minBetMicro: '10000', maxBetMicro: '1000000', stakeStepMicro: '5000' });
      return fresh;
    };
    let operator = await configured();
    let sent = 0;
    const next = async () => {
      if (++sent % 8 === 0) operator = await configured();
      return operator;
    };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ campaignRef: 'bad ref' }, 400, 'invalid_request'],
      [{ campaignRef: 'x'.repeat(65) }, 400, 'invalid_request'],
      [{ rounds: 0 }, 400, 'invalid_request'],
      [{ rounds: 1001 }, 400, 'invalid_request'],
      [{ rounds: '5' }, 400, 'invalid_request'],
      [{ playerRefs: [] }, 400, 'invalid_request'],
      [{ playerRefs: ['a', 'a'] }, 400, 'invalid_request'],
      [{ playerRefs: ['someone@example.com'] }, 400, 'invalid_request'],
      [{ playerRefs: ['+44 20 7946 0000'] }, 400, 'invalid_request'],
      [{ stakeMicro: '0' }, 400, 'invalid_request'],
      [{ stakeMicro: 100000 }, 400, 'invalid_request'],
      [{ stakeMicro: '-5' }, 400, 'invalid_request'],
      [{ stakeMicro: '99999999999999999999' }, 400, 'invalid_request'],
      [{ expiresAt: 'tomorrow' }, 400, 'invalid_request'],
      [{ expiresAt: inDays(-1) }, 400, 'invalid_request'],
      [{ expiresAt: inDays(91) }, 400, 'invalid_request'],
      [{ validFrom: inDays(3), expiresAt: inDays(2) }, 400, 'invalid_request'],
      [{ validFrom: null }, 400, 'invalid_request'],
      [{ gameCode: 'crash' }, 422, 'game_not_available'],
      [{ gameCode: 'nope' }, 422, 'game_not_available'],
      [{ stakeMicro: '5000' }, 422, 'bet_out_of_range'],
      [{ stakeMicro: '1005000' }, 422, 'bet_out_of_range'],
      [{ stakeMicro: '12000' }, 422, 'bet_out_of_range'],
      [{ featureBuy: true }, 422, 'feature_buy_not_available'],
    ];
    for (const [fields, status, error] of cases) {
      const answer = await (await next()).request('POST', '/v1/freebets', campaign(fields));
      expect(answer.status, `${JSON.stringify(fields)}: ${answer.text}`).to.equal(status);
      expect(answer.body.error, JSON.stringify(fields)).to.equal(error);
    }
    for (const raw of ['', 'not json', '[]', '{"campaignRef": 1}']) {
      const answer = await (await next()).request('POST', '/v1/freebets', undefined, { rawBody: raw });
      expect(answer.status, raw).to.equal(400);
    }
    // a stake on the operator's step and within its bounds is taken
    operator = await configured();
    const ok = await operator.request('POST', '/v1/freebets', campaign({ stakeMicro: '15000', featureBuy: false }));
    expect(ok.status, ok.text).to.equal(201);
    expect(await h.svc.db.freeBetCampaign.count({ where: { operatorId: operator.operatorId } })).to.equal(1);
  });

  it('refuses a campaign in a currency the operator is not permitted, as a launch would be (game_not_available)', async () => {
    const operator = await h.onboard({ currencies: ['GBP'] });
    const answer = await operator.request('POST', '/v1/freebets', campaign({ currency: 'EUR' }));
    expect(answer.status, answer.text).to.equal(422);
    expect(answer.body.error).to.equal('game_not_available');
    expect(await h.svc.db.freeBetCampaign.count({ where: { operatorId: operator.operatorId } })).to.equal(0);
  });

  it('takes 10,000 players in one body larger than the usual 64 KiB bound (D24, D42)', async () => {
    const operator = await h.onboard();
    const playerRefs = Array.from({ length: 10_000 }, (_, i) => `player-${String(i).padStart(6, '0')}-${'x'.repeat(100)}`);
    const answer = await operator.request('POST', '/v1/freebets', campaign({ playerRefs, rounds: 1 }));
    expect(answer.status, answer.text.slice(0, 300)).to.equal(201);
    expect(answer.body.grants).to.equal(10_000);
    const tooMany = await operator.request('POST', '/v1/freebets', campaign({ playerRefs: [...playerRefs, 'one-more'] }));
    expect(tooMany.status).to.equal(400);
    // other routes keep their bound
    const big = await operator.request('POST', '/v1/session', { filler: 'x'.repeat(70 * 1024) });
    expect(big.status).to.equal(413);
  });

  it('lists grants a page at a time, filtered by player, campaign and status (D10)', async () => {
    const operator = await h.onboard();
    const a = await operator.request('POST', '/v1/freebets', campaign({ campaignRef: 'list-a', playerRefs: ['p-1', 'p-2', 'p-3', 'p-4', 'p-5'] }));
    const b = await operator.request('POST', '/v1/freebets', campaign({ campaignRef: 'list-b', playerRefs: ['p-1'], rounds: 3 }));
    expect([a.status, b.status]).to.deep.equal([201, 201]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await operator.request('GET', `/v1/freebets${query}`);
      expect(page.status, page.text).to.equal(200);
      expect(page.body.grants.length).to.be.at.most(2);
      seen.push(...page.body.grants.map((grant: { grantId: string }) => grant.grantId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).to.have.length(6);
    expect(new Set(seen).size).to.equal(6);

    const mine = await operator.request('GET', '/v1/freebets?playerRef=p-1');
    expect(mine.body.grants.map((grant: { campaignRef: string }) => grant.campaignRef).sort()).to.deep.equal(['list-a', 'list-b']);
    const grant = mine.body.grants.find((g: { campaignRef: string }) => g.campaignRef === 'list-b');
    expect(grant).to.deep.include({
      campaignId: b.body.campaignId,
      playerRef: 'p-1',
      gameCode: 'dice',
      currency: 'EUR',
      stakeMicro: '100000',
      rounds: 3,
      played: 0,
      remaining: 3,
      cancelled: 0,
      status: 'active',
    });
    const ofA = await operator.request('GET', '/v1/freebets?campaignRef=list-a&status=active');
    expect(ofA.body.grants).to.have.length(5);
    expect((await operator.request('GET', '/v1/freebets?status=cancelled')).body.grants).to.have.length(0);

    for (const query of ['?status=gone', '?limit=0', '?limit=501', '?cursor=nope', '?campaignRef=bad%20ref', '?playerRef=a%40b.cc']) {
      const refused = await operator.request('GET', `/v1/freebets${query}`);
      expect(refused.status, query).to.equal(400);
      expect(refused.body.error).to.equal('invalid_request');
    }
    // another operator sees none of them
    const other = await h.onboard();
    expect((await other.request('GET', '/v1/freebets')).body).to.deep.equal({ grants: [], nextCursor: null });
  });

  it('counts played rounds from the live bets naming a grant; totals; cancel twice; another operator gets 404', async () => {
    const operator = await h.onboard();
    const terms = campaign({ campaignRef: 'totals', playerRefs: ['p-1', 'p-2'], rounds: 3 });
    const created = await operator.request('POST', '/v1/freebets', terms);
    const campaignId: string = created.body.campaignId;
    const grants = await h.svc.db.freeBetGrant.findMany({ where: { campaignId } });
    const grantOf = (playerRef: string) => grants.find((grant) => grant.playerRef === playerRef)!.id;
    const f = roundFixtures(h.svc);
    const session = await f.session(operator.operatorId, { playerRef: 'p-1' });
    const name = async (betId: string, grantId: string) => h.svc.sql.query('UPDATE bets SET free_bet_grant_id = $2 WHERE id = $1', [betId, grantId]);
    // p-1: a won free round, a lost one, one in play and one voided (its round given back)
    await name((await f.round(session, { bet: { isFree: true, amountMicro: 100000n, payoutMicro: 94000n } })).bet.betId, grantOf('p-1'));
    await name((await f.round(session, { bet: { isFree: true, amountMicro: 100000n } })).bet.betId, grantOf('p-1'));
    await name((await f.round(session, { state: 'VOIDED', bet: { isFree: true, amountMicro: 100000n } })).bet.betId, grantOf('p-1'));
    await name((await f.round(session, { state: 'BETTING_OPEN', bet: { isFree: true, amountMicro: 100000n } })).bet.betId, grantOf('p-1'));

    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.status, totals.text).to.equal(200);
    expect(totals.body).to.deep.include({
      campaignId,
      campaignRef: 'totals',
      gameCode: 'dice',
      currency: 'EUR',
      stakeMicro: '100000',
      state: 'active',
      grants: 2,
      granted: 6,
      played: 3,
      remaining: 3,
      cancelled: 0,
      totalPaidMicro: '94000',
      cancelledAt: null,
    });
    const p1 = (await operator.request('GET', '/v1/freebets?playerRef=p-1')).body.grants[0];
    expect(p1).to.deep.include({ played: 3, remaining: 0, status: 'used' });

    // another operator, and an id that is no UUID, read as unknown (D10)
    const other = await h.onboard();
    for (const [who, method, path] of [
      [other, 'GET', `/v1/freebets/${campaignId}`],
      [other, 'DELETE', `/v1/freebets/${campaignId}`],
      [operator, 'GET', '/v1/freebets/not-a-uuid'],
      [operator, 'GET', `/v1/freebets/${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`],
    ] as const) {
      const answer = await who.request(method, path);
      expect(answer.status, path).to.equal(404);
      expect(answer.body.error).to.equal('campaign_not_found');
    }

    const cancelled = await operator.request('DELETE', `/v1/freebets/${campaignId}`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body).to.deep.include({ state: 'cancelled', granted: 6, played: 3, remaining: 0, cancelled: 3, totalPaidMicro: '94000' });
    expect(cancelled.body.cancelledAt).to.be.a('string');
    const twice = await operator.request('DELETE', `/v1/freebets/${campaignId}`);
    expect(twice.status).to.equal(200);
    expect(twice.body).to.deep.equal(cancelled.body);
    const after = (await operator.request('GET', `/v1/freebets?campaignRef=totals`)).body.grants;
    const status = Object.fromEntries(after.map((grant: { playerRef: string; status: string; cancelled: number }) => [grant.playerRef, [grant.status, grant.cancelled]]));
    expect(status).to.deep.equal({ 'p-1': ['used', 0], 'p-2': ['cancelled', 3] });
    // a cancelled campaign still answers a retry of its create, and is not made again
    // signed afresh: the same bytes in the same second would be a replayed signature (D17)
    const retry = await operator.request('POST', '/v1/freebets', terms, { timestamp: Math.floor(Date.now() / 1000) + 1 });
    expect(retry.status, retry.text).to.equal(201);
    expect(retry.body).to.deep.equal(created.body);
  });

  it('shows a grant past its expiry as expired', async () => {
    const operator = await h.onboard();
    const expiresAt = new Date(h.svc.now().getTime() + 1500).toISOString();
    const created = await operator.request('POST', '/v1/freebets', campaign({ campaignRef: 'expiring', validFrom: inDays(-1), expiresAt }));
    expect(created.status, created.text).to.equal(201);
    expect((await operator.request('GET', '/v1/freebets?campaignRef=expiring&status=active')).body.grants).to.have.length(3);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const expired = await operator.request('GET', '/v1/freebets?campaignRef=expiring');
    expect(expired.body.grants.map((grant: { status: string }) => grant.status)).to.deep.equal(['expired', 'expired', 'expired']);
    expect((await operator.request('GET', '/v1/freebets?campaignRef=expiring&status=expired')).body.grants).to.have.length(3);
    expect((await operator.request('GET', `/v1/freebets/${created.body.campaignId}`)).body.state).to.equal('expired');
  });
});
