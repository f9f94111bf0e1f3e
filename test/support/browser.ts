import { chromium, type Browser, type Page } from 'playwright-core';

// Headless Chromium for the browser tests (the machine's /usr/bin/chromium unless
// CHROMIUM_PATH), and what a page may not do: log an error, throw, or ask any origin the
// test did not name (the pages make no external request, D16).

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
