#!/usr/bin/env node
// node scripts/bench-search.mjs [SMALL] [LARGE] [REQUESTS]: search at two catalogue sizes (docs/performance.md#search-at-scale),
// each in a local D1 of its own through `wrangler dev`; writes bench/search.md. BENCH_WORK_DIR and BENCH_SEARCH_REPORT
// move its state (default bench/out) and report (default bench/search.md): the scripts test runs it small.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import {
  devVar,
  ensureDevVars,
  importStations,
  migrateLocal,
  registerUser,
  root,
  serverTiming,
  startLocalWorker,
} from './lib/local-api.mjs';

const [small, large, requests] = [
  Number(process.argv[2] ?? 1000),
  Number(process.argv[3] ?? 100_000),
  Number(process.argv[4] ?? 40),
];
const queries = [
  ['/api/v1/search?q=radio', 'common word (search)'],
  ['/api/v1/search?q=sound%20wave%20777', 'several words (search)'],
  ['/api/v1/search?q=lass', 'inside words (search)'],
  ['/api/v1/search?q=sk', 'two characters (search)'],
  ['/api/v1/search/suggestions?q=met', 'suggestions'],
  ['/api/v1/radios?search=groove&per_page=20', 'GET /radios?search='],
];

ensureDevVars();
const token = devVar('ADMIN_TOKEN');
const workDir = process.env.BENCH_WORK_DIR ?? `${root}/bench/out`;
const reportFile = process.env.BENCH_SEARCH_REPORT ?? `${root}/bench/search.md`;
mkdirSync(workDir, { recursive: true });

async function measure(size) {
  const file = `${workDir}/synthetic-${size}.json`;
  execFileSync(process.execPath, [`${root}/scripts/generate-synthetic-catalogue.mjs`, String(size), file], {
    stdio: 'ignore',
  });
  const persist = `${workDir}/state-search-${size}`;
  rmSync(persist, { recursive: true, force: true });
  migrateLocal(['--persist-to', persist]);
  // SHARED_LIST_MAX_AGE=0 (wrangler.toml's local value, set here in case it changes): the search itself, every time.
  const worker = await startLocalWorker(['--persist-to', persist, '--var', 'SHARED_LIST_MAX_AGE:0']);
  console.log(`${size} channels: ${worker.url} (process group ${worker.pgid})`);
  try {
    await importStations({ url: worker.url, token, stations: JSON.parse(readFileSync(file, 'utf8')) });
    // The searches limit (120 a minute per user in wrangler.toml): each user sends at most 100 of them.
    const users = [];
    for (let i = 0; i < Math.ceil((queries.length * (requests + 3)) / 100); i += 1)
      users.push(await registerUser(worker.url));
    let sent = 0;
    const results = {};
    for (const [path] of queries) {
      const times = [];
      let timing;
      for (let i = 0; i < requests + 3; i += 1) {
        const started = performance.now();
        const user = users[Math.floor(sent++ / 100)];
        const response = await fetch(`${worker.url}${path}`, {
          headers: { Authorization: `Bearer ${user}`, 'X-Debug-Token': token },
        });
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`${path}: ${response.status}`);
        if (i >= 3) times.push(performance.now() - started); // the first requests warm up
        timing = serverTiming(response.headers);
      }
      times.sort((a, b) => a - b);
      results[path] = {
        mean: times.reduce((a, b) => a + b, 0) / times.length,
        p95: times[Math.max(0, Math.ceil(times.length * 0.95) - 1)],
        rowsRead: timing.rowsRead,
      };
    }
    return results;
  } finally {
    await worker.stop();
  }
}

const smallResults = await measure(small);
const largeResults = await measure(large);
const lines = [
  `| query | ${small} ch. mean ms | ${small} rows read | ${large} ch. mean ms | ${large} p95 ms | ${large} rows read | time ratio |`,
  '|---|---|---|---|---|---|---|',
  ...queries.map(([path, label]) => {
    const s = smallResults[path];
    const l = largeResults[path];
    return `| ${label} | ${s.mean.toFixed(1)} | ${s.rowsRead} | ${l.mean.toFixed(1)} | ${l.p95.toFixed(1)} | ${l.rowsRead} | ${(l.mean / s.mean).toFixed(2)} |`;
  }),
];
const report = `# Search at ${small} and ${large} channels\n\n${new Date().toISOString().slice(0, 10)}, ${requests} sequential requests per query, through \`wrangler dev\` on this machine.\n\n${lines.join('\n')}\n`;
writeFileSync(reportFile, report);
console.log(report);
