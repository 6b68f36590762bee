#!/usr/bin/env node
// npm run docs:vendor
//
// Writes public/docs/scalar.js: the standalone browser bundle of Scalar's API reference
// (`@scalar/api-reference`, MIT), served by the Worker's static assets at /docs. Only
// this one file of the package is needed, so it is taken with `npm pack` rather than
// installed (the package's dependencies are some 300 packages the bundle already holds),
// checked against the hash below and committed, so that /docs works offline.
// 1.46.4 is the newest release whose package supports Node 20 (later ones need 22; the
// browser bundle itself does not care).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './lib/local-api.mjs';

const VERSION = '1.46.4';
const SHA256 = '81b8d2bdab4a42ab81465386441b9a0f928b68631364360f00e8cce620cc1efb';

const dir = mkdtempSync(join(tmpdir(), 'scalar-'));
try {
  execFileSync('npm', ['pack', `@scalar/api-reference@${VERSION}`, '--silent'], { cwd: dir, stdio: 'ignore' });
  execFileSync('tar', ['xzf', `scalar-api-reference-${VERSION}.tgz`, 'package/dist/browser/standalone.js'], {
    cwd: dir,
  });
  const bundle = readFileSync(join(dir, 'package/dist/browser/standalone.js'));
  const hash = createHash('sha256').update(bundle).digest('hex');
  if (hash !== SHA256) throw new Error(`standalone.js ${VERSION} has sha256 ${hash}, expected ${SHA256}`);
  writeFileSync(`${root}/public/docs/scalar.js`, bundle);
  console.log(`public/docs/scalar.js: @scalar/api-reference ${VERSION}, ${bundle.length} bytes, sha256 ${hash}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
