#!/usr/bin/env node
// npm run deploy [-- staging|production]  (default production)
// A manual deploy, the same steps as CI: D1 migrations applied remotely, then the Worker.
// Needs `wrangler login` or CLOUDFLARE_API_TOKEN/CLOUDFLARE_ACCOUNT_ID, and the ids in
// wrangler.toml (`node scripts/cloudflare-provision.mjs ENV` fills them).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { root, runWrangler } from './lib/local-worker.mjs';

const env = process.argv[2] ?? 'production';
if (!['staging', 'production'].includes(env)) {
  console.error('Usage: npm run deploy -- [staging|production]');
  process.exit(2);
}
// First the vars of every environment of wrangler.toml, through the Worker's own schema (src/config.ts):
// a bad value would otherwise show only as a 500 on every request of the deployed Worker.
const vitest = join(dirname(createRequire(`${root}/package.json`).resolve('vitest/package.json')), 'vitest.mjs');
const check = spawnSync(
  process.execPath,
  [vitest, 'run', '--project', 'scripts', 'test/scripts/wrangler-vars.test.ts'],
  { cwd: root, stdio: 'inherit' },
);
if (check.status !== 0) process.exit(check.status ?? 1);
for (const args of [
  ['d1', 'migrations', 'apply', 'DB', '--remote', '--env', env],
  ['deploy', '--env', env],
]) {
  const run = runWrangler(args, { stdio: 'inherit', env: { ...process.env, CI: 'true' } });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
