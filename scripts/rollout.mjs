#!/usr/bin/env node
// node scripts/rollout.mjs --env production [--base URL] [--percent 10] [--watch-minutes 5] [--every-seconds 30]
//                                             [--dry-run]
// node scripts/rollout.mjs --env production --restore
//
// A gradual production deploy:
//   1. upload the new Worker version, and deploy the routes and crons (`wrangler triggers deploy`): they belong to
//      the Worker, not to a version, and the custom domain must lead to the Worker before the new version's health
//      can be asked there;
//   2. deploy it at 0% beside the version serving now and ask its health, GET /api/v1/health with the
//      Cloudflare-Workers-Version-Overrides header (which reaches a version of the deployment even at 0%), every
//      30 s until it answers, for at most the watch time: anything but a healthy answer gives the previous version
//      100% again before a single request reached the new one;
//   3. give it `--percent` of the requests; every 30 s, read both versions' 5xx rates from the metrics (Workers
//      Analytics Engine, src/lib/metrics.ts) and ask its health again;
//   4. give it 100%, or give the previous version 100% again as soon as it fails the gate
//      (scripts/lib/rollout.mjs `decide`: its health answers 503, or its error rate is too high).
// Exit 0 when promoted, 1 when rolled back (or when wrangler.toml names no custom domain for the environment).
//
// The health is asked at `--base`, by default https://<the custom domain of [env.<env>] in wrangler.toml>, which
// scripts/cloudflare-provision.mjs writes there (docs/operations.md#custom-domain).
//
// Traffic is never left split: while it is, the split is written to `.rollout-<env>.json`;
// SIGINT/SIGTERM give the previous version 100% before exiting, and `--restore` (the
// workflow's step after a failed or cancelled job) does the same from that file.
// D1 migrations are applied before this runs and must suit both versions
// (`npm run migrations:check`). Needs CLOUDFLARE_API_TOKEN (with Account Analytics Read)
// and CLOUDFLARE_ACCOUNT_ID. `--dry-run` uploads nothing: it builds and prints the steps.
// Tests replace wrangler (WRANGLER_SCRIPT, a script), the Cloudflare API (CLOUDFLARE_API_BASE_URL), the API's
// address (--base) and the state's directory (ROLLOUT_STATE_DIR).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { apiBaseUrl } from './lib/cloudflare-api.mjs';
import { HEALTH_PATH, readHealth, versionOverride } from './lib/health.mjs';
import {
  GATE,
  currentVersion,
  datasetOf,
  decide,
  errorRateQuery,
  uploadedVersion,
  versionCounts,
} from './lib/rollout.mjs';
import { root, runWrangler, sleep, wranglerOutput } from './lib/local-worker.mjs';
import { apiClient } from './lib/smoke.mjs';
import { customDomainOf, domainVariable, envSection, workerNameOf } from './lib/wrangler-env.mjs';

const { values: options } = parseArgs({
  options: {
    env: { type: 'string', default: 'production' },
    base: { type: 'string' },
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
    'Usage: node scripts/rollout.mjs --env staging|production [--base URL] [--percent 1-99] [--watch-minutes N] [--every-seconds N] [--dry-run | --restore]',
  );
  process.exit(2);
}

const log = (line) => console.log(`[rollout ${env}] ${line}`);
/** A duration for the log: seconds below two minutes. */
const duration = (ms) => (ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 6000) / 10} min`);
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

// Where the new version's health is asked, and under which Worker name its version override goes.
const section = envSection(readFileSync(join(root, 'wrangler.toml'), 'utf8'), env).text;
const workerName = workerNameOf(section);
const domain = customDomainOf(section);
if (!options.base && !domain) {
  console.error(
    `[rollout ${env}] wrangler.toml [env.${env}] has no custom domain route, so the new version's health has no ` +
      `address to be asked at. Run node scripts/cloudflare-provision.mjs ${env} with ${domainVariable(env)} ` +
      'set first (docs/operations.md#custom-domain), or give --base.',
  );
  process.exit(1);
}
const base = options.base ?? `https://${domain}`;
const call = apiClient(base);

/** A version's health, asked with its override: `{ answered, healthy, reason }` (no answer: `answered` false). */
async function health(version) {
  try {
    const answer = await call('GET', HEALTH_PATH, { headers: versionOverride(workerName, version) });
    return { answered: true, ...readHealth(answer, { version }) };
  } catch (error) {
    return { answered: false, healthy: false, reason: error.message };
  }
}

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
  log(`would upload a version (tag ${commit.slice(0, 12)}), deploy the routes, ask its health at ${base} at 0%,`);
  log(`give it ${percent}% beside ${previous ?? 'nothing'}, watch its 5xx rate and health for ${duration(watchMs)},`);
  log(`then 100% or back to ${previous}.`);
  wrangler(['versions', 'upload', '--dry-run']);
  log('dry run: the bundle builds; nothing uploaded.');
  process.exit(0);
}

const uploaded = uploadedVersion(
  wrangler(['versions', 'upload', '--tag', commit.slice(0, 12), '--message', `commit ${commit}`]),
);

/** Set once a signal asked to stop: the watch then decides nothing more (it could promote while the restore retries). */
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, async () => {
    stopping = true;
    process.exit((await restoreSplit(`stopped by ${signal}`)) ? 1 : 2);
  });

/**
 * Asks `version`'s health every interval until it answers, for at most the watch time: the override reaches a
 * version a few seconds after its deployment, and a custom domain attached just before needs its DNS record and
 * certificate. The last answer, or the last failure to get one.
 */
async function firstHealth(version) {
  const deadline = Date.now() + watchMs;
  for (;;) {
    await sleep(everyMs);
    const answer = await health(version);
    if (answer.answered || Date.now() >= deadline || stopping) return answer;
    log(`health: no answer yet (${answer.reason}); asking again.`);
  }
}

if (!previous) {
  // The first deploy of this Worker: there is nothing to compare with, and nothing to go back to.
  wrangler(['versions', 'deploy', `${uploaded}@100%`, '-y', '--message', 'first deploy']);
  wrangler(['triggers', 'deploy']);
  log(`first deploy: ${uploaded} at 100%.`);
  const first = await firstHealth(uploaded);
  log(`health: ${first.reason}`);
  if (first.healthy) process.exit(0);
  log('the first version is not healthy, and there is no previous version to go back to.');
  process.exit(1);
}

/** Gives the previous version 100% again and ends the rollout as rolled back. */
async function rollBack(reason) {
  if (await restoreSplit(reason)) log(`rolled back: ${uploaded} serves nothing.`);
  process.exit(1);
}

// Routes and crons belong to the Worker, not to a version: `versions deploy` leaves them as they were. Deployed
// now, the custom domain leads to the Worker before the new version's health is asked there; the crons run the
// same jobs in every version (src/index.ts `scheduled`).
wrangler(['triggers', 'deploy']);

// Before any request reaches it: at 0%, only a request with its version override does.
writeFileSync(stateFile, JSON.stringify({ previous, uploaded, percent: 0 }));
wrangler(['versions', 'deploy', `${uploaded}@0%`, `${previous}@100%`, '-y']);
log(`${uploaded} at 0%, ${previous} at 100%. Asking its health at ${base}.`);
const before = await firstHealth(uploaded);
// Stopped meanwhile: the signal's handler restores the previous version and exits; nothing more is decided here.
if (stopping) await new Promise(() => {});
if (!before.answered) {
  await rollBack(`its health gave no answer within ${duration(watchMs)} (${before.reason}): nothing vouches for it`);
}
if (!before.healthy) {
  // Said beside it: whether the version serving now answers the same (then D1, KV or a Durable Object is down for
  // every version, not broken by the new code; the new version goes back all the same, nothing vouches for it).
  const old = await health(previous);
  const also = old.answered && !old.healthy ? ` (the previous version's health fails too: ${old.reason})` : '';
  await rollBack(`before any traffic, its health: ${before.reason}${also}`);
}
log(`health before any traffic: ${before.reason}`);

writeFileSync(stateFile, JSON.stringify({ previous, uploaded, percent }));
wrangler(['versions', 'deploy', `${uploaded}@${percent}%`, `${previous}@${100 - percent}%`, '-y']);
log(`${uploaded} at ${percent}%, ${previous} at ${100 - percent}%. Watching for ${duration(watchMs)}.`);

const sqlUrl = `${apiBaseUrl()}/accounts/${process.env.CLOUDFLARE_ACCOUNT_ID}/analytics_engine/sql`;
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
  const [reading, now] = await Promise.all([read(), health(uploaded)]);
  if (stopping) break;
  const verdict = decide(reading, now, { done });
  log(`${verdict.action}: ${verdict.reason}`);
  if (verdict.action === 'promote') {
    if (!(await mustDeploy(`${uploaded}@100%`, `promoted: ${verdict.reason}`))) process.exit(1);
    rmSync(stateFile);
    log(`${uploaded} at 100%.`);
    process.exit(0);
  }
  if (verdict.action === 'rollback') await rollBack(verdict.reason);
}
