import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { expectFits, launchChromium, serviceForPages, watch } from '../../support/browser.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { currentCycle } from '../../../src/shared/game/rounds/clock.js';
import { setGameConfig } from '../../../src/shared/game/operators/game-config.js';
import type { Harness, TestOperator } from '../../support/harness.js';
import { ROLES_WITHOUT_CLOCK, bettingWindowWithRoom, operatorWith, tick, until } from '../../support/game.js';
import { Player } from '../../support/player.js';

// The player's game page in a real headless Chromium (Debian's, as demo-in-browser.test.ts
// drives it), against a service in this process: amounts in the currency's own digits, cut
// toward zero (D46), a stake with more decimals than the currency has, or off the operator's
// stake step, refused on the page, the round history within the width of a desktop's and a
// phone's screen; a reload, which explains in the player's language why the game must be
// opened again from the casino (contract 5.6: the token was held in memory only) and links
// the operator's returnUrl; and the wait for a new table's first round. No request leaves
// the service. The crash game's page: crash-page-in-browser.test.ts.
const NBSP = '\u00a0';

// a session of a player funded at the simulator with `balanceMicro`, and its launch URL
async function launchSession(h: Harness, operator: TestOperator, balanceMicro: bigint, overrides: Record<string, unknown> = {}) {
  const body = operator.sessionBody(overrides);
  h.wallet.setBalance(body.playerRef as string, 'EUR', balanceMicro);
  const launch = await operator.request('POST', '/v1/session', body);
  expect(launch.status, launch.text).to.equal(200);
  const token = launch.body.sessionToken as string;
  return { token, launchUrl: `${h.baseUrl}/play/dice?token=${token}` };
}

describe('the game page in a browser', function () {
  this.timeout(180_000);
  let h: Harness;
  let origins: string[];
  let browser: Browser;
  let operator: TestOperator;
  const problems: string[] = [];

  before(async () => {
    ({ h, origins } = await serviceForPages(ROLE_NAMES));
    operator = await operatorWith(h, { bettingWindowMs: 1200, rollingWindowMs: 100, cooldownMs: 100 });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it("shows amounts in the currency's own digits, refuses a stake with more, and keeps the history within a desktop's and a phone's width", async () => {
    // 997.55996 EUR: a euro has two decimals, and a balance is never rounded up (D46)
    const { token, launchUrl } = await launchSession(h, operator, 99_755_996n);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(launchUrl);
    await page.locator('#balance').filter({ hasText: /\d/ }).waitFor({ timeout: 20_000 });
    expect(await page.locator('#balance').innerText()).to.equal('€997.55');
    expect(await page.locator('#stake').inputValue()).to.equal('1.00');
    expect(await page.locator('#stake-hint').innerText()).to.equal('Min €0.10 · Max €1,000.00');

    // a third decimal is refused on the page, in the player's words, and no bet is sent
    await page.locator('#bet-low:enabled').waitFor({ timeout: 20_000 });
    await page.fill('#stake', '2.505');
    await page.click('#bet-low');
    expect(await page.locator('#message').innerText()).to.equal('Too many decimals: a stake in EUR has at most 2.');
    expect(await page.locator('#stake').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('#potential').innerText()).to.equal('');
    await page.fill('#stake', '2.50');
    expect(await page.locator('#potential').innerText()).to.equal('A win pays €4.85 (×2, 3% commission)');

    // several rounds of the session, played beside the page (as another tab of it would)
    const player = await Player.connect(h.baseUrl, token);
    const played: string[] = [];
    for (let i = 0; i < 6; i++) {
      await bettingWindowWithRoom(player, 500);
      const bet = await player.request('place_bet', { side: i % 2 === 0 ? 'LOW' : 'HIGH', amountMicro: '250000' });
      expect(bet.ok, JSON.stringify(bet)).to.equal(true);
      await player.waitFor('round_result', (m) => m.roundId === bet.roundId, 15_000);
      played.push(bet.roundId);
    }
    player.close();
    const rows = page.locator('#history tr[data-round-id]');
    await until('the six rounds with their balances', async () => (await rows.count()) === 6 && /\d/.test(await rows.nth(0).locator('.balance-cell .after').innerText()), 20_000);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.roundId))).to.deep.equal(played.reverse());

    // the seed rotated once the rounds settled (D5): each row gets its Verify button
    const hash = await page.locator('#server-seed-hash').innerText();
    await until(
      'the seed rotated',
      async () => {
        await page.click('#rotate-seed');
        return page.locator('#server-seed-hash').filter({ hasNotText: hash }).waitFor({ timeout: 1_000 }).then(() => true, () => false);
      },
      20_000,
    );
    await until('a Verify button on every row', async () => (await rows.locator('button.verify').count()) === 6);

    // every amount of the table in the euro's two decimals: the stakes, the payouts, the balances
    expect(await rows.locator('.stake-amount').allInnerTexts()).to.deep.equal(Array(6).fill('2.50'));
    for (const text of await rows.locator('.payout').allInnerTexts()) expect(text).to.match(/^(\+4\.85|0\.00)$/);
    for (const text of await rows.locator('.balance-cell span').allInnerTexts()) expect(text).to.match(/^(→ )?[\d,]+\.\d\d$/);
    expect(await page.locator('#balance').innerText()).to.match(/^€[\d,]+\.\d\d$/);

    await expectFits(page);
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("refuses on the page a stake off the operator's stake step, in the player's words, and offers only chips on it (D46)", async () => {
    const stepped = await operatorWith(h, { bettingWindowMs: 1200, rollingWindowMs: 100, cooldownMs: 100 });
    await setGameConfig(h.svc.db, stepped.operatorId, 'dice', 'EUR', {}, { stakeStepMicro: '50000' });
    const { launchUrl } = await launchSession(h, stepped, 100_000_000n);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(launchUrl);
    await page.locator('#bet-low:enabled').waitFor({ timeout: 20_000 });
    // 0.10, the least stake, is off a step of 0.50: no chip offers it
    expect(await page.locator('#chips .chip').allInnerTexts()).to.deep.equal(['1', '5', '10', '25', 'MAX\n1,000']);
    await page.fill('#stake', '2.25');
    expect(await page.locator('#potential').innerText()).to.equal('');
    await page.click('#bet-low');
    expect(await page.locator('#message').innerText()).to.equal('The stake must be a multiple of €0.50.');
    expect(await page.locator('#stake').getAttribute('aria-invalid')).to.equal('true');
    await page.fill('#stake', '2.50');
    expect(await page.locator('#potential').innerText()).to.equal('A win pays €4.85 (×2, 3% commission)');
    await page.click('#bet-low');
    await page.locator('#message').filter({ hasText: 'Bet accepted: LOW · €2.50. Good luck!' }).waitFor({ timeout: 15_000 });
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("explains after a reload, in the player's language, that the game is opened again from the casino, and links the returnUrl", async () => {
    const returnUrl = 'https://casino.example/lobby?from=dice';
    const { launchUrl } = await launchSession(h, operator, 100_000_000n, { returnUrl, lang: 'de' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(launchUrl);
    await page.locator('#balance').filter({ hasText: `1.000,00${NBSP}€` }).waitFor({ timeout: 20_000 });
    // contract 5.6: the token left the address bar, so a reload has none
    expect(page.url()).to.not.include('token=');
    await page.reload();
    await page.locator('#ended').waitFor({ timeout: 10_000 });
    expect(await page.locator('html').getAttribute('lang')).to.equal('de');
    expect(await page.locator('#ended-title').innerText()).to.equal('Bitte öffne das Spiel erneut');
    expect(await page.locator('#ended-text').innerText()).to.match(/^Nach dem Neuladen der Seite .* im Casino\.$/);
    const back = page.getByRole('link', { name: 'Zurück zum Casino' });
    expect(await back.isVisible()).to.equal(true);
    expect(await back.getAttribute('href')).to.equal(returnUrl);
    expect(await back.getAttribute('target')).to.equal('_top');
    await page.close();

    // without a returnUrl: the same words in English, and no link
    const plain = await launchSession(h, operator, 100_000_000n);
    const second = await browser.newPage({ viewport: { width: 390, height: 844 } });
    watch(second, origins, problems);
    await second.goto(plain.launchUrl);
    await second.locator('#balance').filter({ hasText: '€1,000.00' }).waitFor({ timeout: 20_000 });
    await second.reload();
    await second.locator('#ended').waitFor({ timeout: 10_000 });
    expect(await second.locator('#ended-title').innerText()).to.equal('Please open the game again');
    expect(await second.locator('#ended-text').innerText()).to.match(/^The game cannot continue after the page is reloaded: .* from the casino\.$/);
    expect(await second.locator('#return-link').isHidden()).to.equal(true);
    await second.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});

describe("the game page in a browser: a new table's first round", function () {
  this.timeout(120_000);
  let h: Harness;
  let origins: string[];
  let browser: Browser;
  const problems: string[] = [];

  before(async () => {
    // no scheduler: the table's first cycle waits in PENDING until the test opens it
    ({ h, origins } = await serviceForPages(ROLES_WITHOUT_CLOCK));
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  it('says that the round is about to start, or in how many seconds when that is announced, until its betting opens', async () => {
    const operator = await operatorWith(h);
    const { launchUrl } = await launchSession(h, operator, 100_000_000n);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(launchUrl);
    await page.locator('#balance').filter({ hasText: '€1,000.00' }).waitFor({ timeout: 20_000 });
    // the player's connect started the table's clock (D1): its first cycle, PENDING, no end announced
    const table = { operatorId: operator.operatorId, gameCode: 'dice', currency: 'EUR' };
    const cycle = await until('the first cycle', () => currentCycle(h.svc, table));
    expect(cycle.phase).to.equal('PENDING');
    await page.locator('#die-caption').filter({ hasText: 'The round is about to start. Betting opens in a moment.' }).waitFor({ timeout: 5_000 });
    expect(await page.locator('#phase').innerText()).to.equal('Next round starting');
    expect(await page.locator('#bet-low').isDisabled()).to.equal(true);

    // a PENDING whose end is announced is counted down; the engine's clock announces none
    // today, so the service's emitter sends the engine's room one, as the clock would
    h.svc.emitter.toEngine(table, 'round_state', { cycleId: cycle.id, phase: 'PENDING', phaseEndsAt: new Date(Date.now() + 8_000).toISOString() });
    await page.locator('#die-caption').filter({ hasText: /^The next round starts in [1-8] s\.$/ }).waitFor({ timeout: 5_000 });
    expect(await page.locator('#countdown').innerText()).to.match(/^[1-8] s$/);

    await tick(h, { cycleId: cycle.id, from: 'PENDING' });
    await page.locator('#phase').filter({ hasText: 'Place your bet' }).waitFor({ timeout: 10_000 });
    await page.locator('#countdown').filter({ hasText: /^\d+ s$/ }).waitFor({ timeout: 5_000 });
    expect(await page.locator('#die-caption').innerText()).to.equal('Bet on LOW or HIGH');
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
