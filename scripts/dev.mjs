#!/usr/bin/env node
// `npm run dev [-- wrangler dev args]`: everything a newcomer needs, with no account and
// no network: local secrets (.dev.vars), migrated local D1, then `wrangler dev`, and
// once it answers, the demo catalogue when the local catalogue is empty.
import { spawn } from 'node:child_process';
import { ensureDevVars, migrateLocal, root, waitForApi } from './lib/local-api.mjs';
import { seedDemoCatalogue } from './seed.mjs';

ensureDevVars();
migrateLocal();

const args = process.argv.slice(2);
const portIndex = args.findIndex((a) => a === '--port' || a.startsWith('--port='));
const port = portIndex === -1 ? '8787' : args[portIndex].includes('=') ? args[portIndex].split('=')[1] : args[portIndex + 1];

const dev = spawn('npx', ['--no-install', 'wrangler', 'dev', ...args], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => dev.kill(signal));
dev.on('exit', (code) => process.exit(code ?? 0));

try {
  await waitForApi(`http://127.0.0.1:${port}`);
  await seedDemoCatalogue(`http://127.0.0.1:${port}`);
} catch (error) {
  console.error(`Seeding the demo catalogue failed: ${error.message}`);
}
