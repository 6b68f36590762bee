// A page of the Worker checked in headless Chromium (Debian's `chromium`, driven by playwright-core; .ci/run installs
// it), shared by docs:check and listener:check: every request to another host is refused and reported (unless
// `fulfil` answers it locally), console errors, page errors and a missing strict CSP are problems, a screenshot is
// saved whatever happened, and the process exits 1 listing the problems.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium } from 'playwright-core';

/** `--screenshot FILE` of the command line, else `fallback`. */
export function screenshotPath(fallback) {
  const args = process.argv.slice(2);
  return args.includes('--screenshot') ? args[args.indexOf('--screenshot') + 1] : fallback;
}

/**
 * Opens `url` + `path`, runs `steps(page, problems)`, then `cleanup()`; prints `done()` when nothing went wrong.
 * `allowConsole(line)` may excuse a console error the steps expect (Chromium logs every 4xx answer to fetch, the 401
 * of a wrong password too). `fulfil(requested)` may answer a request with route.fulfill's options: to another host (a fake the check serves
 * itself, never the network), or on the page's own origin (a file of the check's own, such as a test library).
 */
export async function runPageCheck({
  url,
  path,
  viewport,
  screenshot,
  steps,
  done,
  fulfil = () => undefined,
  allowConsole = () => false,
  cleanup,
}) {
  const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
  const profile = mkdtempSync(join(tmpdir(), 'radio-chromium-'));
  const problems = [];
  const external = new Set();
  let browser;
  try {
    browser = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
      viewport,
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    const origin = new URL(url).origin;
    await page.route('**/*', (route) => {
      const requested = route.request().url();
      const local = fulfil(requested);
      if (local) return route.fulfill(local);
      if (requested.startsWith(origin) || requested.startsWith('data:') || requested.startsWith('blob:')) {
        return route.continue();
      }
      external.add(requested);
      return route.abort();
    });
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const where = message.location()?.url;
      const line = `${message.text()}${where ? ` (${where})` : ''}`;
      if (!allowConsole(line)) problems.push(`console: ${line}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    const response = await page.goto(`${url}${path}`, { waitUntil: 'load' });
    if (!response?.ok()) problems.push(`GET ${path} answered ${response?.status()}`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    if (!csp.includes("script-src 'self'")) problems.push(`GET ${path} has no strict CSP: ${csp || '(none)'}`);
    mkdirSync(dirname(screenshot), { recursive: true });
    try {
      await steps(page, problems);
    } finally {
      // Also when it failed: the picture shows what rendered instead.
      await page.screenshot({ path: screenshot });
    }
  } catch (error) {
    problems.push(`error: ${String(error.message).split('\n').slice(0, 3).join(' | ')}`);
  } finally {
    await browser?.close();
    await cleanup();
    rmSync(profile, { recursive: true, force: true });
  }
  for (const requested of external) problems.push(`request to another host (blocked): ${requested}`);
  if (problems.length) {
    for (const problem of problems) console.error(`PROBLEM ${problem}`);
    process.exit(1);
  }
  console.log(done());
}
