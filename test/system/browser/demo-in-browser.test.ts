import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import { dropDatabase } from '../../../src/shared/platform/db/migrate.js';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, watch } from '../../support/browser.js';
import { clearRedisPrefix } from '../../../src/shared/platform/redis.js';
import { freePort, spawnService, type ServiceProcess } from '../../support/processes.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/env.js';

// `npm run demo` from a fresh database, played in a real headless Chromium (Debian's, no
// browser download): the page connects, a bet is placed, the result and the balance change
// show, the seed is rotated and a revealed round verifies in the page. Leaves the README's
// screenshot in docs/. Then the demo in German inside a casino's frame: the page's words and
// amounts in the session's language (contract 2.2 lang) and its exit to the operator's
// returnUrl in the top window.
const NBSP = '\u00a0';

type Demo = { process: ServiceProcess; port: number; launchUrl: string; stop: () => Promise<void> };

// a demo (src/demo.ts) on a database of its own, dropped when it stops
async function startDemo(suffix: string, env: NodeJS.ProcessEnv = {}): Promise<Demo> {
  const database = `${TEST_DATABASE_URL}_${suffix}`;
  const port = await freePort();
  const demo = spawnService(suffix, { DATABASE_URL: database, PORT: String(port), DEMO_WALLET_PORT: String(await freePort()), LOG_LEVEL: 'warn', ...env }, 'src/demo.ts');
  const line = await demo.waitForText(/http:\/\/\S+\/play\/dice\?token=\S+/, 60_000);
  return {
    process: demo,
    port,
    launchUrl: line.replace(/^.*?(http:\/\/\S+).*$/s, '$1'),
    stop: async () => {
      await demo.stop();
      await dropDatabase(database);
    },
  };
}

describe('the demo, played in a browser', function () {
  this.timeout(120_000);
  let demo: Demo;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    demo = await startDemo('demo');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    watch(page, [`http://127.0.0.1:${demo.port}`, `ws://127.0.0.1:${demo.port}`], problems);
    await page.goto(demo.launchUrl);
  });

  after(async () => {
    await browser?.close();
    await demo?.stop();
  });

  it('hides the token, bets, shows the result and balance, rotates the seed and verifies a round', async () => {
    // 5.6: the token leaves the address bar
    expect(page.url()).to.not.include('token=');
    // the demo's session is English and EUR (Intl: the euro sign before the amount)
    await page.locator('#balance').filter({ hasText: '€1,000.00' }).waitFor({ timeout: 20_000 });
    // no returnUrl at launch: no exit is offered
    expect(await page.locator('#exit-link').isHidden()).to.equal(true);

    await page.locator('#bet-low:enabled').waitFor({ timeout: 30_000 });
    await page.fill('#stake', '2.50');
    await page.click('#bet-low');
    // the stake is debited at the wallet: 1000.00 - 2.50
    await page.locator('#balance').filter({ hasText: '€997.50' }).waitFor({ timeout: 15_000 });
    const row = page.locator('#history [data-round-id]').first();
    await row.waitFor({ timeout: 15_000 });
    const roundId = await row.getAttribute('data-round-id');
    // the result: a win credits 2 x 2.50 less 3 % = 4.85, a loss nothing
    await page.locator('#result').filter({ hasText: /\S/ }).waitFor({ timeout: 30_000 });
    await page.locator('#balance').filter({ hasText: /^€(997\.50|1,002\.35)$/ }).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: 'docs/game-page.png' });

    // rotate once the round is settled (refused with bet_in_progress until then, D4), then
    // verify the revealed round in the page (D2, D5)
    const hashBefore = await page.locator('#server-seed-hash').innerText();
    await page.fill('#client-seed', 'browser-seed');
    let rotated = false;
    for (let attempt = 0; attempt < 10 && !rotated; attempt++) {
      await page.click('#rotate-seed');
      rotated = await page
        .locator('#server-seed-hash')
        .filter({ hasNotText: hashBefore })
        .waitFor({ timeout: 1500 })
        .then(() => true, () => false);
    }
    expect(rotated, 'the seed rotated once the round settled').to.equal(true);
    await page.click(`button.verify[data-round-id="${roundId}"]`);
    const output = await page.locator('#verify-output').filter({ hasText: /MATCH/ }).innerText({ timeout: 15_000 });
    expect(output).to.include('MATCH');
    expect(output).to.not.include('MISMATCH');
    // the page showed the committed hash of the seed it now reveals
    const revealed = /[0-9a-f]{64}/.exec(output.replace(hashBefore.trim(), ''))?.[0];
    if (revealed) expect(createHash('sha256').update(revealed).digest('hex')).to.equal(hashBefore.trim());

    await page.setViewportSize({ width: 360, height: 740 });
    await page.screenshot({ path: 'docs/game-page-phone.png', fullPage: true });
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});

describe('the demo in German, framed by a casino that gave a returnUrl', function () {
  this.timeout(120_000);
  const redisKeyPrefix = `${process.env.REDIS_KEY_PREFIX}-de`;
  let casino: Server;
  let casinoOrigin: string;
  let returnUrl: string;
  let demo: Demo;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    // the operator's site: a page that frames the game, and the lobby its returnUrl names
    let launchUrl = '';
    casino = createServer((request, response) => {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      if (request.url === '/casino') response.end(`<!doctype html><title>Casino</title><iframe src="${launchUrl}" width="1200" height="800"></iframe>`);
      else response.end('<!doctype html><title>Lobby</title><p>lobby</p>');
    });
    await new Promise<void>((resolve) => casino.listen(0, '127.0.0.1', resolve));
    casinoOrigin = `http://127.0.0.1:${(casino.address() as { port: number }).port}`;
    returnUrl = `${casinoOrigin}/lobby?from=dice`;
    demo = await startDemo('demo_de', { DEMO_LANG: 'de', DEMO_RETURN_URL: returnUrl, REDIS_KEY_PREFIX: redisKeyPrefix });
    launchUrl = demo.launchUrl;
    // D16: the casino may frame the game
    const admin = new pg.Client({ connectionString: `${TEST_DATABASE_URL}_demo_de` });
    await admin.connect();
    await admin.query(`UPDATE operators SET frame_ancestors = $1 WHERE id = 'demo-casino'`, [[casinoOrigin]]);
    await admin.end();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    watch(page, [`http://127.0.0.1:${demo.port}`, `ws://127.0.0.1:${demo.port}`, casinoOrigin], problems);
    await page.goto(`${casinoOrigin}/casino`);
  });

  after(async () => {
    await browser?.close();
    await demo?.stop();
    await new Promise((resolve) => casino?.close(resolve));
    await clearRedisPrefix(TEST_REDIS_URL, redisKeyPrefix);
  });

  it("speaks German, shows euros the German way, bets in German and exits to the operator's returnUrl in the top window", async () => {
    const game = page.frameLocator('iframe');
    // amounts through Intl.NumberFormat for de and EUR
    await game.locator('#balance').filter({ hasText: `1.000,00${NBSP}€` }).waitFor({ timeout: 20_000 });
    expect(await game.locator('html').getAttribute('lang')).to.equal('de');
    expect(await game.locator('.wallet-label').textContent()).to.equal('Guthaben');
    expect(await game.locator('#bet-low .side-name').textContent()).to.equal('TIEF');
    expect(await game.locator('#history-title').textContent()).to.equal('Deine Runden');
    expect(await game.locator('#stake-label').textContent()).to.equal('Einsatz (€)');
    expect(await game.locator('#stake').inputValue()).to.equal('1,00');
    expect(await game.locator('#stake-hint').textContent()).to.equal(`Min. 0,10${NBSP}€ · Max. 1.000,00${NBSP}€`);

    // contract 2.2: the exit during play leads to the returnUrl, in the top window
    // found by its role and German name, as a screen reader announces it
    const exit = game.getByRole('link', { name: 'Spiel verlassen' });
    expect(await exit.isVisible()).to.equal(true);
    expect(await exit.getAttribute('href')).to.equal(returnUrl);
    expect(await exit.getAttribute('target')).to.equal('_top');

    // a German stake, "2,50", is read as 2.50 and the change shows as German euros
    await game.locator('#bet-low:enabled').waitFor({ timeout: 30_000 });
    await game.locator('#stake').fill('2,50');
    expect(await game.locator('#potential').textContent()).to.equal(`Ein Gewinn zahlt 4,85${NBSP}€ (×2, 3 % Provision)`);
    await game.locator('#bet-low').click();
    await game.locator('#message').filter({ hasText: `Einsatz angenommen: TIEF · 2,50${NBSP}€. Viel Glück!` }).waitFor({ timeout: 15_000 });
    await game.locator('#balance').filter({ hasText: `997,50${NBSP}€` }).waitFor({ timeout: 15_000 });

    await Promise.all([page.waitForURL(returnUrl, { timeout: 15_000 }), exit.click()]);
    expect(page.url()).to.equal(returnUrl);
    expect(await page.title()).to.equal('Lobby');
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
