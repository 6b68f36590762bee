#!/usr/bin/env node
// npm run bench [-- --duration S] [--rounds N] [--connections N] [--channels N] [--only a,b] [--tool wrk|autocannon]
//                 [--var NAME=value ...]   (overrides a wrangler.toml var, e.g. --var READ_CACHE_MS=0)
//
// Bundles the Worker (`wrangler deploy --dry-run --outdir`), serves the bundle from
// Miniflare directly (no `wrangler dev` proxy), loads a synthetic catalogue through the
// API's own import, then drives each endpoint with wrk (Debian's package; autocannon
// when wrk is not installed), alternating with a baseline Worker on the same runtime
// that answers a fixed JSON body. Prints, per endpoint: requests/s, p50 and p99
// latency, errors, D1 queries/round trips/rows per request (from Server-Timing) and the
// ratio to the baseline; then the runtime's own ceilings (a Worker that makes one D1
// query, one KV read or one Durable Object call per request, nothing else); writes
// bench/results.md, bench/results.json and bench/results.svg.
import autocannon from 'autocannon';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { root, serverTiming } from './lib/local-api.mjs';
import { onShutdown, runWrangler } from './lib/local-worker.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : args[i + 1];
};
const DURATION = Number(option('duration', 4));
const ROUNDS = Number(option('rounds', 3));
const CONNECTIONS = Number(option('connections', 16));
const CHANNELS = Number(option('channels', 50_000));
const ONLY = option('only', '')?.split(',').filter(Boolean);
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const hasWrk = spawnSync('wrk', ['--version']).error === undefined;
const TOOL = option('tool', hasWrk ? 'wrk' : 'autocannon');
if (TOOL === 'wrk' && !hasWrk) throw new Error('wrk is not installed (apt-get install wrk), or pass --tool autocannon');

// Miniflare as wrangler resolves it: the version that matches wrangler's workerd.
const { Miniflare } = await import(
  createRequire(createRequire(import.meta.url).resolve('wrangler/package.json')).resolve('miniflare')
);

const out = `${root}/bench/out`;
mkdirSync(out, { recursive: true });

console.log('Bundling the Worker (wrangler deploy --dry-run)...');
const build = runWrangler(['deploy', '--dry-run', '--outdir', `${out}/bundle`], { stdio: 'ignore' });
if (build.status !== 0) throw new Error('wrangler deploy --dry-run failed');

const toml = readFileSync(`${root}/wrangler.toml`, 'utf8');
const compatibilityDate = /compatibility_date\s*=\s*"([^"]+)"/.exec(toml)[1];
const vars = Object.fromEntries(
  [
    ...toml
      .split('[vars]')[1]
      .split('\n[')[0]
      .matchAll(/^(\w+)\s*=\s*"([^"]*)"/gm),
  ].map((m) => [m[1], m[2]]),
);
const overrides = {};
args.forEach((arg, i) => {
  if (arg !== '--var') return;
  const [name, ...value] = (args[i + 1] ?? '').split('=');
  overrides[name] = vars[name] = value.join('=');
});

const worker = new Miniflare({
  host: '127.0.0.1',
  port: 0,
  modules: true,
  scriptPath: `${out}/bundle/index.js`,
  compatibilityDate,
  compatibilityFlags: ['nodejs_compat'],
  d1Databases: { DB: 'bench' },
  kvNamespaces: { TOKENS: 'bench' },
  durableObjects: {
    RATE_LIMITER: { className: 'RateLimiter', useSQLite: true },
    SEARCH_TRENDS: { className: 'SearchTrends', useSQLite: true },
    PLAY_COUNTER: { className: 'PlayCounter', useSQLite: true },
  },
  // The limiters stay on, their limits raised past any load (contract 10): their cost stays in the figures.
  bindings: {
    ...vars,
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    REGISTER_LIMIT_PER_HOUR: '1000000',
    RATE_LIMIT_PLAYS_PER_MINUTE: '100000000',
    RATE_LIMIT_WRITES_PER_MINUTE: '100000000',
    RATE_LIMIT_SEARCHES_PER_MINUTE: '100000000',
    RATE_LIMIT_READS_PER_MINUTE: '100000000',
    ...overrides,
  },
});
const baselineBody = JSON.stringify({
  success: true,
  message: 'Baseline.',
  data: { id: 1, name: 'Baseline', genres: [] },
});
const baseline = new Miniflare({
  host: '127.0.0.1',
  port: 0,
  modules: true,
  script: `export default { fetch() { return new Response(${JSON.stringify(baselineBody)}, { headers: { 'content-type': 'application/json; charset=UTF-8' } }); } };`,
  compatibilityDate,
});
// The runtime's ceilings: one I/O of each kind per request and nothing else, so an
// endpoint's figure can be read against what its I/O alone allows on this machine.
const probe = new Miniflare({
  host: '127.0.0.1',
  port: 0,
  modules: true,
  compatibilityDate,
  d1Databases: { DB: 'probe' },
  kvNamespaces: { KV: 'probe' },
  durableObjects: { PROBE: { className: 'Probe', useSQLite: true } },
  script: `import { DurableObject } from 'cloudflare:workers';
export class Probe extends DurableObject { ping() { return 1; } }
const headers = { 'content-type': 'application/json; charset=UTF-8' };
export default { async fetch(request, env) {
  const path = new URL(request.url).pathname;
  let data = null;
  if (path === '/d1') data = await env.DB.prepare('SELECT 1 AS one').first();
  else if (path === '/kv') data = await env.KV.get('key');
  else if (path === '/do') data = await env.PROBE.get(env.PROBE.idFromName('probe')).ping();
  return new Response(JSON.stringify({ success: true, message: 'Probe.', data }), { headers });
} };`,
});
// Interrupted or failed, the bench still takes its three runtimes down with it.
const disposeAll = () => Promise.allSettled([worker.dispose(), baseline.dispose(), probe.dispose()]);
const forgetCleanup = onShutdown(disposeAll);
const url = (await worker.ready).toString().replace(/\/$/, '');
const baselineUrl = (await baseline.ready).toString().replace(/\/$/, '');
const probeUrl = (await probe.ready).toString().replace(/\/$/, '');

try {
  console.log('Applying migrations...');
  const db = await worker.getD1Database('DB');
  for (const file of readdirSync(`${root}/drizzle/migrations`)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    for (const sql of readFileSync(`${root}/drizzle/migrations/${file}`, 'utf8').split('--> statement-breakpoint')) {
      if (sql.replace(/--.*$/gm, '').trim()) await db.prepare(sql).run();
    }
  }

  console.log(`Importing ${CHANNELS} synthetic channels through POST /api/v1/admin/radios/import...`);
  const file = `${out}/synthetic-${CHANNELS}.json`;
  execFileSync(process.execPath, [`${root}/scripts/generate-synthetic-catalogue.mjs`, String(CHANNELS), file], {
    stdio: 'ignore',
  });
  const stations = JSON.parse(readFileSync(file, 'utf8'));
  const started = Date.now();
  for (let i = 0; i < stations.length; i += 5000) {
    const response = await fetch(`${url}/api/v1/admin/radios/import`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(stations.slice(i, i + 5000)),
    });
    if (!response.ok) throw new Error(`import failed: ${response.status} ${await response.text()}`);
  }
  console.log(`  imported in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await db.prepare('UPDATE radio_channels SET is_featured = 1 WHERE id % 500 = 0').run();

  const api = async (method, path, token, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'Content-Type': 'application/json' } : {}),
        'CF-Connecting-IP': '10.0.0.1',
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  console.log('Creating users, plays, likes and a playlist...');
  const tokens = [];
  for (let i = 0; i < 40; i += 1) {
    const data = await api('POST', '/api/v1/auth/register', null, {
      name: `Bench ${i}`,
      email: `bench${i}@example.com`,
      password: 'benchmark-password',
      password_confirmation: 'benchmark-password',
    });
    tokens.push(data.token);
  }
  const channelIds = (await db.prepare('SELECT id FROM radio_channels ORDER BY id').all()).results.map((r) => r.id);
  const pick = (list, i) => list[i % list.length];
  for (let i = 0; i < 400; i += 1)
    await api('POST', `/api/v1/radios/${pick(channelIds, i * 7919)}/play`, pick(tokens, i));
  for (let i = 0; i < 200; i += 1)
    await api('POST', `/api/v1/radios/${pick(channelIds, i * 104_729)}/like`, pick(tokens, i));
  const playlist = await api('POST', '/api/v1/playlists', tokens[0], { name: 'Bench mix', is_public: true });
  for (let i = 0; i < 50; i += 1)
    await api('POST', `/api/v1/playlists/${playlist.id}/items`, tokens[0], {
      radio_channel_id: pick(channelIds, i * 31),
    });
  await new Promise((r) => setTimeout(r, Number(vars.PLAY_FLUSH_MS) + 1500)); // let the play counters flush

  const words = ['radio', 'sound', 'wave', 'classic', 'groove', 'metro', 'star', 'night', 'blue', 'prime'];
  const endpoints = [
    { name: 'genres', path: () => '/api/v1/genres', anonymous: true },
    { name: 'channel detail', path: (i) => `/api/v1/radios/${pick(channelIds, i * 7)}` },
    { name: 'list page (popular)', path: (i) => `/api/v1/radios?sort=popular&page=${1 + (i % 5)}` },
    { name: 'search', path: (i) => `/api/v1/search?q=${pick(words, i)}` },
    { name: 'suggestions', path: (i) => `/api/v1/search/suggestions?q=${pick(words, i).slice(0, 3)}` },
    { name: 'charts', path: () => '/api/v1/radios/charts?metric=plays&period=7d' },
    { name: 'trending', path: () => '/api/v1/radios/trending' },
    { name: 'play', method: 'POST', path: (i) => `/api/v1/radios/${pick(channelIds, i * 13)}/play` },
    { name: 'like toggle', method: 'POST', path: (i) => `/api/v1/radios/${pick(channelIds, i * 17)}/like` },
    { name: 'playlist detail', path: () => `/api/v1/playlists/${playlist.id}` },
  ].filter((e) => !ONLY?.length || ONLY.includes(e.name));

  const request = (endpoint, n) => ({
    method: endpoint?.method ?? 'GET',
    path: endpoint ? endpoint.path(n) : '/',
    headers: endpoint && !endpoint.anonymous ? { authorization: `Bearer ${pick(tokens, n)}` } : {},
  });
  const load = (target, endpoint, seconds = DURATION) =>
    TOOL === 'wrk' ? loadWithWrk(target, endpoint, seconds) : loadWithAutocannon(target, endpoint, seconds);
  const loadWithAutocannon = (target, endpoint, seconds) =>
    new Promise((resolve, reject) => {
      let n = 0;
      autocannon(
        {
          url: target,
          connections: CONNECTIONS,
          duration: seconds,
          requests: [{ setupRequest: (r) => (endpoint ? { ...r, ...request(endpoint, (n += 1)) } : r) }],
        },
        (error, result) =>
          error
            ? reject(error)
            : resolve({
                rps: result.requests.average,
                p50: result.latency.p50,
                p99: result.latency.p99,
                errors: result.errors + result.timeouts + result.non2xx,
              }),
      );
    });
  // wrk (one thread: the other core is the runtime's) cycles through 1,000 prepared requests.
  const loadWithWrk = async (target, endpoint, seconds) => {
    const script = `${out}/wrk-${endpoint ? endpoint.name.replace(/\W+/g, '-') : 'baseline'}.lua`;
    const requests = Array.from({ length: 1000 }, (_, i) => ({
      ...request(endpoint, i + 1),
      ...(endpoint ? {} : { path: new URL(target).pathname }),
    }));
    // Formatted in init(): wrk fills in the Host header only once the script has loaded.
    writeFileSync(
      script,
      `local specs = {\n${requests
        .map(
          (r) =>
            `  { ${JSON.stringify(r.method)}, ${JSON.stringify(r.path)}, {${Object.entries(r.headers)
              .map(([k, v]) => `[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
              .join(', ')}} },`,
        )
        .join(
          '\n',
        )}\n}\nlocal requests = {}\nlocal i = 0\nfunction init(args)\n  for n, spec in ipairs(specs) do requests[n] = wrk.format(spec[1], spec[2], spec[3]) end\nend\nfunction request()\n  i = i % #requests + 1\n  return requests[i]\nend\n`,
    );
    const { stdout } = await new Promise((resolve, reject) =>
      // A slow answer is a latency, not an error: wrk's 2 s timeout would count the runtime's tail as failures.
      execFile(
        'wrk',
        ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '--latency', '-s', script, target],
        (error, stdout) => (error ? reject(error) : resolve({ stdout })),
      ),
    );
    const ms = (label) => {
      const [, value, unit] = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(stdout) ?? [];
      return Math.round(Number(value) * ({ us: 0.001, ms: 1, s: 1000 }[unit] ?? NaN) * 100) / 100;
    };
    const count = (pattern) =>
      [...stdout.matchAll(pattern)].reduce((sum, m) => sum + m.slice(1).reduce((a, x) => a + Number(x), 0), 0);
    return {
      rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1]),
      p50: ms(50),
      p99: ms(99),
      errors:
        count(/Non-2xx or 3xx responses: (\d+)/g) +
        count(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/g),
    };
  };
  // Baseline and endpoint alternate ROUNDS times; the round with the median ratio is
  // reported, so one noisy run on a shared machine moves nothing.
  const alternate = async (runEndpoint) => {
    const rounds = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      const base = await load(baselineUrl);
      const run = await runEndpoint();
      rounds.push({ base, run, errors: run.errors });
    }
    rounds.sort((a, b) => a.run.rps / a.base.rps - b.run.rps / b.base.rps);
    const median = rounds[Math.floor(rounds.length / 2)];
    // Errors of every round count, not only the median's.
    return { base: median.base, run: { ...median.run, errors: rounds.reduce((sum, r) => sum + r.errors, 0) } };
  };

  const rows = [];
  for (const endpoint of endpoints) {
    const { base, run } = await alternate(() => load(url, endpoint));
    // D1 figures per request: 200 requests like the load's, sent 8 at a time while a
    // further 3-second load runs (steady state: the caches as the load keeps them).
    const samples = [];
    const sample = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (let i = 0; i < 200; i += 8) {
        const batch = Array.from({ length: 8 }, (_, j) => request(endpoint, i + j + 1));
        const responses = await Promise.all(
          // The operators' debug token: Server-Timing then carries the D1 counts.
          batch.map((r) =>
            fetch(`${url}${r.path}`, { method: r.method, headers: { ...r.headers, 'X-Debug-Token': ADMIN_TOKEN } }),
          ),
        );
        for (const response of responses) {
          await response.arrayBuffer();
          samples.push(serverTiming(response.headers));
        }
      }
    };
    await Promise.all([load(url, endpoint, 3), sample()]);
    const mean = (key) => samples.reduce((s, x) => s + x[key], 0) / samples.length;
    const row = {
      endpoint: endpoint.name,
      rps: Math.round(run.rps),
      p50: run.p50,
      p99: run.p99,
      errors: run.errors,
      queries: mean('queries'),
      roundTrips: mean('roundTrips'),
      maxRoundTrips: Math.max(...samples.map((x) => x.roundTrips)),
      rowsRead: Math.round(mean('rowsRead')),
      baselineRps: Math.round(base.rps),
      baselineP99: base.p99,
      ratio: run.rps / base.rps,
      target: endpoint.name === 'genres' ? 0.8 : 0.5,
    };
    rows.push(row);
    console.log(
      `${row.endpoint.padEnd(20)} ${String(row.rps).padStart(6)} req/s  p50 ${String(row.p50).padStart(3)} ms  p99 ${String(row.p99).padStart(4)} ms  ` +
        `errors ${row.errors}  D1 ${row.queries.toFixed(1)} q / ${row.roundTrips.toFixed(2)} rt (max ${row.maxRoundTrips}) / ${row.rowsRead} rows  ` +
        `baseline ${row.baselineRps} req/s  ratio ${row.ratio.toFixed(2)} (target ${row.target})`,
    );
  }

  for (const [name, path] of [
    ['ceiling: one D1 query', '/d1'],
    ['ceiling: one KV read', '/kv'],
    ['ceiling: one DO call', '/do'],
  ].filter(() => !ONLY?.length || ONLY.includes('ceilings'))) {
    const { base, run } = await alternate(() => load(`${probeUrl}${path}`));
    const row = {
      endpoint: name,
      rps: Math.round(run.rps),
      p50: run.p50,
      p99: run.p99,
      errors: run.errors,
      baselineRps: Math.round(base.rps),
      baselineP99: base.p99,
      ratio: run.rps / base.rps,
      target: null,
    };
    rows.push(row);
    console.log(
      `${name.padEnd(22)} ${String(row.rps).padStart(6)} req/s  baseline ${row.baselineRps} req/s  ratio ${row.ratio.toFixed(2)}`,
    );
  }

  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model?.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const date = new Date().toISOString().slice(0, 10);
  const table = [
    '| endpoint | req/s | p50 ms | p99 ms | errors | D1 queries | D1 round trips (max) | rows read | baseline req/s | ratio | target |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) =>
      r.target === null
        ? `| *${r.endpoint}* | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | | | | ${r.baselineRps} | ${r.ratio.toFixed(2)} | (runtime) |`
        : `| ${r.endpoint} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.queries.toFixed(2)} | ${r.roundTrips.toFixed(2)} (${r.maxRoundTrips}) | ${r.rowsRead} | ${r.baselineRps} | ${r.ratio.toFixed(2)} | ${r.ratio >= r.target ? '≥' : '<'} ${r.target} |`,
    ),
  ].join('\n');
  writeFileSync(
    `${root}/bench/results.md`,
    `# Benchmark\n\n${date}; ${machine}; ${CHANNELS} channels; ${Object.entries(overrides)
      .map(([k, v]) => `${k}=${v}; `)
      .join(
        '',
      )}${TOOL === 'wrk' ? 'wrk, 1 thread' : 'autocannon'}, ${CONNECTIONS} connections, ${DURATION} s per run, ` +
      `each endpoint run right after a baseline run (fixed JSON on the same workerd), ${ROUNDS} rounds, the round with the median ratio shown (errors: all rounds); bundle served by Miniflare directly. ` +
      `D1 figures: mean of 200 requests like the load's, sent during a further load; round trips also as the maximum seen. ` +
      `The *ceiling* rows are a Worker that makes one D1 query, one KV read or one Durable Object call per request and nothing else: ` +
      `what that I/O alone allows on this machine.\n\n${table}\n\n` +
      `The baseline's own p99 ranged ${Math.min(...rows.map((r) => r.baselineP99))}–${Math.max(...rows.map((r) => r.baselineP99))} ms in these runs: ` +
      `the tail is the runtime's queueing on this machine, not the endpoints'.\n\n![chart](results.svg)\n`,
  );
  writeFileSync(
    `${root}/bench/results.json`,
    JSON.stringify(
      {
        date,
        machine,
        tool: TOOL,
        overrides,
        channels: CHANNELS,
        connections: CONNECTIONS,
        duration: DURATION,
        rounds: ROUNDS,
        rows,
      },
      null,
      2,
    ),
  );
  writeFileSync(
    `${root}/bench/results.svg`,
    chart(rows, `${date} · ${CHANNELS} channels · ratio of requests/s to the baseline Worker`),
  );
  console.log(`\n${table}\n\nWritten: bench/results.md, bench/results.json, bench/results.svg`);
} finally {
  forgetCleanup();
  await disposeAll();
}

/** A horizontal bar chart of the ratios with each endpoint's target marked. */
function chart(rows, title) {
  const width = 760;
  const barHeight = 26;
  const left = 170;
  const scale = (width - left - 60) / Math.max(1, ...rows.map((r) => r.ratio));
  const bars = rows
    .map((r, i) => {
      const y = 40 + i * (barHeight + 8);
      const color = r.target === null ? '#8a8a8a' : r.ratio >= r.target ? '#2a9d5c' : '#d9534f';
      return `<text x="${left - 8}" y="${y + 18}" text-anchor="end">${r.endpoint}</text>
<rect x="${left}" y="${y}" width="${(r.ratio * scale).toFixed(1)}" height="${barHeight}" fill="${color}"/>
${r.target === null ? '' : `<line x1="${left + r.target * scale}" x2="${left + r.target * scale}" y1="${y - 2}" y2="${y + barHeight + 2}" stroke="#222" stroke-dasharray="3,2"/>`}
<text x="${left + r.ratio * scale + 6}" y="${y + 18}">${r.ratio.toFixed(2)} (${r.rps}/s)</text>`;
    })
    .join('\n');
  const height = 60 + rows.length * (barHeight + 8);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="13">
<rect width="100%" height="100%" fill="#fff"/><text x="10" y="22" font-weight="bold">${title}</text>
${bars}
</svg>
`;
}
