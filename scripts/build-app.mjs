#!/usr/bin/env node
// npm run app:build: the listener app (docs/listener-page.md) from web/ into public/, where Workers Static Assets serve
// it. wrangler runs it before `wrangler dev` and every `wrangler deploy` (wrangler.toml [build]), so a clean clone
// needs no step of its own; its output is git-ignored. esbuild bundles and minifies:
//   web/main.tsx  -> public/app/app.js   (Preact, the typed client of clients/typescript, the screens)
//   web/app.css   -> public/app/app.css
//   web/sw/sw.ts  -> public/sw.js        (the service worker; at the root, so its scope is the whole app)
// The service worker is told the shell's files and a version made of their contents: a build that changes any of them
// installs a new worker, which keeps the new shell and drops the old one.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/**
 * The most the app's JavaScript and CSS may weigh, gzip-compressed, in bytes: what a phone downloads before it shows
 * anything (docs/listener-page.md#size). `npm run listener:check` fails past it.
 */
export const BUDGET_GZIP_BYTES = 40 * 1024;

/** What the service worker keeps for offline use: the page, its code and style, the manifest and its icons. */
const SHELL = ['/', '/app/app.js', '/app/app.css', '/manifest.webmanifest', '/icons/icon.svg', '/icons/icon-192.png'];

const common = { bundle: true, minify: true, legalComments: 'none', logLevel: 'warning', target: 'es2022' };

/** Builds the app into public/; answers the gzip sizes of what the browser downloads first. */
export async function buildListenerApp() {
  mkdirSync(`${root}/public/app`, { recursive: true });
  await build({
    ...common,
    entryPoints: { app: `${root}/web/main.tsx` },
    outdir: `${root}/public/app`,
    format: 'esm',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: `${root}/web/tsconfig.json`,
  });
  await build({ ...common, entryPoints: { app: `${root}/web/app.css` }, outdir: `${root}/public/app` });
  const hash = createHash('sha256');
  for (const path of SHELL) hash.update(readFileSync(`${root}/public${path === '/' ? '/index.html' : path}`));
  await build({
    ...common,
    entryPoints: [`${root}/web/sw/sw.ts`],
    outfile: `${root}/public/sw.js`,
    format: 'iife',
    tsconfig: `${root}/web/sw/tsconfig.json`,
    define: {
      SHELL_VERSION: JSON.stringify(hash.digest('hex').slice(0, 12)),
      SHELL_FILES: JSON.stringify(SHELL),
    },
  });
  return builtSizes();
}

/** The gzip sizes of the built app, in bytes: what the browser downloads first, and the service worker. */
export function builtSizes() {
  const gzip = (file) => gzipSync(readFileSync(`${root}/public/${file}`), { level: 9 }).length;
  return { js: gzip('app/app.js'), css: gzip('app/app.css'), sw: gzip('sw.js') };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sizes = await buildListenerApp();
  const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
  console.log(
    `listener app built: app.js ${kb(sizes.js)}, app.css ${kb(sizes.css)}, sw.js ${kb(sizes.sw)} gzip ` +
      `(JS + CSS ${kb(sizes.js + sizes.css)} of a ${kb(BUDGET_GZIP_BYTES)} budget)`,
  );
}
