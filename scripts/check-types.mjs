#!/usr/bin/env node
// npm run types:check: fails when worker-configuration.d.ts is not what `wrangler types`
// makes of wrangler.toml now. It regenerates the file, compares, and puts the checked-in
// one back. (`wrangler types --check` in wrangler 4.86 also weighs whether a .dev.vars
// exists, so it disagrees between a developer's checkout and a clean clone; and the
// output path argument is not honoured, hence the in-place round trip.)
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, runWrangler } from './lib/local-worker.mjs';

const file = join(root, 'worker-configuration.d.ts');
const checkedIn = readFileSync(file, 'utf8');
rmSync(file);
const run = runWrangler(
  [
    'types',
    '--include-runtime=false',
    '--strict-vars=false',
    '--env-file',
    '.dev.vars.example',
    'worker-configuration.d.ts',
  ],
  { encoding: 'utf8' },
);
let fresh = '';
try {
  fresh = readFileSync(file, 'utf8');
} catch {
  // wrangler failed; reported below
}
writeFileSync(file, checkedIn);
if (run.status !== 0 || !fresh) {
  console.error(run.stdout + run.stderr);
  process.exit(1);
}
if (fresh !== checkedIn) {
  console.error('worker-configuration.d.ts is out of date with wrangler.toml: run `npm run types` and commit it.');
  process.exit(1);
}
console.log('worker-configuration.d.ts is up to date with wrangler.toml.');
