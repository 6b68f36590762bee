#!/usr/bin/env node
// npm run catalogue:import -- FILE [--remote] [--url URL] [--batch N] [--persist-to DIR]
//
// Imports a Radio Browser station export (a JSON array) through the admin import
// endpoint, in batches of up to 5,000, with a progress bar and a summary. Variants of one
// broadcaster (same normalised name and homepage) become one channel with several streams,
// across batches too (docs/catalogue.md#several-streams-per-channel).
//   local (default): migrates the local D1 and starts a local Worker on .wrangler/ state
//     (the one `npm run dev` uses; --persist-to DIR for another), with ADMIN_TOKEN from
//     .dev.vars; the Worker runs in a process group of its own, stopped when the import
//     ends, fails or is interrupted (scripts/lib/local-worker.mjs);
//   --url URL: a Worker that is already running (local or deployed);
//   --remote: the deployed Worker at RADIO_API_URL, with ADMIN_TOKEN from the environment.
import { readFileSync } from 'node:fs';
import { devVar, ensureDevVars, importStations, migrateLocal, startLocalWorker } from './lib/local-api.mjs';

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const file = args.find((a, i) => !a.startsWith('--') && !['--url', '--batch', '--persist-to'].includes(args[i - 1]));
if (!file) {
  console.error('Usage: npm run catalogue:import -- FILE [--remote] [--url URL] [--batch N] [--persist-to DIR]');
  process.exit(2);
}

const stations = JSON.parse(readFileSync(file, 'utf8'));
if (!Array.isArray(stations)) {
  console.error(`${file} is not a JSON array of stations.`);
  process.exit(2);
}
const batchSize = Math.min(5000, Math.max(1, Number(option('--batch') ?? 5000)));

let url = option('--url');
let token;
let worker;
if (args.includes('--remote')) {
  url ??= process.env.RADIO_API_URL;
  token = process.env.ADMIN_TOKEN;
  if (!url || !token) {
    console.error('--remote needs RADIO_API_URL (or --url) and ADMIN_TOKEN in the environment.');
    process.exit(2);
  }
} else {
  ensureDevVars();
  token = process.env.ADMIN_TOKEN ?? devVar('ADMIN_TOKEN');
  if (!url) {
    const stateArgs = option('--persist-to') ? ['--persist-to', option('--persist-to')] : [];
    migrateLocal(stateArgs);
    process.stdout.write('Starting a local Worker... ');
    worker = await startLocalWorker(stateArgs);
    url = worker.url;
    console.log(`${url} (process group ${worker.pgid})`);
  }
}

const started = Date.now();
const bar = (done, total) => {
  const width = 30;
  const filled = Math.round((done / total) * width);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} stations  ${seconds} s`,
  );
};
bar(0, stations.length);
try {
  const summary = await importStations({ url, token, stations, batchSize, onProgress: bar });
  process.stderr.write('\n');
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `${summary.received} stations in ${seconds.toFixed(1)} s (${Math.round(summary.received / seconds)}/s): ` +
      `${summary.created} created, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.skipped} skipped; ` +
      `${summary.merged} joined their broadcaster's channel as a further stream.`,
  );
  const reasons = new Map();
  for (const skip of summary.skipped_details) reasons.set(skip.reason, [...(reasons.get(skip.reason) ?? []), skip]);
  for (const [reason, rows] of reasons) {
    const examples = rows
      .slice(0, 3)
      .map((r) => `#${r.index}${r.name ? ` ${JSON.stringify(r.name)}` : ''}`)
      .join(', ');
    console.log(`  skipped ${rows.length} × ${reason} (${examples}${rows.length > 3 ? ', ...' : ''})`);
  }
} catch (error) {
  process.stderr.write('\n');
  console.error(error.message);
  process.exitCode = 1;
} finally {
  await worker?.stop();
}
