#!/usr/bin/env node
// npm run docs:lint
//
// Lints the OpenAPI document as the Worker serves it (GET /api/v1/openapi.json of a local
// `wrangler dev`, stopped afterwards): Spectral with `spectral:oas` and the OWASP API
// Security ruleset (.spectral.yaml), failing on any warning, and Redocly's
// `recommended-strict` (redocly.yaml), where every warning is an error. Both run offline.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { root, servedOpenApiDocument } from './lib/local-worker.mjs';

const require = createRequire(`${root}/package.json`);
const bin = (pkg, name) => join(root, 'node_modules', pkg, require(`${pkg}/package.json`).bin[name]);

const document = await servedOpenApiDocument();
mkdirSync(`${root}/bench/out`, { recursive: true });
const file = `${root}/bench/out/openapi.json`;
writeFileSync(file, JSON.stringify(document, null, 2));
let failed = false;
const run = (label, command, args, env = {}) => {
  console.log(`\n${label}`);
  try {
    execFileSync(process.execPath, [command, ...args], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, ...env },
    });
  } catch {
    failed = true;
  }
};
run('Spectral (spectral:oas + OWASP API Security, fails on warnings):', bin('@stoplight/spectral-cli', 'spectral'), [
  'lint',
  file,
  '--ruleset',
  '.spectral.yaml',
  '--fail-severity=warn',
]);
run('Redocly (recommended-strict):', bin('@redocly/cli', 'redocly'), ['lint', file, '--config', 'redocly.yaml'], {
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
});
if (failed) {
  console.error('\nThe OpenAPI document has lint findings (above).');
  process.exit(1);
}
console.log('\nThe OpenAPI document is clean: no errors, no warnings.');
