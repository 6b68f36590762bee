#!/usr/bin/env node
// npm run rollback -- --env staging|production [--version <id>] [--message "why"]
//
// Gives the previous Worker version (or `--version`) 100% of the requests again, through
// `wrangler rollback`. D1 is not touched: every migration suits the version before it
// (docs/operations.md#gradual-rollout-and-rollback), so the rolled-back code runs on the
// migrated database. `wrangler deployments list --env <env>` shows the versions.
import { parseArgs } from 'node:util';
import { runWrangler } from './lib/local-worker.mjs';

const { values: options } = parseArgs({
  options: {
    env: { type: 'string' },
    version: { type: 'string' },
    message: { type: 'string', default: 'rollback by an operator (npm run rollback)' },
  },
});
if (!['staging', 'production'].includes(options.env ?? '')) {
  console.error('Usage: npm run rollback -- --env staging|production [--version <id>] [--message "why"]');
  process.exit(2);
}
const run = runWrangler(
  [
    'rollback',
    ...(options.version ? [options.version] : []),
    '--env',
    options.env,
    '--message',
    options.message,
    '--yes',
  ],
  { stdio: 'inherit', env: { ...process.env, CI: 'true' } },
);
process.exit(run.status ?? 1);
