#!/usr/bin/env node
// npm run listener:check [-- --screenshot FILE]
//
// The listener app (`/`, web/, docs/listener-page.md) in headless Chromium (Debian's `chromium`, driven by
// playwright-core, as docs:check), against the bundle served by Miniflare with the static assets and their headers,
// walked as a new listener would: sign up, search, a station page whose title changes live, play (the first stream
// fails: the player reports it and falls back to the next one), the player staying while browsing, a like, a
// playlist (created, added to, reordered, an item removed, made public) whose share link answers the .m3u, a station
// that cannot play (reported), sign out, a failed sign-in, a password reset with the mailed code, and the app opened
// offline from its service worker. axe-core checks the main screens (no serious or critical violation); the built
// JavaScript and CSS must stay within the gzip budget (scripts/build-app.mjs); the manifest must make the app
// installable. Screenshots of the main screens at phone and desktop sizes: bench/out/listener-*.png.
//
// The stations are fakes: the Worker's reads of their streams are answered in this process (Miniflare's
// outboundService), the browser's audio by the page's route (silent MP3 frames). Fails on any console error, page
// error, or request to another host.
/* global window, document, location, navigator -- in the functions page.evaluate runs in the page */
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ADMIN_TOKEN, Miniflare, applyMigrations, workerOptions, wranglerConfig } from './lib/bench-data.mjs';
import { runPageCheck, screenshotPath } from './lib/browser-check.mjs';
import { icyResponse } from './lib/fake-icy.mjs';
import { root } from './lib/local-api.mjs';
import { onShutdown, runWrangler } from './lib/local-worker.mjs';
import { BUDGET_GZIP_BYTES, builtSizes } from './build-app.mjs';

const started = Date.now();
const out = `${root.replace(/\/$/, '')}/bench/out`;
const screenshot = screenshotPath(`${out}/listener.png`);
const STREAM = 'https://fake-radio.test/live';
/** Fake Jazz FM's first stream: the Worker reads titles from it, the browser gets a page it cannot play. */
const JAZZ_HQ = 'https://fake-radio.test/hq';
const BROKEN = 'https://broken-radio.test/live';
const FIRST = 'Miles Davis - So What';
const SECOND = 'Nina Simone - Sinnerman';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
/**
 * The most a title change may take to show: the 10-second reading interval, the fan-out, and room for a busy machine
 * (CI runs it beside other work). A title that is not pushed never shows, so the check still fails on a broken push;
 * how fast it shows is the bench's measure (`npm run bench:live`), and the check prints what it saw.
 */
const LIVE_DELAY_MS = 30_000;
/** An upper bound for one step (a password hash on a busy machine, a first render); steps wait on conditions. */
const STEP_MS = 30_000;

// The Worker's bundle; wrangler builds the app into public/ first (wrangler.toml [build]).
const bundle = `${out}/listener-bundle`;
if (runWrangler(['deploy', '--dry-run', '--outdir', bundle], { stdio: 'ignore' }).status !== 0) {
  throw new Error('wrangler deploy --dry-run failed');
}
const sizes = builtSizes();
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

/** The stations' streams as the Worker reads them: ICY metadata after 64 bytes, the title of the moment. */
let title = FIRST;
const fakeStream = (request) =>
  new URL(request.url).origin === new URL(STREAM).origin
    ? icyResponse(title, 64)
    : new Response('no such host', { status: 502 });

/** What the browser plays: two minutes of silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz, 417 bytes each). */
const FRAMES = 4600;
const silence = Buffer.alloc(417 * FRAMES);
for (let i = 0; i < FRAMES; i += 1) silence.set([0xff, 0xfb, 0x90, 0x64], i * 417);
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'));

const mf = new Miniflare({
  ...workerOptions({
    scriptPath: `${bundle}/index.js`,
    config: wranglerConfig(root),
    storage: 'listener',
    adminToken: ADMIN_TOKEN,
    bindings: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' },
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
const admin = (path, init = {}) =>
  fetch(`${url}/api/v1/admin${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
  });
const jazzStation = { homepage: 'https://fake-radio.test/', tags: 'jazz', countrycode: 'CH', codec: 'MP3' };
const imported = await admin('/radios/import', {
  method: 'POST',
  body: JSON.stringify([
    // Two variants of one broadcaster (same name but for its quality word, same homepage): the import makes them one
    // channel whose streams are the HQ one, then the live one (docs/catalogue.md#several-streams-per-channel).
    { ...jazzStation, name: 'Fake Jazz FM HQ', url: JAZZ_HQ, url_resolved: JAZZ_HQ },
    { ...jazzStation, name: 'Fake Jazz FM', url: STREAM, url_resolved: STREAM },
    { name: 'Broken FM', url: BROKEN, url_resolved: BROKEN, tags: 'jazz', countrycode: 'CH', codec: 'MP3' },
  ]),
});
if (!imported.ok) throw new Error(`import: ${imported.status} ${await imported.text()}`);

const notes = [];
let changeMs;
let screens = 0;
/** A console error the current step expects: the 401 that a wrong password answers. */
let expectedError = null;
await runPageCheck({
  url,
  path: '/',
  viewport: PHONE,
  screenshot,
  fulfil(requested) {
    if (requested === STREAM) return { status: 200, contentType: 'audio/mpeg', body: silence };
    // A stream that answers something else than audio (a broadcaster's error page): the browser cannot play it.
    if (requested === BROKEN || requested === JAZZ_HQ)
      return { status: 200, contentType: 'text/html', body: '<p>This stream moved.</p>' };
    // The test harness's own script (the page's CSP takes scripts of its origin only).
    if (requested === `${url}/__check/axe.min.js`)
      return { status: 200, contentType: 'text/javascript', body: axeSource };
    return undefined;
  },
  allowConsole: (line) => expectedError?.test(line) ?? false,
  async steps(page, problems) {
    page.setDefaultTimeout(STEP_MS);
    if (sizes.js + sizes.css > BUDGET_GZIP_BYTES) {
      problems.push(`JS + CSS weigh ${kb(sizes.js + sizes.css)} gzip, over the ${kb(BUDGET_GZIP_BYTES)} budget`);
    }
    const heading = (name) => page.getByRole('heading', { level: 1, name }).waitFor();
    const player = page.getByRole('region', { name: 'Player' });
    const shoot = (name) =>
      page.screenshot({ path: `${out}/listener-${name}-${page.viewportSize().width < 600 ? 'phone' : 'desktop'}.png` });
    const audited = [];
    /** axe-core on the screen as it is: serious and critical violations are problems, others are printed. */
    async function audit(screen) {
      if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ url: '/__check/axe.min.js' });
      const violations = await page.evaluate(async () => {
        const result = await window.axe.run(document, { resultTypes: ['violations'] });
        return result.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          nodes: v.nodes.map((n) => n.target.join(' ')),
        }));
      });
      for (const v of violations) {
        const line = `axe on ${screen}: ${v.impact} ${v.id} (${v.nodes.slice(0, 3).join(', ')})`;
        if (v.impact === 'serious' || v.impact === 'critical') problems.push(line);
        else notes.push(line);
      }
      audited.push(`${screen} ${violations.length}`);
    }
    const request = (path, test = () => true) =>
      page.waitForRequest((r) => new URL(r.url()).pathname === path && test(r), { timeout: STEP_MS });

    // A visitor: what the app is, and the way in.
    await heading('Radio for every taste');
    await audit('welcome');
    await shoot('welcome');
    await page.getByRole('link', { name: 'Create a free account' }).click();
    await heading('Create your account');
    await page.getByLabel('Name').fill('Listener');
    await page.getByLabel('Email').fill('listener-app@example.com');
    await page.getByLabel('Password', { exact: true }).fill('a long passphrase');
    await audit('sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading('Hello, Listener');
    await page.getByRole('link', { name: 'Signed in as Listener' }).waitFor();
    await page.getByRole('list', { name: 'Recommended for you' }).waitFor();
    await audit('home');
    await shoot('home');

    // Search, then the station's page.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Search' }).click();
    await heading('Search');
    await page.getByLabel('Stations, genres or countries').fill('Fake');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('list', { name: 'Stations found' }).getByRole('link', { name: 'Fake Jazz FM' }).waitFor();
    await audit('search');
    await shoot('search');
    // The station lists two streams (contract section 11): a first one the browser cannot play, then the good one.
    // The player must report the first and play the second.
    await page.getByRole('link', { name: 'Fake Jazz FM' }).first().click();
    await heading('Fake Jazz FM');
    const stationId = () => new URL(page.url()).hash.split('/')[2];
    const jazz = stationId();
    const nowPlaying = page.locator('.now-playing');
    await nowPlaying.getByText('Miles Davis – So What').waitFor();

    const failedReport = request(`/api/v1/radios/${jazz}/report`, (r) => r.postDataJSON()?.ok === false);
    const played = page.waitForResponse((r) => r.url().endsWith(`/api/v1/radios/${jazz}/play`) && r.status() === 200);
    await page.getByRole('button', { name: 'Play', exact: true }).click();
    const report = (await failedReport).postDataJSON();
    if (report.stream_url !== JAZZ_HQ) problems.push(`the failed stream's report names ${report.stream_url}`);
    await played;
    await player.getByRole('button', { name: 'Pause Fake Jazz FM' }).waitFor();
    await audit('station');

    // The station changes its title: the page shows it without being asked (pushed at the channel's next read).
    title = SECOND;
    const changedAt = Date.now();
    await nowPlaying.getByText('Nina Simone – Sinnerman').waitFor({ timeout: LIVE_DELAY_MS + 10_000 });
    changeMs = Date.now() - changedAt;
    if (changeMs > LIVE_DELAY_MS) problems.push(`the change showed after ${changeMs} ms, over ${LIVE_DELAY_MS} ms`);
    await page.getByRole('list', { name: 'Recent titles' }).getByText('Miles Davis – So What').waitFor();

    // A like: its state and count shown.
    await page.getByRole('button', { name: /^Like/ }).click();
    await page.locator('button[aria-pressed="true"]', { hasText: 'Liked' }).getByText('1').waitFor();
    await shoot('station');

    // A playlist, created from the station page with it in.
    await page.getByText('Add to a playlist').click();
    await page.getByLabel('New playlist').fill('Road trip');
    await page.getByRole('button', { name: 'Create and add' }).click();
    await page.getByText('Added to the new playlist Road trip.').waitFor();

    // Browsing on: the player stays, with the live title.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Browse' }).click();
    await heading('Browse');
    await player.getByRole('link', { name: 'Fake Jazz FM' }).waitFor();
    await player.getByText('Nina Simone – Sinnerman').waitFor();
    await player.getByRole('button', { name: 'Pause Fake Jazz FM' }).waitFor();
    await page.getByRole('list', { name: 'Genres' }).waitFor();
    await audit('browse');
    await shoot('browse');

    // A station that cannot play: reported, and said so.
    await page.getByRole('list', { name: 'Genres' }).getByRole('link').first().click();
    await page.getByRole('link', { name: 'Broken FM' }).click();
    await heading('Broken FM');
    const broken = stationId();
    await page.getByText('Add to a playlist').click();
    await page.getByRole('group', { name: 'Your playlists' }).getByLabel('Road trip').check();
    await page.getByText('Added to Road trip.').waitFor();
    const brokenReport = request(`/api/v1/radios/${broken}/report`, (r) => r.postDataJSON()?.ok === false);
    await page.getByRole('button', { name: 'Play', exact: true }).click();
    const single = (await brokenReport).postDataJSON();
    if (single.stream_url !== BROKEN) problems.push(`Broken FM's report names ${single.stream_url}, not its stream`);
    await player.locator('#player-line').getByText('This station cannot be played right now').waitFor();

    // The playlist: reorder, remove, share.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Library' }).click();
    await heading('Your library');
    await page.getByRole('list', { name: 'Favorites' }).or(page.getByText('No favorites yet')).waitFor();
    await audit('library');
    await page.getByRole('navigation', { name: 'Library' }).getByRole('link', { name: 'Playlists' }).click();
    await page.getByRole('list', { name: 'Your playlists' }).getByRole('link', { name: 'Road trip' }).click();
    await heading('Road trip');
    const playlistHash = new URL(page.url()).hash;
    const items = page.getByRole('list', { name: 'Stations in the playlist' }).locator('.station-name');
    if ((await items.allTextContents()).join() !== 'Fake Jazz FM,Broken FM')
      problems.push('playlist order before the move');
    await page.getByRole('button', { name: 'Move Broken FM up' }).click();
    await page.getByText('Broken FM moved to position 1.').waitFor({ state: 'attached' });
    if ((await items.allTextContents()).join() !== 'Broken FM,Fake Jazz FM')
      problems.push('playlist order after the move');
    await page.getByLabel('Public: anyone with its link can listen').check();
    const link = await page.getByLabel('Share link').inputValue();
    const m3u = await fetch(link).then((r) => r.text());
    // An export plays each channel's `stream_url`: its first stream not known offline (one player's report does not
    // make it so; checks do), here the HQ one.
    if (!m3u.startsWith('#EXTM3U') || !m3u.includes(JAZZ_HQ) || !m3u.includes('Broken FM')) {
      problems.push(`the share link ${link} answered ${m3u.slice(0, 200)}`);
    }
    await page.getByRole('button', { name: 'Remove Broken FM' }).click();
    await page.getByText('Broken FM removed.').waitFor({ state: 'attached' });
    if ((await items.allTextContents()).join() !== 'Fake Jazz FM') problems.push('playlist after the removal');
    await audit('playlist');
    await shoot('playlist');

    // Sign out, a wrong password, a reset with the mailed code, and in again.
    await page.getByRole('link', { name: 'Signed in as Listener' }).click();
    await heading('Your account');
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await heading('Radio for every taste');
    await page.getByRole('link', { name: 'Sign in' }).first().click();
    await page.getByLabel('Email').fill('listener-app@example.com');
    await page.getByLabel('Password', { exact: true }).fill('not the passphrase');
    expectedError = /status of 401 .*\/api\/v1\/auth\/login\)$/;
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('The email or password is incorrect.').waitFor();
    expectedError = null;
    await audit('sign-in');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill('listener-app@example.com');
    await page.getByRole('button', { name: 'Send the code' }).click();
    await heading('Set a new password');
    const outbox = await admin('/outbox').then((r) => r.json());
    const code = /\b(\d{6})\b/.exec(outbox.data.find((m) => m.to === 'listener-app@example.com')?.text ?? '')?.[1];
    if (!code) throw new Error('no reset code in the development outbox');
    await page.getByLabel('Code from the email').fill(code);
    await page.getByLabel('New password', { exact: true }).fill('another long passphrase');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByText('Your password is set. Sign in with it.').waitFor();
    await page.getByLabel('Email').fill('listener-app@example.com');
    await page.getByLabel('Password', { exact: true }).fill('another long passphrase');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Hello, Listener');

    // Installable: Chromium's own verdict on the manifest, the icons and the service worker.
    await page.evaluate(() => navigator.serviceWorker.ready);
    const cdp = await page.context().newCDPSession(page);
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    for (const error of installabilityErrors) problems.push(`not installable: ${error.errorId}`);

    // The main screens at desktop size.
    await page.setViewportSize(DESKTOP);
    for (const [hash, name, screen] of [
      ['#/', 'Hello, Listener', 'home'],
      ['#/search?q=fake', 'Search: fake', 'search'],
      [`#/station/${jazz}`, 'Fake Jazz FM', 'station'],
      ['#/browse', 'Browse', 'browse'],
      [playlistHash, 'Road trip', 'playlist'],
    ]) {
      await page.evaluate((h) => (location.hash = h), hash);
      await heading(name);
      await page.waitForFunction(() =>
        [...document.querySelectorAll('.screen [role="status"]')].every((line) => line.textContent !== 'Loading…'),
      );
      await shoot(screen);
    }
    await audit('home (desktop)');

    // Offline: the shell opens from the service worker and says it is offline.
    await page.setViewportSize(PHONE);
    await page.evaluate(() => (location.hash = '#/'));
    await heading('Hello, Listener');
    // The browser may still say it is online (navigator.onLine): the app then tries the API, and its failed
    // requests are the ones console errors may name. The shell itself must come from the service worker.
    expectedError = /net::ERR_INTERNET_DISCONNECTED \(http:\/\/127\.0\.0\.1:\d+\/api\/v1\//;
    await page.context().setOffline(true);
    await page.reload();
    await page.getByText('You are offline.').waitFor();
    await heading('Hello, Listener');
    await audit('offline');
    await shoot('offline');
    console.log(`axe-core (serious or critical fail; violations per screen): ${audited.join(', ')}`);
    screens = audited.length;
  },
  async cleanup() {
    await mf.dispose();
    forgetCleanup();
  },
  done: () =>
    [
      ...notes,
      `The listener app: sign-up, search, a live title change ${changeMs} ms after the station made it, a failed`,
      'stream reported and the next one played, the player kept while browsing, a like, a playlist shared, sign-out,',
      `a password reset, offline open, axe-core on ${screens} screens; JS ${kb(sizes.js)} + CSS ${kb(sizes.css)} gzip of a`,
      `${kb(BUDGET_GZIP_BYTES)} budget; ${((Date.now() - started) / 1000).toFixed(0)} s; screenshots: ${out}/listener-*.png`,
    ].join('\n'),
});
