#!/usr/bin/env node
// npm run listener:check [-- --screenshot FILE]
//
// The listener page (`/`, public/index.html, docs/listener-page.md) in headless Chromium (Debian's `chromium`, driven
// by playwright-core, as docs:check), against the bundle served by Miniflare with the static assets and their
// headers: create an account, search, press play, see the title, see it change live, see the recent songs, like.
// The station is a fake: the Worker's reads of its stream are answered in this process (Miniflare's
// outboundService), the browser's audio request by the page's own route (silent MP3 frames). Fails on any console
// error, page error, or request to another host; saves a screenshot (bench/out/listener.png).
import { Buffer } from 'node:buffer';
import { ADMIN_TOKEN, Miniflare, applyMigrations, workerOptions, wranglerConfig } from './lib/bench-data.mjs';
import { runPageCheck, screenshotPath } from './lib/browser-check.mjs';
import { icyResponse } from './lib/fake-icy.mjs';
import { root } from './lib/local-api.mjs';
import { onShutdown, runWrangler } from './lib/local-worker.mjs';

const screenshot = screenshotPath(`${root}/bench/out/listener.png`);
const STREAM = 'https://fake-radio.test/live';
const FIRST = 'Miles Davis - So What';
const SECOND = 'Nina Simone - Sinnerman';
/**
 * The most a title change may take to show: the 10-second reading interval, the fan-out, and room for a busy machine
 * (CI runs it beside other work). A title that is not pushed never shows, so the check still fails on a broken push;
 * how fast it shows is the bench's measure (`npm run bench:live`), and the check prints what it saw.
 */
const LIVE_DELAY_MS = 30_000;

const bundle = `${root}/bench/out/listener-bundle`;
if (runWrangler(['deploy', '--dry-run', '--outdir', bundle], { stdio: 'ignore' }).status !== 0) {
  throw new Error('wrangler deploy --dry-run failed');
}

/** The station's stream as the Worker reads it: ICY metadata after 64 bytes, the title of the moment. */
let title = FIRST;
const fakeStream = (request) =>
  new URL(request.url).origin === new URL(STREAM).origin
    ? icyResponse(title, 64)
    : new Response('no such host', { status: 502 });

/** What the browser plays: 100 silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz, 417 bytes each). */
const silence = Buffer.alloc(417 * 100);
for (let i = 0; i < 100; i += 1) silence.set([0xff, 0xfb, 0x90, 0x64], i * 417);

const mf = new Miniflare({
  ...workerOptions({
    scriptPath: `${bundle}/index.js`,
    config: wranglerConfig(root),
    storage: 'listener',
    adminToken: ADMIN_TOKEN,
  }),
  assets: {
    directory: `${root}/public`,
    routerConfig: { has_user_worker: true },
    assetConfig: { html_handling: 'drop-trailing-slash', not_found_handling: 'none' },
  },
  outboundService: fakeStream,
});
const forgetCleanup = onShutdown(() => mf.dispose());
const url = (await mf.ready).toString().replace(/\/$/, '');
await applyMigrations(await mf.getD1Database('DB'), `${root}/drizzle/migrations`);
const imported = await fetch(`${url}/api/v1/admin/radios/import`, {
  method: 'POST',
  headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
  body: JSON.stringify([
    { name: 'Fake Jazz FM', url: STREAM, url_resolved: STREAM, tags: 'jazz', countrycode: 'CH', codec: 'MP3' },
  ]),
});
if (!imported.ok) throw new Error(`import: ${imported.status} ${await imported.text()}`);

let changeMs;
await runPageCheck({
  url,
  path: '/',
  viewport: { width: 900, height: 1000 },
  screenshot,
  fulfil: (requested) => (requested === STREAM ? { status: 200, contentType: 'audio/mpeg', body: silence } : undefined),
  async steps(page, problems) {
    await page.getByLabel('Email').fill('listener-page@example.com');
    await page.getByLabel('Password').fill('a long passphrase');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Station, genre or country').fill('Fake');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('button', { name: 'Play Fake Jazz FM' }).click();
    await page.locator('#now-playing').getByText(FIRST).waitFor({ timeout: 30_000 });
    // The station changes its title: the page shows it without being asked (pushed at the channel's next read).
    title = SECOND;
    const changedAt = Date.now();
    await page.locator('#now-playing').getByText(SECOND).waitFor({ timeout: 40_000 });
    // Within the delay docs/scale.md states (the 10 s reading interval, then the fan-out), with room for a busy machine.
    changeMs = Date.now() - changedAt;
    if (changeMs > LIVE_DELAY_MS) problems.push(`the change showed after ${changeMs} ms, over ${LIVE_DELAY_MS} ms`);
    await page.locator('#history').getByText(FIRST).waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'Like' }).click();
    await page.locator('#like[aria-pressed="true"]').waitFor({ timeout: 10_000 });
  },
  async cleanup() {
    await mf.dispose();
    forgetCleanup();
  },
  done: () =>
    `The listener page played, showed a live title change ${changeMs} ms after the station made it, and liked, offline; screenshot: ${screenshot}`,
});
