import { expect } from 'chai';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort, spawnService, type ServiceProcess } from '../../support/processes.js';
import { TEST_DATABASE_URL } from '../../support/env.js';

// `npm run demo` from a fresh database, played in a real headless Chromium (Debian's, no
// browser download): the page connects, a bet is placed, the result and the balance change
// show, the seed is rotated and a revealed round verifies in the page. Leaves the README's
// screenshot in docs/.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('the demo, played in a browser', function () {
  this.timeout(120_000);
  const database = `${TEST_DATABASE_URL}_demo`;
  let demo: ServiceProcess;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    const port = await freePort();
    demo = spawnService('demo', {
      DATABASE_URL: database,
      PORT: String(port),
      DEMO_WALLET_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    }, 'src/demo.ts');
    const line = await demo.waitForText(/http:\/\/\S+\/play\/dice\?token=\S+/, 60_000);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('request', (request) => {
      if (!request.url().startsWith(`http://127.0.0.1:${port}`) && !request.url().startsWith(`ws://127.0.0.1:${port}`)) {
        problems.push(`external request: ${request.url()}`);
      }
    });
    await page.goto(line.replace(/^.*?(http:\/\/\S+).*$/s, '$1'));
  });

  after(async () => {
    await browser?.close();
    await demo?.stop();
    const url = new URL(database);
    const name = url.pathname.slice(1);
    url.pathname = '/postgres';
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.end();
  });

  it('hides the token, bets, shows the result and balance, rotates the seed and verifies a round', async () => {
    // 5.6: the token leaves the address bar
    expect(page.url()).to.not.include('token=');
    await page.locator('#balance').filter({ hasText: /1,?000\.00/ }).waitFor({ timeout: 20_000 });

    await page.locator('#bet-low:enabled').waitFor({ timeout: 30_000 });
    await page.fill('#stake', '2.50');
    await page.click('#bet-low');
    // the stake is debited at the wallet: 1000.00 - 2.50
    await page.locator('#balance').filter({ hasText: /997\.50/ }).waitFor({ timeout: 15_000 });
    const row = page.locator('#history [data-round-id]').first();
    await row.waitFor({ timeout: 15_000 });
    const roundId = await row.getAttribute('data-round-id');
    // the result: a win credits 2 x 2.50 less 3 % = 4.85, a loss nothing
    await page.locator('#result').filter({ hasText: /\S/ }).waitFor({ timeout: 30_000 });
    await page.locator('#balance').filter({ hasText: /(997\.50|1,?002\.35)/ }).waitFor({ timeout: 15_000 });
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
