#!/usr/bin/env node
// npm run deploy [-- staging|production]  (default production)
// A manual deploy, the same steps as CI: D1 migrations applied remotely, then the Worker.
// Needs `wrangler login` or CLOUDFLARE_API_TOKEN/CLOUDFLARE_ACCOUNT_ID, and the ids in
// wrangler.toml (`node scripts/cloudflare-provision.mjs ENV` fills them).
import { runWrangler } from './lib/local-worker.mjs';

const env = process.argv[2] ?? 'production';
if (!['staging', 'production'].includes(env)) {
  console.error('Usage: npm run deploy -- [staging|production]');
  process.exit(2);
}
for (const args of [
  ['d1', 'migrations', 'apply', 'DB', '--remote', '--env', env],
  ['deploy', '--env', env],
]) {
  const run = runWrangler(args, { stdio: 'inherit', env: { ...process.env, CI: 'true' } });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
