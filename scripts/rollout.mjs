#!/usr/bin/env node
// node scripts/rollout.mjs --env production [--percent 10] [--watch-minutes 5] [--dry-run]
//
// A gradual production deploy: upload the new Worker version, give it `--percent` of the
// requests beside the version serving now, read both versions' 5xx rates from the
// metrics (Workers Analytics Engine, src/lib/metrics.ts) every 30 s, then give it 100%,
// or give the previous version 100% again as soon as the new one's error rate fails the
// gate (scripts/lib/rollout.mjs `judge`). Exit 0 when promoted, 1 when rolled back.
// D1 migrations are applied before this runs and must suit both versions
// (`npm run migrations:check`). Needs CLOUDFLARE_API_TOKEN (with Account Analytics Read)
// and CLOUDFLARE_ACCOUNT_ID. `--dry-run` uploads nothing: it prints the steps.
// Tests replace wrangler (ROLLOUT_WRANGLER, a script) and the SQL API (ROLLOUT_SQL_URL).
import { parseArgs } from 'node:util';
import {
  GATE,
  currentVersion,
  datasetOf,
  deployWrangler,
  errorRateQuery,
  judge,
  uploadedVersion,
  versionCounts,
} from './lib/rollout.mjs';

const { values: options } = parseArgs({
  options: {
    env: { type: 'string', default: 'production' },
    percent: { type: 'string', default: String(GATE.percent) },
    'watch-minutes': { type: 'string', default: String(GATE.watchMs / 60_000) },
    'every-seconds': { type: 'string', default: String(GATE.everyMs / 1000) },
    'dry-run': { type: 'boolean', default: false },
  },
});
const env = options.env;
const percent = Number(options.percent);
if (!['staging', 'production'].includes(env) || !(percent > 0 && percent < 100)) {
  console.error('Usage: node scripts/rollout.mjs --env staging|production [--percent 1-99] [--watch-minutes N]');
  process.exit(2);
}
const watchMs = Number(options['watch-minutes']) * 60_000;
const everyMs = Number(options['every-seconds']) * 1000;
const dryRun = options['dry-run'];

/** Runs wrangler; its stdout, or an exit with its output. */
function wrangler(args) {
  const run = deployWrangler([...args, '--env', env]);
  if (run.status !== 0) {
    process.stderr.write(`${run.stdout}${run.stderr}`);
    console.error(`wrangler ${args.slice(0, 2).join(' ')} failed.`);
    process.exit(1);
  }
  return run.stdout;
}

const log = (line) => console.log(`[rollout ${env}] ${line}`);
const commit = process.env.GITHUB_SHA ?? 'local';

const previous = currentVersion(wrangler(['deployments', 'status', '--json']));
if (dryRun) {
  log(`would upload a version (tag ${commit.slice(0, 12)}), give it ${percent}% beside ${previous ?? 'nothing'},`);
  log(`watch its 5xx rate for ${watchMs / 60_000} min against the gate, then 100% or back to ${previous}.`);
  wrangler(['versions', 'upload', '--dry-run']);
  log('dry run: the bundle builds; nothing uploaded.');
  process.exit(0);
}
const uploaded = uploadedVersion(
  wrangler(['versions', 'upload', '--tag', commit.slice(0, 12), '--message', `commit ${commit}`]),
);
if (!previous) {
  // The first deploy of this Worker: there is nothing to compare with.
  wrangler(['versions', 'deploy', `${uploaded}@100%`, '-y', '--message', 'first deploy']);
  log(`first deploy: ${uploaded} at 100%.`);
  process.exit(0);
}
wrangler(['versions', 'deploy', `${uploaded}@${percent}%`, `${previous}@${100 - percent}%`, '-y']);
log(`${uploaded} at ${percent}%, ${previous} at ${100 - percent}%. Watching for ${watchMs / 60_000} min.`);

const sqlUrl =
  process.env.ROLLOUT_SQL_URL ??
  `https://api.cloudflare.com/client/v4/accounts/${process.env.CLOUDFLARE_ACCOUNT_ID}/analytics_engine/sql`;
const startedAt = Date.now();
/** Both versions' counts since the split began; a failed read counts as none (the watch goes on). */
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
    log(`metrics not read (${error.message}); the watch goes on.`);
    return { candidate: { requests: 0, errors: 0 }, current: { requests: 0, errors: 0 } };
  }
}

for (;;) {
  await new Promise((resolve) => setTimeout(resolve, everyMs));
  const done = Date.now() - startedAt >= watchMs;
  const verdict = judge(await read(), { done });
  log(`${verdict.action}: ${verdict.reason}`);
  if (verdict.action === 'promote') {
    wrangler(['versions', 'deploy', `${uploaded}@100%`, '-y', '--message', `promoted: ${verdict.reason}`]);
    log(`${uploaded} at 100%.`);
    process.exit(0);
  }
  if (verdict.action === 'rollback') {
    wrangler(['versions', 'deploy', `${previous}@100%`, '-y', '--message', `rolled back: ${verdict.reason}`]);
    log(`rolled back: ${previous} at 100% again; ${uploaded} serves nothing.`);
    process.exit(1);
  }
}
