#!/usr/bin/env node
// npm run bench:cpu [-- --ref <ref, or . for the working tree> ...] [--requests N --rounds N --channels N --only a,b]
// Builds side by side: each ref bundled and served on its own, loaded alike, sent the same requests in alternating
// rounds; the workerd process's CPU per request (/proc), median of the rounds. Writes bench/cpu.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ADMIN_TOKEN,
  Miniflare,
  SEARCH_WORDS as words,
  applyMigrations,
  loadBenchData,
  pick,
  workerOptions,
  wranglerConfig,
} from './lib/bench-data.mjs';
import { root } from './lib/local-api.mjs';
import { cpuMicros, workerdChildren } from './lib/workerd-stats.mjs';
import { onShutdown, runWrangler } from './lib/local-worker.mjs';

const { values: options } = parseArgs({
  options: {
    ref: { type: 'string', multiple: true, default: [] },
    requests: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    channels: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    only: { type: 'string', default: '' },
  },
});
const refs = options.ref;
const REQUESTS = Number(options.requests);
const ROUNDS = Number(options.rounds);
const CHANNELS = Number(options.channels);
const CONCURRENCY = Number(options.concurrency);
const ONLY = options.only.split(',').filter(Boolean);
const USERS = 20;
const WARM = 500;

const out = `${root}/bench/out`;
mkdirSync(out, { recursive: true });
const worktrees = [];
const builds = [];
/** Removes the worktrees (synchronously: also from an 'exit' handler, where nothing async runs). */
const removeWorktrees = () => {
  for (const dir of worktrees.splice(0)) {
    spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
    rmSync(dir, { recursive: true, force: true });
  }
};
// Miniflare's own signal handling may end the process before an async cleanup is done.
process.on('exit', removeWorktrees);
const cleanup = async () => {
  await Promise.allSettled(builds.map((b) => b.mf.dispose()));
  removeWorktrees();
};
const forgetCleanup = onShutdown(cleanup);

/** A tree to build: the working tree, or `ref` checked out beside it (sharing node_modules). */
function treeOf(ref) {
  if (!ref || ref === '.') return { label: 'working tree', dir: root };
  const dir = mkdtempSync(join(os.tmpdir(), 'radio-bench-cpu-'));
  worktrees.push(dir);
  execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: root, stdio: 'ignore' });
  symlinkSync(`${root}/node_modules`, `${dir}/node_modules`);
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: root, encoding: 'utf8' }).trim();
  return { label: `${ref} (${commit})`, dir };
}

async function build(ref) {
  const tree = treeOf(ref);
  console.log(`Bundling ${tree.label}...`);
  const bundle = `${out}/cpu-bundle-${builds.length}`;
  const result = runWrangler(['deploy', '--dry-run', '--outdir', bundle], { cwd: tree.dir, stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`wrangler deploy --dry-run failed for ${tree.label}`);
  const config = wranglerConfig(tree.dir);
  const before = new Set(workerdChildren());
  const mf = new Miniflare(
    workerOptions({ scriptPath: `${bundle}/index.js`, config, storage: 'cpu', adminToken: ADMIN_TOKEN }),
  );
  const entry = {
    label: tree.label,
    dir: tree.dir,
    mf,
    flushMs: Number(config.vars.PLAY_FLUSH_MS ?? 0),
  };
  builds.push(entry);
  entry.url = (await mf.ready).toString().replace(/\/$/, '');
  const started = workerdChildren().filter((pid) => !before.has(pid));
  if (started.length !== 1) throw new Error(`expected one new workerd process, found ${started.length}`);
  entry.pid = started[0];
  return entry;
}

/** Migrations, the synthetic catalogue, users, plays, likes and a public playlist (as `npm run bench` loads them). */
async function prepare(entry, stations) {
  const db = await entry.mf.getD1Database('DB');
  await applyMigrations(db, `${entry.dir}/drizzle/migrations`);
  const data = await loadBenchData({
    url: entry.url,
    db,
    adminToken: ADMIN_TOKEN,
    stations,
    users: USERS,
    plays: 200,
    likes: 100,
    featuredEvery: 100,
    flushMs: entry.flushMs,
  });
  Object.assign(entry, data);
}

/** The endpoints of `npm run bench`, with paths every build answers. */
const endpoints = [
  { name: 'genres', path: () => '/api/v1/genres', anonymous: true },
  { name: 'channel detail (50 channels)', path: (b, i) => `/api/v1/radios/${pick(b.channelIds, (i % 50) * 37)}` },
  { name: 'list page (popular)', path: (b, i) => `/api/v1/radios?sort=popular&page=${1 + (i % 5)}` },
  { name: 'search', path: (b, i) => `/api/v1/search?q=${pick(words, i)}` },
  { name: 'suggestions', path: (b, i) => `/api/v1/search/suggestions?q=${pick(words, i).slice(0, 3)}` },
  { name: 'charts', path: () => '/api/v1/radios/charts?metric=plays&period=7d' },
  { name: 'trending', path: () => '/api/v1/radios/trending' },
  { name: 'playlist detail', path: (b) => `/api/v1/playlists/${b.playlistId}` },
  {
    name: 'play (random channels)',
    method: 'POST',
    path: (b, i) => `/api/v1/radios/${pick(b.channelIds, i * 7919)}/play`,
  },
  { name: 'like toggle', method: 'POST', path: (b, i) => `/api/v1/radios/${pick(b.channelIds, i * 104_729)}/like` },
].filter((e) => !ONLY.length || ONLY.includes(e.name));

/** Sends `count` requests of `endpoint` to build `b`, CONCURRENCY at a time; answers how many were not 2xx. */
async function send(b, endpoint, count, offset) {
  let failures = 0;
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = offset + next++;
      const response = await fetch(`${b.url}${endpoint.path(b, i)}`, {
        method: endpoint.method ?? 'GET',
        headers: endpoint.anonymous ? {} : { Authorization: `Bearer ${pick(b.tokens, i * 7 + 3)}` },
      });
      await response.arrayBuffer();
      if (!response.ok) failures += 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return failures;
}

const median = (runs) => [...runs].sort((x, y) => x.micros - y.micros)[Math.floor(runs.length / 2)];

async function measure(b, endpoint, round) {
  await send(b, endpoint, WARM, round * 100_000); // warm: JIT, caches as a steady load keeps them
  const before = cpuMicros(b.pid);
  const failures = await send(b, endpoint, REQUESTS, round * 100_000 + WARM);
  return { micros: (cpuMicros(b.pid) - before) / REQUESTS, failures };
}

try {
  const file = `${out}/synthetic-${CHANNELS}.json`;
  execFileSync(process.execPath, [`${root}/scripts/generate-synthetic-catalogue.mjs`, String(CHANNELS), file], {
    stdio: 'ignore',
  });
  const stations = JSON.parse(readFileSync(file, 'utf8'));
  for (const ref of refs.length ? refs : [undefined]) await build(ref);
  // The runtime's own cost per request (HTTP, Miniflare's entry Worker): a Worker that answers fixed JSON.
  const before = new Set(workerdChildren());
  const baselineMf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    modules: true,
    compatibilityDate: wranglerConfig(root).compatibilityDate,
    script: `export default { fetch() { return Response.json({ success: true, message: 'Baseline.', data: null }); } };`,
  });
  builds.push({ mf: baselineMf }); // disposed with the others
  const baseline = {
    url: (await baselineMf.ready).toString().replace(/\/$/, ''),
    pid: workerdChildren().find((pid) => !before.has(pid)),
    tokens: [''],
  };
  const baselineEndpoint = { name: 'fixed-JSON Worker', path: () => '/', anonymous: true };
  const measured = builds.filter((b) => b.label);
  for (const b of measured) {
    console.log(`Loading ${b.label}...`);
    await prepare(b, stations);
  }
  const baselineRuns = [];
  const results = endpoints.map((endpoint) => ({ endpoint, perBuild: measured.map(() => []) }));
  for (let round = 0; round < ROUNDS; round += 1) {
    baselineRuns.push(await measure(baseline, baselineEndpoint, round));
    console.log(
      `round ${round + 1}  ${'fixed-JSON Worker'.padEnd(55)} ${baselineRuns.at(-1).micros.toFixed(0).padStart(6)} µs`,
    );
    for (const result of results)
      for (const [i, b] of measured.entries()) {
        const run = await measure(b, result.endpoint, round);
        result.perBuild[i].push(run);
        console.log(
          `round ${round + 1}  ${result.endpoint.name.padEnd(30)} ${b.label.padEnd(24)} ${run.micros.toFixed(0).padStart(6)} µs${run.failures ? `  (${run.failures} not 2xx)` : ''}`,
        );
      }
  }
  const base = median(baselineRuns).micros;
  const many = measured.length > 1;
  const header =
    `| endpoint | ${measured.map((b) => `${b.label} µs`).join(' | ')} |` +
    (many ? " change (last ÷ first) | change of the code's share (above the fixed-JSON Worker) |" : '');
  const lines = results.map(({ endpoint, perBuild }) => {
    const medians = perBuild.map((runs) => median(runs));
    const cells = medians.map((m) =>
      m.failures ? `${m.micros.toFixed(0)} (${m.failures} not 2xx)` : m.micros.toFixed(0),
    );
    const [first, last] = [medians[0].micros, medians.at(-1).micros];
    const percent = (x) => `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
    const change = many ? ` ${percent(last / first - 1)} | ${percent((last - first) / (first - base))} |` : '';
    return `| ${endpoint.name} | ${cells.join(' | ')} |${change}`;
  });
  const report =
    `# CPU per request\n\n${new Date().toISOString().slice(0, 10)}; ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}; ` +
    `${CHANNELS} channels, ${USERS} users; ${REQUESTS} requests per endpoint and build, ${CONCURRENCY} at a time, after ${WARM} to warm up; ` +
    `${ROUNDS} rounds alternating the builds, median. User + system CPU time of the build's workerd process (/proc) divided by the requests: ` +
    `the Worker, its Durable Objects and the simulated D1 and KV. A Worker that answers fixed JSON costs ${base.toFixed(0)} µs per request here (HTTP and Miniflare's entry Worker).\n\n` +
    `${header}\n|---|${measured.map(() => '---|').join('')}${many ? '---|---|' : ''}\n${lines.join('\n')}\n`;
  writeFileSync(`${root}/bench/cpu.md`, report);
  console.log(`\n${report}`);
} finally {
  await cleanup();
  forgetCleanup();
}
