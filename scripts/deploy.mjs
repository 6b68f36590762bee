#!/usr/bin/env node
// npm run deploy [-- staging|production]  (default production)
// A manual deploy, the same steps as CI: D1 migrations applied remotely, then the Worker, at
// once (CI's production deploy is gradual: scripts/rollout.mjs). Needs `wrangler login` or
// CLOUDFLARE_API_TOKEN/CLOUDFLARE_ACCOUNT_ID, and the ids and the custom domain in wrangler.toml
// (`node scripts/cloudflare-provision.mjs ENV` writes them): an environment without a custom
// domain is refused, it would serve from workers.dev (docs/operations.md#custom-domain).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { root, runWrangler } from './lib/local-worker.mjs';
import { customDomainOf, domainVariable, envSection } from './lib/wrangler-env.mjs';

const env = process.argv[2] ?? 'production';
if (!['staging', 'production'].includes(env)) {
  console.error('Usage: npm run deploy -- [staging|production]');
  process.exit(2);
}
if (!customDomainOf(envSection(readFileSync(join(root, 'wrangler.toml'), 'utf8'), env).text)) {
  console.error(
    `wrangler.toml [env.${env}] has no custom domain route: it would serve from workers.dev, where the Cache API ` +
      `does nothing. Run ${domainVariable(env)}=<host> node scripts/cloudflare-provision.mjs ${env} first ` +
      '(docs/operations.md#custom-domain).',
  );
  process.exit(1);
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
