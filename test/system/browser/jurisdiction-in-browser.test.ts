import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { expectFits, launchChromium, serviceForPages, watch } from '../../support/browser.js';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { playerPosition } from '../../../src/shared/game/sessions/jurisdiction.js';
import { moneyFormat } from '../../../src/realtime/page/money.js';
import { uniqueId, type Harness, type TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, operatorWith, tick, until } from '../../support/game.js';
import { waitForQuiescence } from '../../support/invariants.js';
import { CRASH_CLIENT_SEED, crashOperator, crashSeed } from '../../support/crash.js';
import { GEMS_CLIENT_SEED, gemsOperator, gemsSeed, lost } from '../../support/gems.js';

// Jurisdiction profiles (D44) on the dice page in a real headless Chromium, against a service
// in this process whose clock the test moves by hand (no scheduler: a round opens, rolls and
// settles when the test ticks it). A GB session shows the time played, counting up, and the
// net position, which follows the service's figure after a settled bet. A reality check made
// due in the database holds the next bet (refused reality_check_due) and opens the check: a
// modal with the time played and the net position, which Escape does not close and out of
// which Tab does not go, offering the casino's returnUrl; Continue acknowledges it and the
// next bet is taken. A check that falls due while the page is open opens by the page's own
// timer; on the crash page it waits while the player's bet still needs its Cash out, and
// opens once the bet is cashed out. On the Gem Vault page the figures show too, and the
// profile's least time between bets holds the Spin button. A session under the default profile (MT) shows none of
// it, and DE's bound on a stake is the stake's maximum. No request leaves the service. Leaves docs/jurisdiction-gb-page.png.
const MINUTE = 60_000;
const FUNDS_MICRO = 10_000_000n; // €100.00 (D18: 100000 micro-units to the euro)
const GB_MIN_ROUND_MS = 5_000;
const RETURN_URL = 'https://casino.example/lobby?from=dice';
const euros = moneyFormat('en', 'EUR');

type Table = { operatorId: string; gameCode: string; currency: string };

describe('jurisdiction profiles on the game page in a browser (D44)', function () {
  this.timeout(180_000);
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

  // a funded player's session under `jurisdiction`, and the page opened on it
  async function openSession(operator: TestOperator, jurisdiction: string, overrides: Record<string, unknown> = {}, beforeOpen?: (sessionId: string) => Promise<unknown>) {
    const playerRef = uniqueId('player');
    h.wallet.setBalance(playerRef, 'EUR', FUNDS_MICRO);
    const launch = await operator.request('POST', '/v1/session', operator.sessionBody({ playerRef, jurisdiction, ...overrides }));
    expect(launch.status, launch.text).to.equal(200);
    const sessionId = launch.body.sessionId as string;
    await beforeOpen?.(sessionId);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(`${h.baseUrl}/play/${(overrides.gameCode as string | undefined) ?? 'dice'}?token=${launch.body.sessionToken as string}`);
    await page.locator('#balance').filter({ hasText: '€100.00' }).waitFor({ timeout: 20_000 });
    return { page, sessionId, playerRef };
  }

  // the table's clock moved by hand until a cycle's betting is open (a finished cycle's
  // engine starts the next one, as the page is present)
  async function bettingOpen(table: Table) {
    for (let step = 0; step < 12; step++) {
      const cycle = await until('a cycle of the table', () => currentCycle(h.svc, table), 10_000);
      if (cycle.phase === 'BETTING_OPEN') return cycle;
      await tick(h, { cycleId: cycle.id, from: cycle.phase as 'PENDING' });
      await waitForQuiescence(h.svc.db, { operatorIds: [table.operatorId], timeoutMs: 20_000 });
    }
    throw new Error('no betting window opened');
  }

  // the dialog holds the focus: the element focused is inside it
  const focusInDialog = (page: Page) => page.evaluate(() => document.getElementById('reality-check-dialog')!.contains(document.activeElement));

  it('GB: shows the time played and the net position, follows a settled bet, and holds the next bet behind a reality check until Continue', async () => {
    // the die's weights (D19) make LOW win: a HIGH bet of €1.00 loses it, whatever the seed
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE, lowWeight: 1n, highWeight: 0n });
    const table = { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' };
    const { page, sessionId } = await openSession(operator, 'GB', { returnUrl: RETURN_URL });

    // the profile's figures, in view from the start, in a group named for a screen reader
    const facts = page.getByRole('group', { name: 'Your play in this session' });
    await facts.waitFor({ state: 'visible', timeout: 10_000 });
    const elapsed = page.locator('#elapsed');
    const net = page.locator('#net-position');
    expect(await page.locator('#elapsed-fact .play-fact-label').textContent()).to.equal('Time played');
    expect(await page.locator('#net-fact .play-fact-label').textContent()).to.equal('Net position');
    expect(await elapsed.innerText()).to.match(/^0:0\d$/);
    expect(await net.innerText()).to.equal('€0.00');
    // the time played counts up on the page
    const first = await elapsed.innerText();
    await elapsed.filter({ hasNotText: first }).waitFor({ timeout: 5_000 });

    // a losing bet: the net position is the service's, and shows the stake lost
    await bettingOpen(table);
    await page.locator('#bet-high:enabled').waitFor({ timeout: 10_000 });
    await page.fill('#stake', '1.00');
    await page.click('#bet-high');
    await page.locator('#message').filter({ hasText: 'Bet accepted: HIGH · €1.00. Good luck!' }).waitFor({ timeout: 15_000 });
    const acceptedAt = Date.now();
    const cycle = await until('the bet’s cycle', () => currentCycle(h.svc, table));
    await tick(h, { cycleId: cycle.id, from: 'BETTING_OPEN' });
    await tick(h, { cycleId: cycle.id, from: 'ROLLING' });
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    const rows = page.locator('#history tr[data-round-id]');
    await until('the round settled in the history', async () => (await rows.nth(0).getAttribute('data-outcome')) === 'lost', 20_000);
    const position = await playerPosition(h.svc, sessionId);
    expect(position!.netPositionMicro).to.equal('-100000');
    await net.filter({ hasText: euros.signed(position!.netPositionMicro) }).waitFor({ timeout: 10_000 });
    expect(await net.innerText()).to.equal('-€1.00');

    // the round's recall page names the profile the bet was placed under
    const roundId = await rows.nth(0).getAttribute('data-round-id');
    const link = await operator.request('GET', `/v1/rounds/${roundId}/replay-url`);
    expect(link.status, link.text).to.equal(200);
    const recall = await browser.newPage();
    watch(recall, origins, problems);
    await recall.goto(link.body.url as string);
    const named = recall.locator('#recall-facts dd[data-fact="jurisdiction"]');
    await named.waitFor({ state: 'attached', timeout: 15_000 });
    expect(await named.innerText()).to.equal('GB: the GB profile');
    await recall.close();

    // the reality check falls due (as an hour of play would make it): the next bet is refused,
    // and the page shows the check with fresh figures
    await h.svc.sql.query('UPDATE sessions SET reality_check_due_at = now() WHERE id = $1', [sessionId]);
    await bettingOpen(table);
    await page.locator('#bet-high:enabled').waitFor({ timeout: 10_000 });
    await page.click('#bet-high');
    const dialog = page.getByRole('dialog', { name: 'Reality check' });
    await dialog.waitFor({ state: 'visible', timeout: 10_000 });
    expect(await page.locator('#message').innerText()).to.equal('Time for a reality check: confirm that you want to keep playing before your next bet.');
    expect(await dialog.getAttribute('aria-modal')).to.equal('true');
    expect(await page.locator('#reality-check-elapsed').innerText()).to.match(/^0:\d\d$/);
    expect(await page.locator('#reality-check-net').innerText()).to.equal('-€1.00');
    const leave = dialog.getByRole('link', { name: 'Leave the game' });
    expect(await leave.getAttribute('href')).to.equal(RETURN_URL);
    expect(await leave.getAttribute('target')).to.equal('_top');
    expect(await focusInDialog(page)).to.equal(true);
    // the rest of the page is out of reach, and no bet can be placed meanwhile
    expect(await page.locator('main.layout').getAttribute('inert')).to.equal('');
    expect(await page.locator('#bet-high').isDisabled()).to.equal(true);

    // Escape chooses nothing; Tab goes round the two choices without leaving the dialog
    await page.keyboard.press('Escape');
    expect(await dialog.isVisible()).to.equal(true);
    for (let press = 0; press < 5; press++) {
      await page.keyboard.press(press % 2 === 0 ? 'Tab' : 'Shift+Tab');
      await page.keyboard.press('Tab');
      expect(await focusInDialog(page), `focus after press ${press}`).to.equal(true);
    }
    // the screenshot shows the dialog as it opens, its own focus drawn without a ring
    await dialog.focus();
    await page.screenshot({ path: 'docs/jurisdiction-gb-page.png' });
    await expectFits(page);
    await page.setViewportSize({ width: 1280, height: 900 });

    // Continue: the check is acknowledged, the next is an hour away, and bets are taken again
    await dialog.getByRole('button', { name: 'Continue playing' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
    const [session] = await h.svc.sql.query<{ due: Date }>('SELECT reality_check_due_at AS due FROM sessions WHERE id = $1', [sessionId]);
    expect(session!.due.getTime() - Date.now()).to.be.greaterThan(59 * MINUTE);
    expect(await page.locator('main.layout').getAttribute('inert')).to.equal(null);
    // GB spaces bets 5 s apart: the next comes after that (a refusal would say round_too_soon)
    await until('GB’s least time between bets passed', async () => Date.now() - acceptedAt > GB_MIN_ROUND_MS + 500, 10_000, 100);
    await page.locator('#bet-high:enabled').waitFor({ timeout: 10_000 });
    await page.click('#bet-high');
    await page.locator('#message').filter({ hasText: 'Bet accepted: HIGH · €1.00. Good luck!' }).waitFor({ timeout: 15_000 });
    await net.filter({ hasText: '-€2.00' }).waitFor({ timeout: 10_000 });
    expect(await elapsed.isVisible()).to.equal(true);
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("GB: a check that falls due while the page is open is shown by the page's own timer; without a returnUrl there is no Leave", async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE });
    // the check falls due a few seconds after the page connects
    const { page, sessionId } = await openSession(operator, 'GB', {}, (id) =>
      h.svc.sql.query("UPDATE sessions SET reality_check_due_at = now() + interval '4 seconds' WHERE id = $1", [id]),
    );
    const dialog = page.getByRole('dialog', { name: 'Reality check' });
    expect(await dialog.isHidden()).to.equal(true);
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.locator('#reality-check-net').innerText()).to.equal('€0.00');
    expect(await dialog.getByRole('link').count()).to.equal(0);
    expect(await focusInDialog(page)).to.equal(true);
    await dialog.getByRole('button', { name: 'Continue playing' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
    const position = await playerPosition(h.svc, sessionId);
    expect(position!.realityCheckInMs).to.be.greaterThan(59 * MINUTE);
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('GB crash: a check falling due while the bet awaits its Cash out waits for it, and opens once the bet is cashed out', async () => {
    const operator = await crashOperator(h, { bettingWindowMs: MINUTE });
    const table = { operatorId: operator.operatorId, gameCode: 'crash', currency: 'EUR' };
    // a crash point late enough for a cash-out by hand
    const { serverSeed } = crashSeed(500n, 5000n);
    // the check falls due once the bet is placed, before its flight
    const dueInMs = 10_000;
    const launchedAt = Date.now();
    const { page, sessionId } = await openSession(operator, 'GB', { gameCode: 'crash', sandboxSeeds: { serverSeed, clientSeed: CRASH_CLIENT_SEED } }, (id) =>
      h.svc.sql.query(`UPDATE sessions SET reality_check_due_at = now() + interval '${dueInMs} milliseconds' WHERE id = $1`, [id]),
    );
    await bettingOpen(table);
    await page.locator('#place-bet:enabled').waitFor({ timeout: 10_000 });
    await page.fill('#stake', '1.00');
    await page.click('#place-bet');
    await page.locator('#message').filter({ hasText: 'Bet accepted: €1.00. Cash out before the crash!' }).waitFor({ timeout: 15_000 });
    expect(Date.now() - launchedAt, 'the bet was placed before the check fell due').to.be.below(dueInMs);

    // due now, but the bet still needs its Cash out: no dialog over it, and no new bet
    await until('the check due', async () => Date.now() - launchedAt > dueInMs + 1_500, dueInMs + 5_000, 100);
    const dialog = page.getByRole('dialog', { name: 'Reality check' });
    expect(await dialog.isHidden()).to.equal(true);
    const cycle = await until('the bet’s cycle', () => currentCycle(h.svc, table));
    await tick(h, { cycleId: cycle.id, from: 'BETTING_OPEN' });
    await page.locator('#cash-out:enabled').waitFor({ timeout: 15_000 });
    // out past 1.20× (the crash point is 5.00× or more): a win
    await until('the curve past 1.20x', async () => Number((await page.locator('#flight-multiplier').innerText()).replace('×', '')) >= 1.2, 15_000, 50);
    expect(await dialog.isHidden()).to.equal(true);
    await page.click('#cash-out');

    // cashed out: the check opens, with the net position the cash-out made
    await dialog.waitFor({ state: 'visible', timeout: 10_000 });
    // the win counts once the wallet confirmed it; the page asks again on its balance_update
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    const position = await playerPosition(h.svc, sessionId);
    expect(BigInt(position!.netPositionMicro) > 0n, position!.netPositionMicro).to.equal(true);
    await page.locator('#reality-check-net').filter({ hasText: euros.signed(position!.netPositionMicro) }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#net-position').innerText()).to.equal(euros.signed(position!.netPositionMicro));
    await dialog.getByRole('button', { name: 'Continue playing' }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("GB Gem Vault: the figures follow a lost spin, and Spin waits out the profile's 5 s between bets", async () => {
    // the operator's own minRoundMs is 0: the wait is GB's
    const operator = await gemsOperator(h);
    const serverSeed = gemsSeed([lost], { stakeMicro: 100_000n });
    const { page, sessionId } = await openSession(operator, 'GB', { gameCode: 'gems', sandboxSeeds: { serverSeed, clientSeed: GEMS_CLIENT_SEED } });
    expect(await page.locator('#elapsed').isVisible()).to.equal(true);
    expect(await page.locator('#net-position').innerText()).to.equal('€0.00');
    await page.locator('#gems-spin:enabled').waitFor({ timeout: 10_000 });
    await page.fill('#stake', '1.00');
    await page.click('#gems-spin');
    const playedAt = Date.now();
    await page.locator('#net-position').filter({ hasText: '-€1.00' }).waitFor({ timeout: 15_000 });
    await waitForQuiescence(h.svc.db, { operatorIds: [operator.operatorId], timeoutMs: 20_000 });
    expect((await playerPosition(h.svc, sessionId))!.netPositionMicro).to.equal('-100000');
    // the play is shown (Skip ends its show at once); Spin then waits for GB's 5 s
    if (await page.locator('#gems-skip').isVisible()) await page.click('#gems-skip');
    await page.locator('#gems-spin:enabled').waitFor({ timeout: GB_MIN_ROUND_MS + 5_000 });
    expect(Date.now() - playedAt).to.be.at.least(GB_MIN_ROUND_MS - 500);
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('MT (the default profile) shows neither the time played nor the net position; DE caps the stake at its bound', async () => {
    const operator = await operatorWith(h, { bettingWindowMs: MINUTE });
    const { page } = await openSession(operator, 'MT');
    // the connected message has come (the balance shows): nothing of a profile is shown
    expect(await page.locator('#play-facts').isHidden()).to.equal(true);
    expect(await page.locator('#elapsed').isVisible()).to.equal(false);
    expect(await page.locator('#net-position').isVisible()).to.equal(false);
    expect(await page.getByRole('dialog').count()).to.equal(0);
    await page.close();

    const german = await openSession(operator, 'DE');
    expect(await german.page.locator('#play-facts').isHidden()).to.equal(true);
    expect(await german.page.locator('#stake-hint').innerText()).to.equal('Min €0.10 · Max €1.00');
    await german.page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
