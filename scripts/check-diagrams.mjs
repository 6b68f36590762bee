#!/usr/bin/env node
// npm run docs:diagrams [-- --screenshot FILE]
//
// Renders every ```mermaid block of README.md and docs/*.md with Mermaid itself (the
// renderer GitHub uses for these blocks) in headless Chromium (Debian's `chromium`,
// driven by playwright-core, as docs:check), and fails on any block Mermaid cannot
// parse or render. Saves the first diagram as a picture (bench/out/architecture.png).
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { chromium } from 'playwright-core';
import { screenshotPath } from './lib/browser-check.mjs';
import { root } from './lib/local-worker.mjs';

const screenshot = screenshotPath(`${root}/bench/out/architecture.png`);
const files = ['README.md', ...readdirSync(`${root}/docs`).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));
const blocks = files.flatMap((file) =>
  [...readFileSync(`${root}/${file}`, 'utf8').matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => ({
    file,
    code: m[1],
  })),
);
if (blocks.length === 0) throw new Error('no mermaid block found');
const script = join(
  dirname(createRequire(`${root}/package.json`).resolve('mermaid/package.json')),
  'dist/mermaid.min.js',
);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu'],
});
const problems = [];
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  await page.setContent('<!doctype html><html><body><div id="out"></div></body></html>');
  await page.addScriptTag({ path: script });
  for (const [i, block] of blocks.entries()) {
    const error = await page.evaluate(
      async ({ id, code }) => {
        try {
          /* global mermaid, document */
          mermaid.initialize({ startOnLoad: false });
          const { svg } = await mermaid.render(id, code);
          if (id === 'diagram0') document.getElementById('out').innerHTML = svg;
          return null;
        } catch (error) {
          return String(error?.message ?? error);
        }
      },
      { id: `diagram${i}`, code: block.code },
    );
    if (error) problems.push(`${block.file}, diagram ${i + 1}: ${error.split('\n')[0]}`);
  }
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.locator('#out').screenshot({ path: screenshot });
} finally {
  await browser.close();
}
if (problems.length) {
  for (const problem of problems) console.error(`PROBLEM ${problem}`);
  process.exit(1);
}
console.log(`${blocks.length} Mermaid diagram(s) render; the first: ${screenshot}`);
