#!/usr/bin/env node
// `npm run dev [-- wrangler dev args]`: everything a newcomer needs before `wrangler dev`,
// with no account and no network: local secrets, migrated local D1, a seeded catalogue.
import { copyFileSync, existsSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const wrangler = (args, options = {}) =>
  spawnSync('npx', ['--no-install', 'wrangler', ...args], { cwd: root, stdio: 'inherit', ...options });

if (!existsSync(`${root}/.dev.vars`)) {
  copyFileSync(`${root}/.dev.vars.example`, `${root}/.dev.vars`);
  console.log('Created .dev.vars from .dev.vars.example (local values only).');
}

// CI=true keeps wrangler from asking for confirmation before applying migrations.
const migrate = wrangler(['d1', 'migrations', 'apply', 'DB', '--local'], { env: { ...process.env, CI: 'true' } });
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const seed = spawnSync(process.execPath, [`${root}/scripts/seed.mjs`], { cwd: root, stdio: 'inherit' });
if (seed.status !== 0) process.exit(seed.status ?? 1);

const dev = spawn('npx', ['--no-install', 'wrangler', 'dev', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => dev.kill(signal));
dev.on('exit', (code) => process.exit(code ?? 0));
