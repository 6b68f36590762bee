#!/usr/bin/env node
// `npm run dev [-- wrangler dev args]`: everything a newcomer needs, with no account and
// no network: local secrets (.dev.vars), the migrated local D1, the demo catalogue when
// the local catalogue is empty, then `wrangler dev` on port 8787 (or `--port N`).
//
// The catalogue is seeded before the API listens (docs/development.md#npm-run-dev): a private Worker on a
// random port imports it and is stopped, and only then does the public one start, so no
// client ever sees (or caches) an empty catalogue. Both Workers run in process groups
// of their own, stopped as groups with this script (SIGINT, SIGTERM, SIGHUP or exit).
import { ensureDevVars, migrateLocal } from './lib/local-api.mjs';
import { runWrangler, spawnGroup, startLocalWorker, wranglerBin } from './lib/local-worker.mjs';
import { seedDemoCatalogue } from './seed.mjs';

const args = process.argv.slice(2);
// Where the local state lives, when the caller moved it: migrations and the seed use it too.
const persistIndex = args.findIndex((a) => a === '--persist-to' || a.startsWith('--persist-to='));
const stateArgs =
  persistIndex === -1
    ? []
    : args[persistIndex].includes('=')
      ? [args[persistIndex]]
      : args.slice(persistIndex, persistIndex + 2);

// Offline by default: wrangler would fetch its sample `request.cf` from workers.cloudflare.com and print a stack trace
// when it cannot; without it, requests carry wrangler's built-in placeholder (Austin), which nearby refuses as no
// location (docs/development.md). Set CLOUDFLARE_CF_FETCH_ENABLED=true to fetch it.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';

ensureDevVars();
migrateLocal(stateArgs);

const probe = runWrangler(
  [
    'd1',
    'execute',
    'DB',
    '--local',
    '--json',
    ...stateArgs,
    '--command',
    'SELECT EXISTS (SELECT 1 FROM radio_channels) AS seeded',
  ],
  { encoding: 'utf8', env: { ...process.env, CI: 'true' } },
);
const seeded = probe.status === 0 && JSON.parse(probe.stdout)[0]?.results?.[0]?.seeded === 1;
if (!seeded) {
  process.stdout.write('Seeding the demo catalogue before the API starts... ');
  const seeder = await startLocalWorker(stateArgs);
  process.stdout.write(`(private Worker, process group ${seeder.pgid}) `);
  try {
    await seedDemoCatalogue(seeder.url);
  } finally {
    await seeder.stop();
  }
}

const dev = spawnGroup(process.execPath, [wranglerBin, 'dev', ...args], { stdio: 'inherit' });
console.log(`wrangler dev runs in process group ${dev.pgid}; Ctrl-C or SIGTERM stops it.`);
dev.child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
