import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startHarness } from './harness.js';
import { freePort } from './processes.js';

// Headless Chromium for the browser tests (the machine's /usr/bin/chromium unless
// CHROMIUM_PATH), what a page may not do: log an error, throw, or ask any origin the test
// did not name (the pages make no external request, D16), and what every game page must do:
// fit a desktop's and a phone's width.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });

// console errors, page errors and any request to an origin the test did not name
export function watch(page: Page, origins: string[], problems: string[]) {
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('request', (request) => {
    if (!origins.some((origin) => request.url().startsWith(origin))) problems.push(`external request: ${request.url()}`);
  });
}

// the service in the test process, listening where PUBLIC_URL says (a page connects to it
// only, D24), and the origins its pages may ask
export async function serviceForPages(roles: Parameters<typeof startHarness>[1]) {
  const port = await freePort();
  const h = await startHarness({ PUBLIC_URL: `http://127.0.0.1:${port}` }, roles, { port });
  return { h, origins: [`http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}`] };
}

// What the page shows across at each width, a desktop's and a phone's: the document within
// the viewport, and the history table within its scroll box
export async function expectFits(page: Page, viewports = [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
  for (const viewport of viewports) {
    await page.setViewportSize(viewport);
    const shown = await page.evaluate(() => {
      const box = document.querySelector('.table-scroll')!;
      return { document: document.documentElement.scrollWidth, viewport: window.innerWidth, table: box.scrollWidth, box: box.clientWidth };
    });
    expect(shown.document, `the page's width at ${viewport.width} px`).to.be.at.most(shown.viewport);
    expect(shown.table, `the history table's width at ${viewport.width} px`).to.be.at.most(shown.box);
  }
}
