import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { expectFits, launchChromium, serviceForPages, watch } from '../../support/browser.js';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { uniqueId, type Harness } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tick, until } from '../../support/game.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { crashOperator } from '../../support/crash.js';

// Free bets (D42) on the dice page in a real headless Chromium, against a service in this
// process whose clock the test moves by hand (no scheduler: a round opens, rolls and settles
// when the test ticks it, so no wait depends on the clock or on luck). An operator creates a
// campaign of three free rounds for a player through the signed API; the player's page shows
// it (the campaign, the stake in euros, the rounds left) with what a free bet is played on
// (the side chosen in the panel); one tap plays a free bet, the rounds left go from 3 to 2 as
// the service says (and a screen reader is told), no cash moves, and the history marks the
// bet as free. The operator then cancels the campaign, and the page takes the grant away and
// says it is no longer available rather than dropping it in silence. No request leaves the
// service. Leaves the free-bets screenshot in docs/. On the crash page, a free bet takes the
// auto cash-out field's multiplier, which the panel's caption says, and the bet is placed
// with it.
const MINUTE = 60_000;
const FUNDS_MICRO = 10_000_000n; // €100.00 (D18: 100000 micro-units to the euro)
const STAKE_MICRO = 100_000n; // €1.00

describe('free bets on the game page in a browser (D42)', function () {
  this.timeout(120_000);
  let h: Harness;
  let origins: string[];
  let browser: Browser;
  const problems: string[] = [];

  before(async () => {
    ({ h, origins } = await serviceForPages(ROLES_WITHOUT_CLOCK));
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('shows a granted campaign, plays a free bet with one tap, counts 3 → 2 live, marks it free in the history, and explains the cancelled grant', async () => {
    // a betting window of a minute, which only the test's ticks end; the die's weights (D19)
    // make LOW win, so that the screenshot is the same each time (the checks hold either way)
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const playerRef = uniqueId('player');
    // a campaignRef is the operator's own, and each test's operator is new
    const campaignRef = 'welcome-spins-2026';
    const created = await operator.request('POST', '/v1/freebets', {
      campaignRef,
      gameCode: 'dice',
      currency: 'EUR',
      stakeMicro: STAKE_MICRO.toString(),
      rounds: 3,
      playerRefs: [playerRef],
      expiresAt: new Date(h.svc.now().getTime() + 7 * 24 * 60 * MINUTE).toISOString(),
    });
    expect(created.status, created.text).to.equal(201);
    const campaignId = created.body.campaignId as string;

    h.wallet.setBalance(playerRef, 'EUR', FUNDS_MICRO);
    const launch = await operator.request('POST', '/v1/session', operator.sessionBody({ playerRef }));
    expect(launch.status, launch.text).to.equal(200);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(`${h.baseUrl}/play/dice?token=${launch.body.sessionToken as string}`);
    await page.locator('#balance').filter({ hasText: '€100.00' }).waitFor({ timeout: 20_000 });

    // the grant as `connected` named it: its campaign, its stake in euros, its rounds left
    const panel = page.locator('#free-bets');
    await panel.waitFor({ state: 'visible', timeout: 10_000 });
    const grant = panel.locator('li.free-bet');
    expect(await grant.count()).to.equal(1);
    expect(await grant.locator('.free-bet-campaign').innerText()).to.equal(campaignRef);
    expect(await grant.locator('.free-bet-stake').innerText()).to.equal('€1.00');
    expect(await grant.locator('.free-bet-remaining').innerText()).to.equal('3 rounds left');
    expect(await grant.locator('.free-bet-expires').innerText()).to.match(/^Expires /);

    // the caption says which side a free bet takes, and follows the panel's choice
    const caption = page.locator('#free-bet-caption');
    expect(await caption.innerText()).to.equal('Free bets are played on LOW (Die 1 – 3).');
    await panel.getByText('HIGH').click();
    expect(await caption.innerText()).to.equal('Free bets are played on HIGH (Die 4 – 6).');
    await panel.getByText('LOW').click();
    expect(await caption.innerText()).to.equal('Free bets are played on LOW (Die 1 – 3).');
    expect(await panel.getByRole('radiogroup', { name: 'Side for a free bet' }).count()).to.equal(1);

    // the button's accessible name says what it plays; it waits for the round's betting
    const play = panel.getByRole('button', { name: `Play a free bet of €1.00 (${campaignRef})` });
    expect(await play.isDisabled()).to.equal(true);
    const table = { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' };
    const pending = await until('the first cycle', () => currentCycle(h.svc, table));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    await page.locator('#phase').filter({ hasText: 'Place your bet' }).waitFor({ timeout: 10_000 });

    // one tap: the free bet is accepted, and the rounds left are the service's next count
    await play.click();
    await page.locator('#message').filter({ hasText: 'Bet accepted: LOW · free bet. Good luck!' }).waitFor({ timeout: 15_000 });
    await grant.locator('.free-bet-remaining').filter({ hasText: '2 rounds left' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#free-bets-live').innerText()).to.equal(`${campaignRef}: 2 rounds left`);
    expect(await page.locator('#free-bets-live').getAttribute('aria-live')).to.equal('polite');
    // one bet per round: the grant's button waits for the next round
    expect(await play.isDisabled()).to.equal(true);
    // a free bet moves no cash (contract 2.6)
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(FUNDS_MICRO);

    // the history marks the bet as free, before and after its settlement, whatever the die says
    const rows = page.locator('#history tr[data-round-id]');
    await until('the free bet in the history', async () => (await rows.count()) === 1);
    expect(await rows.nth(0).locator('.stake-amount.free').innerText()).to.equal('free bet');
    await tick(h, { cycleId: pending.id, from: 'BETTING_OPEN' });
    await tick(h, { cycleId: pending.id, from: 'ROLLING' });
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    await until('the round settled in the history', async () => ['won', 'lost'].includes((await rows.nth(0).getAttribute('data-outcome')) ?? ''), 20_000);
    expect(await rows.nth(0).locator('.stake-amount.free').innerText()).to.equal('free bet');
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { playerRef, cycleId: pending.id } });
    expect(bet).to.include({ isFree: true, amountMicro: STAKE_MICRO, status: 'SETTLED' });
    // won or lost, the player is never poorer for a free bet; the win is the net (contract 8.4)
    expect(h.wallet.balanceOf(playerRef, 'EUR')).to.equal(FUNDS_MICRO + bet.payoutMicro!);
    expect(await grant.locator('.free-bet-remaining').innerText()).to.equal('2 rounds left');
    await page.screenshot({ path: 'docs/free-bets-page.png', fullPage: true });
    await expectFits(page);
    await page.setViewportSize({ width: 1280, height: 900 });

    // the operator cancels the campaign: the page takes the grant away and says why
    const cancelled = await operator.request('DELETE', `/v1/freebets/${campaignId}`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    await panel.waitFor({ state: 'hidden', timeout: 10_000 });
    const message = page.locator('#message');
    await message.filter({ hasText: 'This free bet is no longer available: it has expired, been used or been withdrawn.' }).waitFor({ timeout: 5_000 });
    expect(await message.getAttribute('data-kind')).to.equal('error');
    expect(await message.getAttribute('role')).to.equal('alert');
    const totals = await operator.request('GET', `/v1/freebets/${campaignId}`);
    expect(totals.status, totals.text).to.equal(200);
    expect(totals.body).to.include({ played: 1, remaining: 0 });

    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("crash: the caption follows the auto cash-out field, and a tapped free bet is placed with that cash-out", async () => {
    const operator = await crashOperator(h, { bettingWindowMs: MINUTE });
    const playerRef = uniqueId('player');
    const campaignRef = 'crash-spins-2026';
    const created = await operator.request('POST', '/v1/freebets', {
      campaignRef,
      gameCode: 'crash',
      currency: 'EUR',
      stakeMicro: STAKE_MICRO.toString(),
      rounds: 3,
      playerRefs: [playerRef],
      expiresAt: new Date(h.svc.now().getTime() + 7 * 24 * 60 * MINUTE).toISOString(),
    });
    expect(created.status, created.text).to.equal(201);
    h.wallet.setBalance(playerRef, 'EUR', FUNDS_MICRO);
    const launch = await operator.request('POST', '/v1/session', operator.sessionBody({ playerRef, gameCode: 'crash' }));
    expect(launch.status, launch.text).to.equal(200);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(`${h.baseUrl}/play/crash?token=${launch.body.sessionToken as string}`);
    const panel = page.locator('#free-bets');
    await panel.waitFor({ state: 'visible', timeout: 20_000 });
    // crash has no side: the panel's side chooser is dice's alone
    expect(await panel.getByRole('radiogroup').isHidden()).to.equal(true);
    const caption = page.locator('#free-bet-caption');
    expect(await caption.innerText()).to.equal('Free bets have no auto cash-out: cash them out by hand.');
    await page.fill('#auto-cash-out', '2.00');
    expect(await caption.innerText()).to.equal('Free bets cash out automatically at 2.00×.');

    const table = { operatorId: operator.operatorId, gameCode: 'crash', currency: 'EUR' };
    const pending = await until('the first cycle', () => currentCycle(h.svc, table));
    await tick(h, { cycleId: pending.id, from: 'PENDING' });
    const play = panel.getByRole('button', { name: `Play a free bet of €1.00 (${campaignRef})` });
    await page.locator('.free-bet-play:enabled').waitFor({ timeout: 10_000 });
    await play.click();
    await page.locator('#message').filter({ hasText: 'Bet accepted: free bet, auto cash-out at 2.00×. Good luck!' }).waitFor({ timeout: 15_000 });
    await panel.locator('.free-bet-remaining').filter({ hasText: '2 rounds left' }).waitFor({ timeout: 10_000 });
    const bet = await h.svc.db.bet.findFirstOrThrow({ where: { playerRef, cycleId: pending.id } });
    expect(bet).to.include({ isFree: true, amountMicro: STAKE_MICRO, autoCashOutCents: 200n });
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
