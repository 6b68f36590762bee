#!/usr/bin/env node
// node scripts/rollout.mjs --env production [--percent 10] [--watch-minutes 5] [--every-seconds 30] [--dry-run]
// node scripts/rollout.mjs --env production --restore
//
// A gradual production deploy: upload the new Worker version, give it `--percent` of the
// requests beside the version serving now, read both versions' 5xx rates from the
// metrics (Workers Analytics Engine, src/lib/metrics.ts) every 30 s, then give it 100%,
// or give the previous version 100% again as soon as the new one fails the gate
// (scripts/lib/rollout.mjs `judge`). Exit 0 when promoted, 1 when rolled back.
//
// Traffic is never left split: while it is, the split is written to `.rollout-<env>.json`;
// SIGINT/SIGTERM give the previous version 100% before exiting, and `--restore` (the
// workflow's step after a failed or cancelled job) does the same from that file.
// D1 migrations are applied before this runs and must suit both versions
// (`npm run migrations:check`). Needs CLOUDFLARE_API_TOKEN (with Account Analytics Read)
// and CLOUDFLARE_ACCOUNT_ID. `--dry-run` uploads nothing: it builds and prints the steps.
// Tests replace wrangler (WRANGLER_SCRIPT, a script), the SQL API (ROLLOUT_SQL_URL) and the state's directory.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  GATE,
  currentVersion,
  datasetOf,
  errorRateQuery,
  judge,
  uploadedVersion,
  versionCounts,
} from './lib/rollout.mjs';
import { root, runWrangler, sleep, wranglerOutput } from './lib/local-worker.mjs';

const { values: options } = parseArgs({
  options: {
    env: { type: 'string', default: 'production' },
    percent: { type: 'string', default: String(GATE.percent) },
    'watch-minutes': { type: 'string', default: String(GATE.watchMs / 60_000) },
    'every-seconds': { type: 'string', default: String(GATE.everyMs / 1000) },
    'dry-run': { type: 'boolean', default: false },
    restore: { type: 'boolean', default: false },
  },
});
const env = options.env;
const percent = Number(options.percent);
const watchMs = Number(options['watch-minutes']) * 60_000;
const everyMs = Number(options['every-seconds']) * 1000;
if (
  !['staging', 'production'].includes(env) ||
  !(percent > 0 && percent < 100) ||
  !(watchMs > 0 && Number.isFinite(watchMs)) ||
  !(everyMs > 0 && Number.isFinite(everyMs))
) {
  console.error(
    'Usage: node scripts/rollout.mjs --env staging|production [--percent 1-99] [--watch-minutes N] [--every-seconds N] [--dry-run | --restore]',
  );
  process.exit(2);
}

const log = (line) => console.log(`[rollout ${env}] ${line}`);
// Tests keep it in a directory of their own (ROLLOUT_STATE_DIR).
const stateFile = join(process.env.ROLLOUT_STATE_DIR ?? root, `.rollout-${env}.json`);

/** Runs wrangler once; `{ ok, output }`. */
function attempt(args) {
  const run = runWrangler([...args, '--env', env], { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  return { ok: run.status === 0, output: `${run.stdout ?? ''}${run.stderr ?? ''}` };
}

/** Runs wrangler; its output (a failure throws with wrangler's own message, and the script exits 1). */
const wrangler = (args) => wranglerOutput([...args, '--env', env]);

/** A deploy that must happen (the end of a split): three tries; on failure the command a human runs. */
async function mustDeploy(spec, message) {
  const args = ['versions', 'deploy', spec, '-y', '--message', message];
  for (let i = 1; i <= 3; i += 1) {
    const run = attempt(args);
    if (run.ok) return true;
    process.stderr.write(run.output);
    log(`wrangler versions deploy ${spec} failed (try ${i} of 3).`);
    if (i < 3) await sleep(5000);
  }
  log(`TRAFFIC IS STILL SPLIT. Run: npx wrangler versions deploy ${spec} -y --env ${env}`);
  return false;
}

/** Gives the previous version 100% again if a split is recorded; true when nothing is left split. */
async function restoreSplit(reason) {
  if (!existsSync(stateFile)) return true;
  const split = JSON.parse(readFileSync(stateFile, 'utf8'));
  log(`${reason}: giving ${split.previous} 100% again (${split.uploaded} was at ${split.percent}%).`);
  if (!(await mustDeploy(`${split.previous}@100%`, `rolled back: ${reason}`))) return false;
  rmSync(stateFile);
  return true;
}

if (options.restore) process.exit((await restoreSplit('the rollout job failed or was cancelled')) ? 0 : 1);

// The version serving now; a Worker never deployed has none (wrangler says so and fails).
const status = attempt(['deployments', 'status', '--json']);
if (!status.ok && !/no deployments/i.test(status.output)) {
  process.stderr.write(status.output);
  console.error('wrangler deployments status failed.');
  process.exit(1);
}
const previous = status.ok ? currentVersion(status.output) : null;
const commit = process.env.GITHUB_SHA ?? 'local';

if (options['dry-run']) {
  log(`would upload a version (tag ${commit.slice(0, 12)}), give it ${percent}% beside ${previous ?? 'nothing'},`);
  log(`watch its 5xx rate for ${watchMs / 60_000} min against the gate, then 100% or back to ${previous}.`);
  wrangler(['versions', 'upload', '--dry-run']);
  log('dry run: the bundle builds; nothing uploaded.');
  process.exit(0);
}

const uploaded = uploadedVersion(
  wrangler(['versions', 'upload', '--tag', commit.slice(0, 12), '--message', `commit ${commit}`]),
);
/** Crons and routes are not part of a version: `versions deploy` leaves them as they were. */
const deployTriggers = () => wrangler(['triggers', 'deploy']);

if (!previous) {
  // The first deploy of this Worker: there is nothing to compare with.
  wrangler(['versions', 'deploy', `${uploaded}@100%`, '-y', '--message', 'first deploy']);
  deployTriggers();
  log(`first deploy: ${uploaded} at 100%.`);
  process.exit(0);
}

/** Set once a signal asked to stop: the watch then decides nothing more (it could promote while the restore retries). */
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, async () => {
    stopping = true;
    process.exit((await restoreSplit(`stopped by ${signal}`)) ? 1 : 2);
  });
writeFileSync(stateFile, JSON.stringify({ previous, uploaded, percent }));
wrangler(['versions', 'deploy', `${uploaded}@${percent}%`, `${previous}@${100 - percent}%`, '-y']);
log(`${uploaded} at ${percent}%, ${previous} at ${100 - percent}%. Watching for ${watchMs / 60_000} min.`);

const sqlUrl =
  process.env.ROLLOUT_SQL_URL ??
  `https://api.cloudflare.com/client/v4/accounts/${process.env.CLOUDFLARE_ACCOUNT_ID}/analytics_engine/sql`;
const startedAt = Date.now();
/** Both versions' counts since the split began, or null when the metrics cannot be read. */
async function read() {
  try {
    const response = await fetch(sqlUrl, {
      method: 'POST',
      headers: { Authorization: `Bearer ${process.env.CLOUDFLARE_API_TOKEN}` },
      body: errorRateQuery(datasetOf(env), (Date.now() - startedAt) / 1000),
      signal: AbortSignal.timeout(20_000),
    });
    if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
    const answer = await response.json();
    return { candidate: versionCounts(answer, uploaded), current: versionCounts(answer, previous) };
  } catch (error) {
    log(`metrics not read (${error.message}).`);
    return null;
  }
}

while (!stopping) {
  await sleep(everyMs);
  if (stopping) break;
  const done = Date.now() - startedAt >= watchMs;
  const verdict = judge(await read(), { done });
  log(`${verdict.action}: ${verdict.reason}`);
  if (verdict.action === 'promote') {
    if (!(await mustDeploy(`${uploaded}@100%`, `promoted: ${verdict.reason}`))) process.exit(1);
    rmSync(stateFile);
    deployTriggers();
    log(`${uploaded} at 100%.`);
    process.exit(0);
  }
  if (verdict.action === 'rollback') {
    if (await restoreSplit(verdict.reason)) log(`rolled back: ${uploaded} serves nothing.`);
    process.exit(1);
  }
}
