#!/usr/bin/env node
// node scripts/generate-icons.mjs: the listener app's PNG icons (public/icons/, committed) drawn from its SVG icon
// (public/icons/icon.svg) by headless Chromium (Debian's `chromium`, as listener:check), for the platforms that want
// PNG in a web app manifest: 192 and 512 px, and a maskable 512 px one (a full square whose drawing keeps to the
// centre 80%, the safe zone launchers crop to any shape). Run it again after changing the SVG.
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { root } from './lib/local-api.mjs';

const svg = readFileSync(`${root}/public/icons/icon.svg`, 'utf8');
// Maskable: the background fills the square, the drawing shrinks to the safe zone.
const maskable = svg
  .replace(/ rx="\d+"/, '')
  .replace(/<circle/, '<g transform="translate(51.2 51.2) scale(0.8)"><circle')
  .replace(/<\/svg>/, '</g></svg>');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
try {
  for (const [name, source, size] of [
    ['icon-192.png', svg, 192],
    ['icon-512.png', svg, 512],
    ['maskable-512.png', maskable, 512],
  ]) {
    const page = await browser.newPage({ viewport: { width: size, height: size } });
    const sized = source.replace('<svg ', `<svg width="${size}" height="${size}" `);
    await page.setContent(`<style>html,body{margin:0;background:transparent}svg{display:block}</style>${sized}`);
    await page.screenshot({ path: `${root}/public/icons/${name}`, omitBackground: true });
    await page.close();
    console.log(`public/icons/${name}`);
  }
} finally {
  await browser.close();
}
