import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { operatorWith, seatPlayer } from '../../support/game.js';
import { RECALL_FUNDS, RECALL_STAKE, longWindowOpen, playRecallRounds, type RecallRounds } from '../../support/recall.js';
import { send, type ApiResponse } from '../../support/signed-client.js';

// Game recall (D33): GET /v1/rounds/{roundId}/replay-url (signed; 404 round_not_found for an
// unknown or another operator's round, 409 round_not_settled while the round is live; a link
// valid 24 hours) and the page it names (/replay/{roundId}?t=...: the round with the balances
// the wallet answered, under the launch page's policy, D16; a refused link is a plain page).
// The page's rendering in a browser: test/system/browser/recall-in-browser.test.ts.
describe('game recall: GET /v1/rounds/{roundId}/replay-url and the /replay page (D33)', function () {
  this.timeout(90_000);
  const PUBLIC_URL = 'https://rgs.example:8443';
  let h: Harness;
  let rounds: RecallRounds;

  before(async () => {
    h = await startHarness({ PUBLIC_URL }, ROLE_NAMES);
    rounds = await playRecallRounds(h, ['https://casino.example']);
  });
  after(() => h?.close());

  // requests signed with the service's clock, which a test may move
  const replayUrl = (round: { roundId: string; operator: RecallRounds['won']['operator'] }) =>
    round.operator.request('GET', `/v1/rounds/${round.roundId}/replay-url`, undefined, { timestamp: Math.floor(h.svc.now().getTime() / 1000) });
  // the link names PUBLIC_URL; the harness listens on a port of its own
  const onHarness = (link: string) => {
    const url = new URL(link);
    return `${h.baseUrl}${url.pathname}${url.search}`;
  };
  const embedded = (page: ApiResponse) => JSON.parse(/<script type="application\/json" id="recall-data">([^<]*)<\/script>/.exec(page.text)![1]!);
  const policyOf = (csp: string | null) =>
    Object.fromEntries((csp ?? '').split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
  const jwtClaims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

  it('answers a link to PUBLIC_URL/replay/{roundId}, valid 24 hours, for each finished round', async () => {
    for (const round of [rounds.won, rounds.lost, rounds.voided]) {
      const answer = await replayUrl(round);
      expect(answer.status, answer.text).to.equal(200);
      expect(Object.keys(answer.body).sort()).to.deep.equal(['expiresAt', 'url']);
      const url = new URL(answer.body.url);
      expect(`${url.origin}${url.pathname}`).to.equal(`${PUBLIC_URL}/replay/${round.roundId}`);
      const claims = jwtClaims(url.searchParams.get('t')!);
      expect(claims.exp - claims.iat).to.equal(24 * 60 * 60);
      expect(answer.body.expiresAt).to.equal(new Date(claims.exp * 1000).toISOString());
    }
  });

  it('is 404 round_not_found for an unknown id, a non-UUID and another operator\'s round; needs the signature', async () => {
    const other = await h.onboard();
    for (const [operator, roundId] of [
      [rounds.won.operator, randomUUID()],
      [rounds.won.operator, 'not-a-uuid'],
      [other, rounds.won.roundId],
    ] as const) {
      const answer = await operator.request('GET', `/v1/rounds/${roundId}/replay-url`);
      expect(answer.status, answer.text).to.equal(404);
      expect(answer.body.error).to.equal('round_not_found');
    }
    const unsigned = await send(`${h.baseUrl}/v1/rounds/${rounds.won.roundId}/replay-url`, {});
    expect(unsigned.status).to.equal(401);
  });

  it('refuses a round still in play with 409 round_not_settled, as its dispute pack is refused (D32)', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 120_000 });
    const seat = await seatPlayer(h, operator, RECALL_FUNDS);
    await longWindowOpen(seat);
    const bet = await seat.player.request('place_bet', { side: 'LOW', amountMicro: RECALL_STAKE.toString() });
    expect(bet.ok, JSON.stringify(bet)).to.equal(true);
    const answer = await replayUrl({ roundId: bet.roundId, operator });
    expect(answer.status, answer.text).to.equal(409);
    expect(answer.body.error).to.equal('round_not_settled');
    await operator.request('POST', `/v1/session/${seat.sessionId}/terminate`, {});
    seat.player.close();
  });

  it('serves the page under the launch page policy with the round and the balances the wallet answered', async () => {
    const { won, lost, voided, payoutMicro } = rounds;
    const pages = await Promise.all([won, lost, voided].map(async (round) => send(onHarness((await replayUrl(round)).body.url), {})));
    for (const page of pages) {
      expect(page.status, page.text).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      const csp = policyOf(page.headers.get('content-security-policy'));
      // D16: the operator's frame-ancestors; scripts and styles only from the service
      expect(csp['frame-ancestors']).to.equal("'self' https://casino.example");
      expect(csp['script-src']).to.equal("'self'");
      expect(csp['style-src']).to.equal("'self'");
      expect(csp['default-src']).to.equal("'none'");
      expect(csp['connect-src']).to.equal('https://rgs.example:8443 wss://rgs.example:8443');
      expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
      // the only inline script is the round's data, which no policy runs
      expect(page.text.match(/<script(?![^>]*\bsrc=)[^>]*>/g)).to.deep.equal(['<script type="application/json" id="recall-data">']);
    }
    const [wonData, lostData, voidedData] = pages.map(embedded);
    const after = RECALL_FUNDS - RECALL_STAKE;
    expect(wonData.round).to.deep.include({
      roundId: won.roundId,
      gameCode: 'dice',
      currency: 'EUR',
      playerRef: won.seat.playerRef,
      state: 'SETTLED',
      side: 'LOW',
      amountMicro: RECALL_STAKE.toString(),
      won: true,
      payoutMicro: payoutMicro.toString(),
      balanceBefore: { micro: RECALL_FUNDS.toString(), gap: null },
      balanceAfter: { micro: (after + payoutMicro).toString(), gap: null },
    });
    expect(wonData.round.outcome.side).to.equal('LOW');
    // the session ended: its seed is revealed with the round (D2, D5)
    expect(wonData.round.proof.serverSeed).to.match(/^[0-9a-f]{64}$/);
    expect(lostData.round).to.deep.include({
      state: 'SETTLED',
      side: 'HIGH',
      won: false,
      payoutMicro: '0',
      balanceBefore: { micro: RECALL_FUNDS.toString(), gap: null },
      balanceAfter: { micro: after.toString(), gap: null },
    });
    expect(voidedData.round).to.deep.include({
      state: 'VOIDED',
      voidReason: 'session_terminated',
      outcome: null,
      won: null,
      payoutMicro: null,
      balanceBefore: { micro: RECALL_FUNDS.toString(), gap: null },
      // the rollback's answer: the stake is back
      balanceAfter: { micro: RECALL_FUNDS.toString(), gap: null },
    });
    expect(Date.parse(wonData.linkExpiresAt)).to.be.above(Date.now());
  });

  it('recalls the roundId of a bet the wallet refused as a voided round, bet_rejected, with why (D22)', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: 120_000 });
    const seat = await seatPlayer(h, operator, RECALL_FUNDS);
    await longWindowOpen(seat);
    h.wallet.setFault('bet', { kind: 'status', status: 'RS_ERROR_NOT_ENOUGH_MONEY' }, 1);
    try {
      const bet = await seat.player.request('place_bet', { side: 'LOW', amountMicro: RECALL_STAKE.toString() });
      expect(bet.ok, JSON.stringify(bet)).to.equal(false);
    } finally {
      h.wallet.setFault('bet', null);
    }
    const { roundId } = await h.svc.db.bet.findFirstOrThrow({ where: { sessionId: seat.sessionId } });
    const link = await replayUrl({ roundId, operator });
    expect(link.status, link.text).to.equal(200);
    const { round } = embedded(await send(onHarness(link.body.url), {}));
    expect(round).to.deep.include({
      state: 'VOIDED',
      voidReason: 'bet_rejected',
      rejectReason: 'wallet_rejected:RS_ERROR_NOT_ENOUGH_MONEY',
      outcome: null,
      payoutMicro: null,
      proof: null,
    });
    // a clean refusal moved nothing: the same balance, or the same reason for none, before and after
    expect(round.balanceAfter).to.deep.equal(round.balanceBefore);
    await operator.request('POST', `/v1/session/${seat.sessionId}/terminate`, {});
    seat.player.close();
  });

  it('refuses an expired, a changed or a missing token, or a token of another round, with a plain page', async () => {
    const link = onHarness((await replayUrl(rounds.won)).body.url);
    const token = new URL(link).searchParams.get('t')!;
    const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = link.replace(token, tampered);
    const elsewhere = link.replace(rounds.won.roundId, rounds.lost.roundId);
    const bare = link.slice(0, link.indexOf('?'));
    for (const [url, status] of [[forged, 403], [elsewhere, 403], [bare, 403]] as const) {
      const page = await send(url, {});
      expect(page.status, url).to.equal(status);
      expect(page.text).to.include('This recall link is not valid');
      expect(page.text).to.not.match(/recall-data|\bat\s+\S+\.(ts|js):\d+|Error:/);
      // no operator is known from a refused token: only 'self' may frame the page
      expect(policyOf(page.headers.get('content-security-policy'))['frame-ancestors']).to.equal("'self'");
    }
    h.shiftClock(24 * 60 * 60 * 1000 + 1000);
    try {
      const expired = await send(link, {});
      expect(expired.status).to.equal(401);
      expect(expired.text).to.include('This recall link has expired');
      expect(expired.text).to.not.include('recall-data');
    } finally {
      h.shiftClock(-(24 * 60 * 60 * 1000 + 1000));
    }
  });
});
