import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { expectFits, launchChromium, serviceForPages, watch } from '../../support/browser.js';
import { ROLE_NAMES } from '../../../src/shared/platform/config.js';
import { deriveGems, GEMS_MATH, type GemsOutcome } from '../../../src/shared/domain/games/gems-math.js';
import type { Harness, TestOperator } from '../../support/harness.js';
import { GEMS_CLIENT_SEED, JACKPOT_SEEDS, gemsOperator, gemsSeed, triggered } from '../../support/gems.js';
import { until } from '../../support/game.js';
import { createCampaign } from '../../support/freebets.js';

// Gem Vault's page (D41) in a real headless Chromium, against a service in this process: a
// sandbox operator fixes the session's seeds (D35), so each play's outcome is known before
// it. The first play, a spin sent from the keyboard, triggers the feature: the page shows its
// events one after the other, Skip shows them all at once, every free spin is listed, the
// total win is the round's payout, the balance and the wallet follow, the jackpot's meter
// shows the pool the plays fed, and the buttons wait minRoundMs before the next play. The
// second play buys the feature: its button shows the price (featureBuyCost x the stake)
// before the tap, and the wallet is debited exactly that. A play the wallet refuses is
// explained in the page's words, and in German the page's words and euros are German. The
// page and its history fit a desktop's and a phone's width. A free bet of a campaign of bought
// features (D42) is played from the free-bets panel: the wallet is sent the campaign's stake
// marked free, the play is shown like any other, and the grant leaves the panel. Leaves the
// README's Gem Vault screenshots in docs/.
const NBSP = '\u00a0';
const STAKE_MICRO = 1_000_000n; // 10.00
const BUY_STAKE_MICRO = 100_000n; // 1.00
const START_MICRO = 100_000_000n; // 1,000.00
const SEED_POOL_MICRO = 100_000_000n; // the default jackpotSeedMicro
const MIN_ROUND_MS = 3_000;
// the default jackpotRateMicro: 5000 per 1,000,000 debited
const contribution = (debit: bigint) => (debit * 5000n) / 1_000_000n;

// "€1,234.56" -> micro-units (the page's English euros)
const euros = (text: string) => {
  const match = /^€([\d,]+)\.(\d\d)$/.exec(text.trim());
  if (!match) throw new Error(`not an amount in euros: ${text}`);
  return BigInt(match[1]!.replace(/,/g, '')) * 100_000n + BigInt(match[2]!) * 1000n;
};
// micro-units as the page shows them in English: "€1,234.56", the micro-units beyond the
// cents cut off (money.js)
const shown = (micro: bigint) => {
  const units = (micro / 100_000n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `€${units}.${((micro % 100_000n) / 1000n).toString().padStart(2, '0')}`;
};
// micro-units as the history's figures: 23.70
const figures = (micro: bigint) => shown(micro).slice(1);

const eventsOf = (outcome: GemsOutcome, type: string) => outcome.events.filter((event) => event.type === type);

describe('the Gem Vault page in a browser (D41)', function () {
  this.timeout(180_000);
  let h: Harness;
  let origins: string[];
  let browser: Browser;
  let operator: TestOperator;
  const problems: string[] = [];

  before(async () => {
    ({ h, origins } = await serviceForPages(ROLE_NAMES));
    // minRoundMs between plays, which the page waits out itself
    operator = await gemsOperator(h, { minRoundMs: MIN_ROUND_MS });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await h?.close();
  });

  async function open(body: Record<string, unknown>, balanceMicro: bigint, balanceText: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
    h.wallet.setBalance(body.playerRef as string, 'EUR', balanceMicro);
    const launch = await operator.request('POST', '/v1/session', body);
    expect(launch.status, launch.text).to.equal(200);
    expect(launch.body.launchUrl).to.match(/\/play\/gems\?token=/);
    const page = await browser.newPage({ viewport });
    watch(page, origins, problems);
    await page.goto(launch.body.launchUrl as string);
    await page.locator('#balance').filter({ hasText: balanceText }).waitFor({ timeout: 20_000 });
    return page;
  }

  it('plays a spin that triggers the feature, shows its events and the total win, and buys the feature at the price its button shows', async () => {
    // nonce 0: a spin that triggers the feature; nonce 1: whatever the bought feature gives
    const serverSeed = gemsSeed([triggered], { stakeMicro: STAKE_MICRO });
    const spin = deriveGems({ serverSeed, clientSeed: GEMS_CLIENT_SEED, nonce: 0, stakeMicro: STAKE_MICRO, featureBuy: false, jackpotPoolMicro: SEED_POOL_MICRO });
    const bought = deriveGems({ serverSeed, clientSeed: GEMS_CLIENT_SEED, nonce: 1, stakeMicro: BUY_STAKE_MICRO, featureBuy: true, jackpotPoolMicro: SEED_POOL_MICRO });
    // neither play hits the jackpot (its payout would be the pool at the time)
    expect(eventsOf(spin, 'JACKPOT').concat(eventsOf(bought, 'JACKPOT'))).to.deep.equal([]);
    const trigger = eventsOf(spin, 'FEATURE_TRIGGER')[0] as Extract<GemsOutcome['events'][number], { type: 'FEATURE_TRIGGER' }>;
    const boughtTrigger = eventsOf(bought, 'FEATURE_TRIGGER')[0] as Extract<GemsOutcome['events'][number], { type: 'FEATURE_TRIGGER' }>;
    const buyCost = BUY_STAKE_MICRO * GEMS_MATH.featureBuyCost;

    const body = operator.sessionBody({ gameCode: 'gems', sandboxSeeds: { serverSeed, clientSeed: GEMS_CLIENT_SEED } });
    const playerRef = body.playerRef as string;
    const wallet = (type: 'bet' | 'win') => h.wallet.transactions.filter((entry) => entry.playerRef === playerRef && entry.type === type).map((entry) => entry.amountMicro);
    const pool = async () => (await h.svc.db.jackpotPool.findUniqueOrThrow({ where: { operatorId_currency: { operatorId: operator.operatorId, currency: 'EUR' } } })).poolMicro;
    const page = await open(body, START_MICRO, '€1,000.00');

    // Gem Vault's page, not dice's or crash's
    expect(await page.title()).to.equal('Gem Vault');
    expect(await page.locator('#gems-grid').isVisible()).to.equal(true);
    expect(await page.locator('#die').isVisible()).to.equal(false);
    expect(await page.locator('#bet-low').isVisible()).to.equal(false);
    expect(await page.locator('#place-bet').isVisible()).to.equal(false);
    expect(await page.locator('.timer').isVisible()).to.equal(false);
    expect(await page.locator('#gems-grid').getAttribute('aria-label')).to.equal('The reels, not spun yet');
    // the jackpot's meter: connected's pool
    expect(await page.locator('#gems-jackpot').innerText()).to.equal(shown(SEED_POOL_MICRO));

    // the feature's price follows the stake typed, before any tap (featureBuyCost x the stake)
    await page.fill('#stake', '1.00');
    expect(await page.locator('#gems-buy-cost').innerText()).to.equal(shown(buyCost));
    expect(await page.locator('#gems-buy').getAttribute('aria-label')).to.equal(`Buy the feature for ${shown(buyCost)}`);
    await page.fill('#stake', '10.00');
    expect(await page.locator('#gems-buy-cost').innerText()).to.equal('€670.00');
    expect(await page.locator('#potential').innerText()).to.equal('A spin pays at most €50,000.00.');
    expect(await page.getByRole('button', { name: 'Spin' }).count()).to.equal(1);

    // the spin, from the keyboard: the Spin button focused and Enter
    await page.locator('#gems-spin:enabled').waitFor({ timeout: 10_000 });
    await page.focus('#gems-spin');
    await page.keyboard.press('Enter');
    // the events start one after the other; the buttons wait for minRoundMs
    await page.locator('#gems-events li').first().waitFor({ timeout: 15_000 });
    expect(await page.locator('#gems-skip').isVisible()).to.equal(true);
    expect(await page.locator('#gems-spin').isDisabled()).to.equal(true);
    expect(await page.locator('#gems-buy').isDisabled()).to.equal(true);
    expect(await page.locator('#result').innerText()).to.equal('');
    expect(await page.locator('#gems-events li').count()).to.be.below(spin.events.length);
    // Skip, which the keyboard's focus moved to, shows the end at once
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('gems-skip');
    await page.keyboard.press('Enter');
    expect(await page.locator('#gems-skip').isVisible()).to.equal(false);
    const items = page.locator('#gems-events li');
    expect(await items.count()).to.equal(spin.events.length);
    expect(await items.evaluateAll((list) => list.map((item) => (item as HTMLElement).dataset.type))).to.deep.equal(spin.events.map((event) => event.type));
    // the trigger with its Vaults, its pay and the multiplier; every free spin with its payout
    expect(await page.locator('#gems-events li[data-type="FEATURE_TRIGGER"]').innerText()).to.equal(
      `${trigger.subOutcome.scatters} Vaults pay ${shown(trigger.payoutMicro)}: 8 free spins at ×${trigger.subOutcome.multiplier}`,
    );
    const freeSpins = eventsOf(spin, 'FREE_SPIN');
    expect(freeSpins.length).to.be.at.least(1);
    expect(await page.locator('#gems-events li[data-type="FREE_SPIN"]').allInnerTexts()).to.deep.equal(
      freeSpins.map((event, k) => (event.payoutMicro > 0n ? `Free spin ${k + 1} of 8: ${shown(event.payoutMicro)}` : `Free spin ${k + 1} of 8: no win`)),
    );
    // the grid shows the last free spin, named in words; the feature's caption its spin
    const last = freeSpins.at(-1) as Extract<GemsOutcome['events'][number], { type: 'FREE_SPIN' }>;
    expect(await page.locator('#gems-grid .gem').evaluateAll((cells) => cells.map((cell) => (cell as HTMLElement).dataset.symbol))).to.deep.equal(last.subOutcome.grid.flat());
    expect(await page.locator('#gems-grid').getAttribute('aria-label')).to.match(/^The reels, row by row: /);
    expect(await page.locator('#gems-feature').innerText()).to.equal(`Free spin ${freeSpins.length} of 8 · ×${trigger.subOutcome.multiplier}`);
    // the total win is the round's payout
    expect(spin.payoutMicro > 0n).to.equal(true);
    expect(await page.locator('#result').innerText()).to.equal(`Total win: ${shown(spin.payoutMicro)}`);

    // the wallet: the stake debited, the win credited once; the balance follows
    await until('the win at the wallet', async () => wallet('win').length > 0, 15_000);
    expect(wallet('bet')).to.deep.equal([STAKE_MICRO]);
    expect(wallet('win')).to.deep.equal([spin.payoutMicro]);
    const afterSpin = START_MICRO - STAKE_MICRO + spin.payoutMicro;
    await until('the balance with the win', async () => euros(await page.locator('#balance').innerText()) === afterSpin - (afterSpin % 1000n), 15_000);
    // the meter: the pool the play fed, as the service holds it
    expect(await pool()).to.equal(SEED_POOL_MICRO + contribution(STAKE_MICRO));
    await until('the meter with the pool', async () => (await page.locator('#gems-jackpot').innerText()) === shown(SEED_POOL_MICRO + contribution(STAKE_MICRO)), 10_000);

    // the README's picture: the page from its top after the feature
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: 'docs/gems-page.png' });

    // the history: the play, a spin, with its stake and payout once settled
    const rows = page.locator('#history tr[data-round-id]');
    await until('the play settled in the history', async () => (await rows.count()) === 1 && (await rows.locator('.state').innerText()) === 'settled: won', 20_000);
    expect(await rows.locator('.tag.spin').innerText()).to.equal('spin');
    expect(await rows.locator('.stake-amount').innerText()).to.equal('10.00');
    expect(await rows.locator('.payout').innerText()).to.equal(`+${figures(spin.payoutMicro)}`);

    // the buttons open again once minRoundMs has passed, the focus back on Spin
    await page.locator('#gems-spin:enabled').waitFor({ timeout: MIN_ROUND_MS + 5_000 });
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('gems-spin');
    expect(await page.locator('#gems-buy').isEnabled()).to.equal(true);

    // the feature bought at a stake of 1.00: its price on the button before the tap
    await page.fill('#stake', '1.00');
    expect(await page.locator('#gems-buy-cost').innerText()).to.equal('€67.00');
    await page.click('#gems-buy');
    await page.locator('#result').filter({ hasText: /^(Total win|No win)/ }).waitFor({ timeout: 30_000 });
    await until('the feature at the wallet', async () => wallet('bet').length === 2, 15_000);
    expect(wallet('bet')).to.deep.equal([STAKE_MICRO, buyCost]);
    // no base spin: the feature's purchase comes first
    expect(await items.evaluateAll((list) => list.map((item) => (item as HTMLElement).dataset.type))).to.deep.equal(bought.events.map((event) => event.type));
    expect(await items.first().innerText()).to.equal(`Feature bought: 8 free spins at ×${boughtTrigger.subOutcome.multiplier}`);
    expect(await page.locator('#result').innerText()).to.equal(bought.payoutMicro > 0n ? `Total win: ${shown(bought.payoutMicro)}` : 'No win this time.');
    const afterBuy = afterSpin - buyCost + bought.payoutMicro;
    await until('the balance after the feature', async () => euros(await page.locator('#balance').innerText()) === afterBuy - (afterBuy % 1000n), 15_000);
    expect(await pool()).to.equal(SEED_POOL_MICRO + contribution(STAKE_MICRO) + contribution(buyCost));
    await until('the meter with the bought feature', async () => (await page.locator('#gems-jackpot').innerText()) === shown(await pool()), 10_000);
    await until('both plays in the history', async () => (await rows.count()) === 2);
    expect(await rows.nth(0).locator('.tag.feature').innerText()).to.equal('feature');
    expect(await rows.nth(0).locator('.stake-amount').innerText()).to.equal('67.00');

    // the README's phone picture: the grid, the buttons and the history
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: 'docs/gems-page-phone.png', fullPage: true });
    await expectFits(page);
    await page.close();
    expect(h.wallet.violations).to.deep.equal([]);
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("a jackpot hit: its event and banner name the pool paid, the total win includes it, and the meter shows the pool started again", async () => {
    // an operator of its own, whose pool is the seed's until this play
    const own = await gemsOperator(h);
    const body = own.sessionBody({ gameCode: 'gems', sandboxSeeds: JACKPOT_SEEDS });
    const playerRef = body.playerRef as string;
    h.wallet.setBalance(playerRef, 'EUR', START_MICRO);
    const launch = await own.request('POST', '/v1/session', body);
    expect(launch.status, launch.text).to.equal(200);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(page, origins, problems);
    await page.goto(launch.body.launchUrl as string);
    await page.locator('#balance').filter({ hasText: '€1,000.00' }).waitFor({ timeout: 20_000 });
    expect(await page.locator('#gems-jackpot').innerText()).to.equal(shown(SEED_POOL_MICRO));
    await page.fill('#stake', '1.00');
    await page.locator('#gems-spin:enabled').waitFor({ timeout: 10_000 });
    // the S key spins, once the player is not typing in a field
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('s');
    await page.locator('#result').filter({ hasText: /^Total win/ }).waitFor({ timeout: 30_000 });
    const row = await h.svc.db.jackpotPool.findUniqueOrThrow({ where: { operatorId_currency: { operatorId: own.operatorId, currency: 'EUR' } } });
    expect(row.hits).to.equal(1);
    const paid = row.paidMicro;
    expect(await page.locator('#gems-events li[data-type="JACKPOT"]').innerText()).to.equal(`JACKPOT: ${shown(paid)}`);
    expect(await page.locator('#gems-jackpot-banner').innerText()).to.equal(`You won the jackpot: ${shown(paid)}!`);
    await until('the win at the wallet', async () => h.wallet.transactions.some((entry) => entry.playerRef === playerRef && entry.type === 'win'), 15_000);
    const win = h.wallet.transactions.find((entry) => entry.playerRef === playerRef && entry.type === 'win')!.amountMicro;
    expect(win >= paid).to.equal(true);
    expect(await page.locator('#result').innerText()).to.equal(`Total win: ${shown(win)}`);
    await until('the meter with the pool started again', async () => (await page.locator('#gems-jackpot').innerText()) === shown(row.poolMicro), 10_000);
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("explains a play the wallet refuses in the page's words, and opens the buttons again", async () => {
    const serverSeed = gemsSeed([() => true], { stakeMicro: BUY_STAKE_MICRO, featureBuy: true });
    const body = operator.sessionBody({ gameCode: 'gems', sandboxSeeds: { serverSeed, clientSeed: GEMS_CLIENT_SEED } });
    // 5.00: the feature at 1.00 costs 67.00
    const page = await open(body, 500_000n, '€5.00');
    await page.fill('#stake', '1.00');
    await page.locator('#gems-buy:enabled').waitFor({ timeout: 10_000 });
    await page.click('#gems-buy');
    await page.locator('#message').filter({ hasText: 'Insufficient funds for this stake.' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('#gems-events li').count()).to.equal(0);
    await page.locator('#gems-spin:enabled').waitFor({ timeout: MIN_ROUND_MS + 5_000 });
    expect(await page.locator('#balance').innerText()).to.equal('€5.00');
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('plays a free bet of bought features from the panel: the campaign\'s stake sent to the wallet as free, the play shown, the grant gone (D42)', async () => {
    // nonce 0: the feature bought at the campaign's stake of 1.00
    const serverSeed = gemsSeed([() => true], { stakeMicro: BUY_STAKE_MICRO, featureBuy: true });
    const bought = deriveGems({ serverSeed, clientSeed: GEMS_CLIENT_SEED, nonce: 0, stakeMicro: BUY_STAKE_MICRO, featureBuy: true, jackpotPoolMicro: SEED_POOL_MICRO });
    expect(eventsOf(bought, 'JACKPOT')).to.deep.equal([]);
    const trigger = eventsOf(bought, 'FEATURE_TRIGGER')[0] as Extract<GemsOutcome['events'][number], { type: 'FEATURE_TRIGGER' }>;
    const body = operator.sessionBody({ gameCode: 'gems', sandboxSeeds: { serverSeed, clientSeed: GEMS_CLIENT_SEED } });
    const playerRef = body.playerRef as string;
    const campaign = await createCampaign(h, operator, { playerRefs: [playerRef], stakeMicro: BUY_STAKE_MICRO, rounds: 1, gameCode: 'gems', featureBuy: true });
    const page = await open(body, START_MICRO, '€1,000.00');

    // the grant: its campaign, its stake, marked as a bought feature; what a free play takes
    const panel = page.locator('#free-bets');
    await panel.waitFor({ state: 'visible', timeout: 10_000 });
    const grant = panel.locator('li.free-bet');
    expect(await grant.count()).to.equal(1);
    expect(await grant.locator('.free-bet-campaign').innerText()).to.equal(campaign.campaignRef);
    expect(await grant.locator('.free-bet-stake').innerText()).to.equal(shown(BUY_STAKE_MICRO));
    expect(await grant.locator('.free-bet-feature').innerText()).to.equal('bought feature');
    expect(await grant.locator('.free-bet-remaining').innerText()).to.equal('1 round left');
    expect(await page.locator('#free-bet-caption').innerText()).to.equal("A free bet spins at its grant's stake; one marked “bought feature” buys the feature.");
    // dice's side chooser is not Gem Vault's
    expect(await panel.getByRole('radiogroup').isHidden()).to.equal(true);

    // played from the keyboard: the grant's button focused and Enter
    const play = panel.getByRole('button', { name: `Play a free bought feature at a stake of ${shown(BUY_STAKE_MICRO)} (${campaign.campaignRef})` });
    await page.locator('.free-bet-play:enabled').waitFor({ timeout: 10_000 });
    await play.focus();
    await page.keyboard.press('Enter');
    await page.locator('#result').filter({ hasText: /^(Total win|No win)/ }).waitFor({ timeout: 30_000 });

    // the play shown as any other: the feature bought, every event, the total win
    const items = page.locator('#gems-events li');
    expect(await items.evaluateAll((list) => list.map((item) => (item as HTMLElement).dataset.type))).to.deep.equal(bought.events.map((event) => event.type));
    expect(await items.first().innerText()).to.equal(`Feature bought: 8 free spins at ×${trigger.subOutcome.multiplier}`);
    expect(await page.locator('#gems-events li[data-type="FREE_SPIN"]').count()).to.equal(eventsOf(bought, 'FREE_SPIN').length);
    expect(await page.locator('#result').innerText()).to.equal(bought.payoutMicro > 0n ? `Total win: ${shown(bought.payoutMicro)}` : 'No win this time.');

    // the wallet was sent the campaign's stake, marked free: no cash left the player's balance
    const debits = h.wallet.requests.filter((r) => r.endpoint === 'bet' && r.rawBody.includes(playerRef)).map((r) => JSON.parse(r.rawBody) as Record<string, unknown>);
    expect(debits).to.have.length(1);
    expect(debits[0]).to.include({ amountMicro: BUY_STAKE_MICRO.toString(), isFree: true, bonusRef: campaign.campaignRef });
    // D42: the win booked net of the stake, never below 0
    const net = bought.payoutMicro > BUY_STAKE_MICRO ? bought.payoutMicro - BUY_STAKE_MICRO : 0n;
    await until('the balance after the free play', async () => h.wallet.balanceOf(playerRef, 'EUR') === START_MICRO + net, 15_000);

    // the grant's one round spent: it leaves the panel, with no word of a grant withdrawn
    await panel.waitFor({ state: 'hidden', timeout: 10_000 });
    expect(await page.locator('#message').innerText()).to.not.match(/no longer available/);
    // the history: a bought feature, played free
    const rows = page.locator('#history tr[data-round-id]');
    await until('the free play in the history', async () => (await rows.count()) === 1);
    expect(await rows.locator('.tag.feature').innerText()).to.equal('feature');
    expect(await rows.locator('.stake-amount.free').innerText()).to.equal('free bet');
    await page.close();
    expect(h.wallet.violations).to.deep.equal([]);
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it("speaks the session's language: German words, and euros the German way", async () => {
    const body = operator.sessionBody({ gameCode: 'gems', lang: 'de' });
    const page = await open(body, START_MICRO, `1.000,00${NBSP}€`, { width: 390, height: 844 });
    expect(await page.locator('html').getAttribute('lang')).to.equal('de');
    expect(await page.title()).to.equal('Gem Vault');
    expect(await page.getByRole('button', { name: 'Drehen' }).count()).to.equal(1);
    await page.fill('#stake', '2,5');
    expect(await page.locator('#gems-buy-cost').innerText()).to.equal(`167,50${NBSP}€`);
    expect(await page.locator('#gems-buy').getAttribute('aria-label')).to.equal(`Das Feature für 167,50${NBSP}€ kaufen`);
    expect(await page.locator('#gems-jackpot').innerText()).to.match(new RegExp(`^1\\.000,\\d\\d${NBSP}€$`));
    await expectFits(page);
    await page.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
