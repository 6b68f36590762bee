#!/usr/bin/env node
// npm run docs:check [-- --screenshot FILE]
//
// Opens /docs of a local `wrangler dev` in headless Chromium (Debian's `chromium`, driven
// by playwright-core; .ci/run installs it) and fails unless the interactive reference
// renders: the API's title, a tag of the sidebar and an operation, with no request to
// any other host, no CSP violation, no console error and no page error. Saves a
// screenshot (bench/out/docs.png unless --screenshot is given).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium } from 'playwright-core';
import { root, startLocalWorker } from './lib/local-worker.mjs';

const args = process.argv.slice(2);
const screenshot = args.includes('--screenshot')
  ? args[args.indexOf('--screenshot') + 1]
  : `${root}/bench/out/docs.png`;
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';

const state = mkdtempSync(join(tmpdir(), 'radio-docs-'));
const profile = mkdtempSync(join(tmpdir(), 'radio-docs-chromium-'));
const worker = await startLocalWorker(['--persist-to', state]);
const problems = [];
const external = new Set();
let browser;
try {
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    viewport: { width: 1440, height: 1000 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const origin = new URL(worker.url).origin;
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    external.add(url);
    return route.abort();
  });
  page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`));
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  const response = await page.goto(`${worker.url}/docs`, { waitUntil: 'load' });
  if (!response?.ok()) problems.push(`GET /docs answered ${response?.status()}`);
  const csp = response?.headers()['content-security-policy'] ?? '';
  if (!csp.includes("script-src 'self'")) problems.push(`GET /docs has no strict CSP: ${csp || '(none)'}`);
  mkdirSync(dirname(screenshot), { recursive: true });
  try {
    for (const text of ['Radio API', 'Playlists', 'Log in and get a new token', 'Bearer Token']) {
      await page.getByText(text, { exact: false }).first().waitFor({ state: 'visible', timeout: 30_000 });
    }
    await page.waitForLoadState('networkidle');
  } finally {
    // Also when it failed: the picture shows what rendered instead.
    await page.screenshot({ path: screenshot });
  }
} catch (error) {
  problems.push(`error: ${String(error.message).split('\n').slice(0, 3).join(' | ')}`);
} finally {
  await browser?.close();
  await worker.stop();
  rmSync(state, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
}
for (const url of external) problems.push(`request to another host (blocked): ${url}`);
if (problems.length) {
  for (const problem of problems) console.error(`PROBLEM ${problem}`);
  process.exit(1);
}
console.log(`/docs rendered the interactive reference offline; screenshot: ${screenshot}`);
