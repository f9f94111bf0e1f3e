import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { expectFits, launchChromium, serviceForPages, watch } from '../../support/browser.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { centsText } from '../../../src/shared/domain/games/crash.js';
import type { Harness, TestOperator } from '../../support/harness.js';
import { CRASH_CLIENT_SEED, crashOperator, crashSeedForRounds } from '../../support/crash.js';
import { until } from '../../support/game.js';

// The crash game's page (D40) in a real headless Chromium, against a service in this process
// on its own clock: a sandbox operator fixes the session's seeds (D35), so the crash points of
// its rounds are known before the bets. The first round is cashed out by hand during the
// flight, and the page shows the multiplier the service granted and its payout, which the
// wallet is credited exactly; the second crashes low, and the page shows the crash and no
// win. On the way the page refuses a stake off the operator's stake step and an auto
// cash-out it cannot take (D46, D40), its history shows both rounds, a round's crash point is
// recomputed in the page once the seed is rotated (D2, D5), and the page and its history fit
// a desktop's and a phone's width; in German its words, multipliers and euros are German.
// Leaves the README's crash screenshots in docs/.
const NBSP = '\u00a0';
const STAKE_MICRO = 1_000_000n; // 10.00
const START_MICRO = 10_000_000n; // 100.00

// "€1,234.56" -> micro-units (the page's English euros)
const euros = (text: string) => {
  const match = /^€([\d,]+)\.(\d\d)$/.exec(text.trim());
  if (!match) throw new Error(`not an amount in euros: ${text}`);
  return BigInt(match[1]!.replace(/,/g, '')) * 100_000n + BigInt(match[2]!) * 1000n;
};
// micro-units as the history's figures: 23.70
const figures = (micro: bigint) => `${micro / 100_000n}.${((micro % 100_000n) / 1000n).toString().padStart(2, '0')}`;
// "2.37×" -> 237n
const cents = (text: string) => {
  const match = /^(\d+)\.(\d\d)×$/.exec(text.trim());
  if (!match) throw new Error(`not a multiplier: ${text}`);
  return BigInt(match[1]!) * 100n + BigInt(match[2]!);
};

describe('the crash page in a browser (D40)', function () {
  this.timeout(180_000);
  let h: Harness;
  let origins: string[];
  let browser: Browser;
  let operator: TestOperator;
  const problems: string[] = [];

  before(async () => {
    ({ h, origins } = await serviceForPages(ROLE_NAMES));
    // a stake step of 0.50 (D46), which the page checks before sending
    operator = await crashOperator(h, { bettingWindowMs: 4000, cooldownMs: 500, stakeStepMicro: '50000' });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  // the stake and the auto cash-out typed in, checked on the page: the message it shows, and
  // the bet sent only when there is none
  async function refused(page: Page, stake: string, autoCashOut: string, message: string) {
    await page.fill('#stake', stake);
    await page.fill('#auto-cash-out', autoCashOut);
    await page.click('#place-bet');
    expect(await page.locator('#message').innerText()).to.equal(message);
  }

  it('cashes out by hand during the flight at the multiplier the service grants, and shows a low crash as a loss', async () => {
    // nonce 0 crashes late enough to be cashed out by hand, nonce 1 soon after take-off
    const { serverSeed, crashCents } = crashSeedForRounds([
      [500n, 5000n],
      [110n, 140n],
    ]);
    const body = operator.sessionBody({ gameCode: 'crash', sandboxSeeds: { serverSeed, clientSeed: CRASH_CLIENT_SEED } });
    const playerRef = body.playerRef as string;
    h.wallet.setBalance(playerRef, 'EUR', START_MICRO);
    const launch = await operator.request('POST', '/v1/session', body);
    expect(launch.status, launch.text).to.equal(200);
    expect(launch.body.launchUrl).to.match(/\/play\/crash\?token=/);
    const wallet = (type: 'bet' | 'win') => h.wallet.transactions.filter((entry) => entry.playerRef === playerRef && entry.type === type);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(launch.body.launchUrl as string);
    await page.locator('#balance').filter({ hasText: '€100.00' }).waitFor({ timeout: 20_000 });
    // crash's page, not dice's
    expect(await page.title()).to.equal('Crash');
    expect(await page.locator('#flight-canvas').isVisible()).to.equal(true);
    expect(await page.locator('#die').isVisible()).to.equal(false);
    expect(await page.locator('#bet-low').isVisible()).to.equal(false);
    expect(await page.locator('#auto-cash-out-hint').innerText()).to.equal('From 1.01× to 1000.00×. Leave it empty to cash out by hand.');
    // the live multiplier is spoken politely; the Cash out button is named
    expect(await page.locator('#flight-live').getAttribute('aria-live')).to.equal('polite');
    expect(await page.getByRole('button', { name: /^Cash out/ }).count()).to.equal(1);

    // the page refuses what the service would: a stake off the step, an auto cash-out with
    // three decimals or below 1.01x; and nothing is sent
    await page.locator('#place-bet:enabled').waitFor({ timeout: 30_000 });
    await refused(page, '10.25', '', 'The stake must be a multiple of €0.50.');
    expect(await page.locator('#stake').getAttribute('aria-invalid')).to.equal('true');
    await refused(page, '10.00', '2.005', 'Enter the auto cash-out as a multiplier with at most two decimals, for example 2.00.');
    await refused(page, '10.00', '1.00', 'The auto cash-out must be between 1.01× and 1000.00×.');
    expect(await page.locator('#auto-cash-out').getAttribute('aria-invalid')).to.equal('true');
    await page.fill('#auto-cash-out', '2.5');
    expect(await page.locator('#potential').innerText()).to.equal('An auto cash-out at 2.50× pays €25.00.');
    expect(wallet('bet')).to.deep.equal([]);

    // round 1: no auto cash-out
    await page.fill('#auto-cash-out', '');
    expect(await page.locator('#potential').innerText()).to.equal('No auto cash-out: press Cash out during the flight, before the crash.');
    await page.click('#place-bet');
    await page.locator('#message').filter({ hasText: 'Bet accepted: €10.00. Cash out before the crash!' }).waitFor({ timeout: 15_000 });
    await page.locator('#balance').filter({ hasText: '€90.00' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('#flight-caption').innerText()).to.equal('Your bet: €10.00 · cash out by hand');

    // the flight: the curve rises in the page, and the Cash out button follows it
    await page.locator('#cash-out:enabled').waitFor({ timeout: 15_000 });
    expect(await page.locator('#phase').innerText()).to.equal('In flight');
    await until('the curve past 1.20x', async () => cents(await page.locator('#flight-multiplier').innerText()) >= 120n, 15_000);
    const detail = await page.locator('#cash-out-detail').innerText();
    expect(detail).to.match(/^\d+\.\d\d× · €\d+\.\d\d$/);
    // the README's picture: the page from its top, in flight
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: 'docs/crash-page.png' });
    const seen = cents(await page.locator('#flight-multiplier').innerText());
    await page.click('#cash-out');

    // the ack: the multiplier the service granted, stamped on arrival, and its payout
    const won = await page.locator('#result').filter({ hasText: /^Cashed out at / }).innerText({ timeout: 10_000 });
    const granted = /^Cashed out at (\d+\.\d\d×) — won (€[\d,]+\.\d\d)$/.exec(won);
    expect(granted, won).to.not.equal(null);
    const grantedCents = cents(granted![1]!);
    expect(grantedCents >= seen && grantedCents < crashCents[0]!, `granted ${grantedCents}, seen ${seen}, crash ${crashCents[0]}`).to.equal(true);
    const payout = (STAKE_MICRO * grantedCents) / 100n;
    expect(euros(granted![2]!)).to.equal(payout);
    expect(await page.locator('#cash-out-label').innerText()).to.equal('Cashed out');
    expect(await page.locator('#cash-out').isDisabled()).to.equal(true);
    // the wallet is credited exactly floor(stake * cents / 100), once
    await until('the win at the wallet', async () => wallet('win').length > 0, 15_000);
    expect(wallet('win').map((entry) => entry.amountMicro)).to.deep.equal([payout]);
    await until('the balance with the win', async () => euros(await page.locator('#balance').innerText()) === START_MICRO - STAKE_MICRO + payout, 15_000);
    // round_result names the player's own crash point
    await page.locator('#flight-caption').filter({ hasText: `Your crash point this round: ${centsText(crashCents[0]!)}×` }).waitFor({ timeout: 10_000 });

    // round 2 crashes low: no cash-out, no win
    await page.locator('#place-bet:enabled').waitFor({ timeout: 30_000 });
    await page.click('#place-bet');
    await page.locator('#balance').filter({ hasText: /\d/ }).waitFor();
    const lost = `Crashed at ${centsText(crashCents[1]!)}×. No win this time.`;
    await page.locator('#result').filter({ hasText: lost }).waitFor({ timeout: 20_000 });
    expect(await page.locator('#flight').getAttribute('data-state')).to.equal('crashed');
    expect(await page.locator('#flight-multiplier').innerText()).to.equal(`${centsText(crashCents[1]!)}×`);
    expect(await page.locator('#cash-out').isDisabled()).to.equal(true);
    await until('the second stake at the wallet', async () => wallet('bet').length === 2);
    expect(wallet('win')).to.have.length(1);
    await until('the balance after the loss', async () => euros(await page.locator('#balance').innerText()) === START_MICRO - 2n * STAKE_MICRO + payout, 15_000);

    // the history: both rounds, newest first, with the stake, the auto cash-out (none), the
    // crash point, the cash-out and the payout, once the service has settled them
    const rows = page.locator('#history tr[data-round-id]');
    await until('both rounds settled in the history', async () => (await rows.count()) === 2 && (await rows.locator('.state').allInnerTexts()).every((text) => text.startsWith('settled')), 20_000);
    expect(await rows.locator('.tag.auto').allInnerTexts()).to.deep.equal(['by hand', 'by hand']);
    expect(await rows.locator('.stake-amount').allInnerTexts()).to.deep.equal(['10.00', '10.00']);
    expect(await rows.locator('.face').allInnerTexts()).to.deep.equal([`crash ${centsText(crashCents[1]!)}×`, `crash ${centsText(crashCents[0]!)}×`]);
    expect(await rows.nth(0).locator('.tag.cashed').count()).to.equal(0);
    expect(await rows.nth(1).locator('.tag.cashed').innerText()).to.equal(`out ${centsText(grantedCents)}×`);
    expect(await rows.locator('.state').allInnerTexts()).to.deep.equal(['settled: lost', 'settled: won']);
    expect(await rows.locator('.payout').allInnerTexts()).to.deep.equal(['0.00', `+${figures(payout)}`]);
    expect(await rows.nth(0).getAttribute('data-outcome')).to.equal('lost');
    expect(await rows.nth(1).getAttribute('data-outcome')).to.equal('won');

    // the README's phone picture: the crash, the bet form and the history
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: 'docs/crash-page-phone.png', fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    // the seed rotated once both rounds settled (D5): each crash point is recomputed in the page
    const hash = await page.locator('#server-seed-hash').innerText();
    await until(
      'the seed rotated',
      async () => {
        await page.click('#rotate-seed');
        return page.locator('#server-seed-hash').filter({ hasNotText: hash }).waitFor({ timeout: 1_000 }).then(() => true, () => false);
      },
      20_000,
    );
    await until('a Verify button on both rows', async () => (await rows.locator('button.verify').count()) === 2);
    await rows.nth(1).locator('button.verify').click();
    const check = await page.locator('#verify-output').filter({ hasText: /MATCH/ }).innerText({ timeout: 10_000 });
    expect(check).to.include(`Shown crash point: ${centsText(crashCents[0]!)}×`);
    expect(check).to.include('MATCH: the recomputed crash point equals the shown one.');
    expect(check).to.not.include('MISMATCH');

    await expectFits(page);
    await page.close();
    expect(h.wallet.violations).to.deep.equal([]);
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("speaks the session's language: German words, and multipliers and euros the German way", async () => {
    const body = operator.sessionBody({ gameCode: 'crash', lang: 'de' });
    h.wallet.setBalance(body.playerRef as string, 'EUR', START_MICRO);
    const launch = await operator.request('POST', '/v1/session', body);
    expect(launch.status, launch.text).to.equal(200);
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    watch(page, origins, problems);
    await page.goto(launch.body.launchUrl as string);
    await page.locator('#balance').filter({ hasText: `100,00${NBSP}€` }).waitFor({ timeout: 20_000 });
    expect(await page.locator('html').getAttribute('lang')).to.equal('de');
    expect(await page.locator('#auto-cash-out-hint').innerText()).to.equal('Von 1,01× bis 1000,00×. Leer lassen, um von Hand auszuzahlen.');
    expect(await page.getByRole('button', { name: 'Setzen' }).count()).to.equal(1);
    expect(await page.locator('#cash-out-label').innerText()).to.equal('Auszahlen');
    expect(await page.locator('#auto-cash-out').getAttribute('placeholder')).to.equal('2,00');
    // a German multiplier, "2,5", is read as 2.50
    await page.fill('#stake', '10');
    await page.fill('#auto-cash-out', '2,5');
    expect(await page.locator('#potential').innerText()).to.equal(`Eine automatische Auszahlung bei 2,50× bringt 25,00${NBSP}€.`);
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
