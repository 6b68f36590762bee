#!/usr/bin/env node
// npm run docs:check [-- --screenshot FILE]
//
// Opens /docs of a local `wrangler dev` in headless Chromium (scripts/lib/browser-check.mjs) and fails unless the
// interactive reference renders: the API's title, a tag of the sidebar and an operation, with no request to any other
// host, no CSP violation, no console error and no page error. Saves a screenshot (bench/out/docs.png unless
// --screenshot is given).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPageCheck, screenshotPath } from './lib/browser-check.mjs';
import { root, startLocalWorker } from './lib/local-worker.mjs';

const screenshot = screenshotPath(`${root}/bench/out/docs.png`);
const state = mkdtempSync(join(tmpdir(), 'radio-docs-'));
const worker = await startLocalWorker(['--persist-to', state]);
await runPageCheck({
  url: worker.url,
  path: '/docs',
  viewport: { width: 1440, height: 1000 },
  screenshot,
  async steps(page) {
    for (const text of ['Radio API', 'Playlists', 'Log in and get a new token', 'Bearer Token']) {
      await page.getByText(text, { exact: false }).first().waitFor({ state: 'visible', timeout: 30_000 });
    }
    await page.waitForLoadState('networkidle');
  },
  async cleanup() {
    await worker.stop();
    rmSync(state, { recursive: true, force: true });
  },
  done: () => `/docs rendered the interactive reference offline; screenshot: ${screenshot}`,
});
