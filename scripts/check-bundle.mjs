#!/usr/bin/env node
// npm run check:bundle: `wrangler deploy --dry-run` for every environment of wrangler.toml
// (the top level too); prints each bundle's size and fails above 250 KiB gzip.
import { readFileSync } from 'node:fs';
import { root, runWrangler } from './lib/local-worker.mjs';

const LIMIT_KIB = 250;
const envs = [
  '',
  ...[...readFileSync(`${root}/wrangler.toml`, 'utf8').matchAll(/^\[env\.([\w-]+)\]\s*$/gm)].map((m) => m[1]),
];
let failed = false;
for (const env of envs) {
  const args = [
    'deploy',
    '--dry-run',
    '--outdir',
    `${root}/bench/out/dry-run-${env || 'top'}`,
    ...(env ? ['--env', env] : []),
  ];
  const run = runWrangler(args, { encoding: 'utf8' });
  const size = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(run.stdout + run.stderr);
  if (run.status !== 0 || !size) {
    console.error(`wrangler deploy --dry-run${env ? ` --env ${env}` : ''} failed:\n${run.stdout}${run.stderr}`);
    failed = true;
    continue;
  }
  const gzip = Number(size[2]);
  console.log(`${(env || 'top level').padEnd(12)} ${size[1]} KiB, gzip ${gzip} KiB (limit ${LIMIT_KIB} KiB)`);
  if (gzip > LIMIT_KIB) failed = true;
}
process.exit(failed ? 1 : 0);
