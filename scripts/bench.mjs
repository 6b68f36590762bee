#!/usr/bin/env node
// npm run bench [-- --duration S] [--rounds N] [--connections N] [--channels N] [--only a,b] [--tool wrk|autocannon]
//                 [--var NAME=value ...]   (overrides a wrangler.toml var, e.g. --var READ_CACHE_MS=0)
//
// Bundles the Worker (`wrangler deploy --dry-run --outdir`), serves the bundle from
// Miniflare directly (no `wrangler dev` proxy), loads a synthetic catalogue through the
// API's own import, then drives each endpoint with wrk (Debian's package; autocannon
// when wrk is not installed), alternating with a baseline Worker on the same runtime
// that answers a fixed JSON body, and measures the runtime's own ceilings in the same
// run: a Worker that makes one D1 query, one D1 batch write, one KV read or one Durable
// Object call per request and nothing else. Each endpoint declares the I/O it must do on
// a cache miss and is compared with that ceiling; reads run twice, with the read caches
// as shipped and with `READ_CACHE_MS=0` (a second Worker), and each read also against its own
// I/O alone: a Worker that only sends its answers (caches on) or only runs its SQL as
// logged at LOG_LEVEL=debug (caches off). A mix (list pages with one like in ten) is
// compared with its parts measured alone. Then rows read per request
// (D1's own counts, through the debug header) at 1,000 and 100,000 channels, caches off.
// Writes bench/results.md, bench/results.json and bench/results.svg.
import autocannon from 'autocannon';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
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
import { root, serverTiming } from './lib/local-api.mjs';
import { onShutdown, runWrangler } from './lib/local-worker.mjs';

const { values: options } = parseArgs({
  options: {
    duration: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    channels: { type: 'string', default: '50000' },
    only: { type: 'string', default: '' },
    tool: { type: 'string' },
    var: { type: 'string', multiple: true, default: [] },
  },
});
const DURATION = Number(options.duration);
const ROUNDS = Number(options.rounds);
const CONNECTIONS = Number(options.connections);
const CHANNELS = Number(options.channels);
const ONLY = options.only.split(',').filter(Boolean);
const hasWrk = spawnSync('wrk', ['--version']).error === undefined;
const TOOL = options.tool ?? (hasWrk ? 'wrk' : 'autocannon');
if (TOOL === 'wrk' && !hasWrk) throw new Error('wrk is not installed (apt-get install wrk), or pass --tool autocannon');

const out = `${root}/bench/out`;
mkdirSync(out, { recursive: true });

console.log('Bundling the Worker (wrangler deploy --dry-run)...');
const build = runWrangler(['deploy', '--dry-run', '--outdir', `${out}/bundle`], { stdio: 'ignore' });
if (build.status !== 0) throw new Error('wrangler deploy --dry-run failed');

const config = wranglerConfig(root);
const { compatibilityDate, vars } = config;
const overrides = {};
for (const assignment of options.var) {
  const [name, ...value] = assignment.split('=');
  overrides[name] = vars[name] = value.join('=');
}

/** Miniflare options of the Worker's bundle, with its own storage; `extra` overrides vars. */
const apiOptions = (extra = {}) =>
  workerOptions({
    scriptPath: `${out}/bundle/index.js`,
    config,
    storage: 'bench',
    adminToken: ADMIN_TOKEN,
    bindings: { ...overrides, ...extra },
  });
const startWorker = (extra = {}) => new Miniflare(apiOptions(extra));
const worker = startWorker();
// The Worker with READ_CACHE_MS=0, and beside it on the same D1 (requests with `Host:
// replay.bench`) a Worker that only replays the statements each of its reads ran, in
// the same round trips: the ceiling of that read's own I/O. The statements are taken
// from the Worker's own log at LOG_LEVEL=debug (setOptions keeps the storage).
const REPLAY_HOST = 'replay.bench';
let runtimeOutput = null; // collects the runtime's stdout while not null
const uncachedOptions = ({ logLevel = 'silent', plans = {} } = {}) => {
  const { host, port, ...api } = apiOptions({ READ_CACHE_MS: '0', LOG_LEVEL: logLevel });
  return {
    host,
    port,
    handleRuntimeStdio(stdout, stderr) {
      stdout.setEncoding('utf8');
      stdout.on('data', (chunk) => {
        if (runtimeOutput !== null) runtimeOutput += chunk;
      });
      stderr.pipe(process.stderr);
    },
    workers: [
      { name: 'api', ...api },
      {
        name: 'replay',
        modules: true,
        compatibilityDate,
        d1Databases: { DB: 'bench' },
        routes: [`${REPLAY_HOST}/*`],
        script: `const PLANS = ${JSON.stringify(plans)};
export default { async fetch(request, env) {
  const plan = PLANS[new URL(request.url).searchParams.get('plan')];
  if (!plan) return new Response('no such plan', { status: 404 });
  const db = env.DB.withSession('first-unconstrained');
  for (const trip of plan) await db.batch(trip.map((s) => db.prepare(s.sql).bind(...s.params)));
  return new Response('{"success":true,"message":"Replayed.","data":null}', { headers: { 'content-type': 'application/json; charset=UTF-8' } });
} };`,
      },
    ],
  };
};
const uncachedWorker = new Miniflare(uncachedOptions());
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
export class Probe extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS plays (user_id INTEGER, channel_id INTEGER, n INTEGER, PRIMARY KEY (user_id, channel_id))');
  }
  ping() { return 1; }
  // One row written durably (the answer waits for the commit): the least a play that must not be lost does.
  write(userId, channelId) {
    this.ctx.storage.sql.exec('INSERT INTO plays VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET n = n + 1', userId, channelId);
    return 1;
  }
}
const headers = { 'content-type': 'application/json; charset=UTF-8' };
export default { async fetch(request, env) {
  const path = new URL(request.url).pathname;
  let data = null;
  if (path === '/d1') data = await env.DB.prepare('SELECT 1 AS one').first();
  else if (path === '/d1-batch') {
    const n = Math.floor(Math.random() * 1000);
    await env.DB.batch([
      env.DB.prepare('INSERT INTO probe_rows (n) VALUES (?)').bind(n),
      env.DB.prepare('UPDATE probe_counts SET count = count + 1 WHERE id = ?').bind(n % 10),
    ]);
  }
  else if (path === '/kv') data = await env.KV.get('key');
  else if (path === '/do') data = await env.PROBE.get(env.PROBE.idFromName('probe')).ping();
  else if (path === '/do-write')
    data = await env.PROBE.get(env.PROBE.idFromName('probe')).write(Math.floor(Math.random() * 100), Math.floor(Math.random() * 50000));
  return new Response(JSON.stringify({ success: true, message: 'Probe.', data }), { headers });
} };`,
});
// Interrupted or failed, the bench still takes its runtimes down with it.
const scaleWorkers = [];
const answerWorkers = [];
const disposeAll = () =>
  Promise.allSettled(
    [worker, uncachedWorker, baseline, probe, ...answerWorkers, ...scaleWorkers].map((w) => w.dispose()),
  );
const forgetCleanup = onShutdown(disposeAll);
const urlOf = async (w) => (await w.ready).toString().replace(/\/$/, '');
const baselineUrl = (await baseline.ready).toString().replace(/\/$/, '');
const probeUrl = (await probe.ready).toString().replace(/\/$/, '');

try {
  const probeDb = await probe.getD1Database('DB');
  await probeDb.exec('CREATE TABLE probe_rows (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
  await probeDb.exec('CREATE TABLE probe_counts (id INTEGER PRIMARY KEY, count INTEGER NOT NULL)');
  for (let i = 0; i < 10; i += 1) await probeDb.prepare('INSERT INTO probe_counts VALUES (?, 0)').bind(i).run();

  /**
   * One Worker made ready as a deployment would be: migrations, a synthetic catalogue of
   * `channels` through the API's own import, `USERS` accounts, plays, likes and a public
   * playlist of 50 channels.
   */
  const USERS = 100;
  const prepare = async (mf, channels) => {
    const base = await urlOf(mf);
    const db = await mf.getD1Database('DB');
    await applyMigrations(db, `${root}/drizzle/migrations`);
    const file = `${out}/synthetic-${channels}.json`;
    execFileSync(process.execPath, [`${root}/scripts/generate-synthetic-catalogue.mjs`, String(channels), file], {
      stdio: 'ignore',
    });
    const started = Date.now();
    const data = await loadBenchData({
      url: base,
      db,
      adminToken: ADMIN_TOKEN,
      stations: JSON.parse(readFileSync(file, 'utf8')),
      users: USERS,
      plays: 400,
      likes: 200,
      featuredEvery: 500,
      flushMs: Number(vars.PLAY_FLUSH_MS),
    });
    console.log(`  ${channels} channels and ${USERS} users loaded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { url: base, ...data };
  };
  /** A fixed pseudo-random sequence (mulberry32), so that every run plays the same "random" channels. */
  const random = (seed) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  console.log('Preparing the Worker as shipped, and one with READ_CACHE_MS=0...');
  const [shipped, uncached] = await Promise.all([prepare(worker, CHANNELS), prepare(uncachedWorker, CHANNELS)]);

  /**
   * Ranks 0..n-1 drawn from a Zipf distribution (s = 1): listening, and so the channels
   * apps open, concentrates on few stations (the top 100 of 50,000 take ~45%).
   */
  const zipf = (n, next) => {
    const cdf = new Float64Array(n);
    let sum = 0;
    for (let k = 0; k < n; k += 1) cdf[k] = sum += 1 / (k + 1);
    return () => {
      const u = next() * sum;
      let [lo, hi] = [0, n - 1];
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cdf[mid] < u) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
  };

  // `io`: what the endpoint must do on a cache miss (its ceiling); `target`: against the baseline or that ceiling.
  const reads = (setup) => {
    const rank = zipf(setup.channelIds.length, random(7));
    // One channel per prepared request (wrk cycles through 5,000), the same in every run.
    const detailIds = Array.from({ length: 5000 }, () => setup.channelIds[rank()]);
    return [
      { name: 'genres', path: () => '/api/v1/genres', anonymous: true, io: 'd1' },
      { name: 'channel detail', path: (i) => `/api/v1/radios/${pick(detailIds, i - 1)}`, io: 'd1' },
      {
        name: 'list page (popular)',
        path: (i) => `/api/v1/radios?sort=popular&page=${1 + (i % 5)}`,
        io: 'd1',
        items: 20,
        page: true,
      },
      { name: 'search', path: (i) => `/api/v1/search?q=${pick(words, i)}`, io: 'd1' },
      { name: 'suggestions', path: (i) => `/api/v1/search/suggestions?q=${pick(words, i).slice(0, 3)}`, io: 'd1' },
      {
        name: 'charts',
        path: () => '/api/v1/radios/charts?metric=plays&period=7d',
        io: 'd1',
        items: 50,
        page: true,
        // On a miss, one call to each of the 8 play counters (docs/scale.md#price-per-million-requests).
        price: { doCalls: 8 },
      },
      {
        name: 'trending',
        path: () => '/api/v1/radios/trending',
        io: 'd1',
        items: 20,
        page: true,
        price: { doCalls: 8 },
      },
      // The bench's playlist holds 50 channels (scripts/lib/bench-data.mjs).
      { name: 'playlist detail', path: () => `/api/v1/playlists/${setup.playlistId}`, io: 'd1', items: 50, page: true },
      {
        name: 'nearby',
        path: (i) =>
          `/api/v1/radios/nearby?lat=${(51.5 + (i % 7) * 0.1).toFixed(1)}&lng=-0.1&radius_km=${50 * (1 + (i % 4))}`,
        io: 'd1',
      },
    ];
  };
  const writes = (setup) => {
    const next = random(42);
    const channel = () => setup.channelIds[Math.floor(next() * setup.channelIds.length)];
    return [
      // Random channels among all of them (not one hot channel), random users.
      // Its target is against the least a play that must not be lost does (one DO call that writes a row); `also`: a plain call.
      {
        name: 'play (random channels)',
        method: 'POST',
        path: () => `/api/v1/radios/${channel()}/play`,
        io: 'do-write',
        also: 'do',
        // What the counter writes per play in its own SQLite (billed as D1 rows): docs/scale.md#price-per-million-requests.
        price: { doCalls: 1, doRowsWritten: 5 },
      },
      { name: 'like toggle', method: 'POST', path: () => `/api/v1/radios/${channel()}/like`, io: 'd1-batch' },
      // Likes among cached reads: a like must not cost other callers their cached answers.
      // Its ceiling: its parts measured alone above, in the same shares (`parts`).
      {
        name: 'mix: list pages and 1 like in 10',
        method: (n) => (n % 10 === 0 ? 'POST' : 'GET'),
        path: (n) =>
          n % 10 === 0 ? `/api/v1/radios/${channel()}/like` : `/api/v1/radios?sort=popular&page=${1 + (n % 5)}`,
        io: 'parts',
        // Each user sends ten requests in a row, a like then nine reads: the likers read too.
        user: (n) => Math.floor(n / 10) * 7 + 3,
        parts: [
          ['list page (popular)', 0.9],
          ['like toggle', 0.1],
        ],
      },
    ];
  };
  // The targets of docs/performance.md: each request against the I/O it cannot avoid.
  const TARGETS = {
    genres: { cached: { of: 'baseline', ratio: 0.8 } },
    'play (random channels)': { cached: { of: 'ceiling', ratio: 0.8 } },
    'like toggle': { cached: { of: 'ceiling', ratio: 0.8 } },
    'mix: list pages and 1 like in 10': { cached: { of: 'ceiling', ratio: 0.5 } },
  };
  // Reads: 0.8 of their own I/O alone (their answers sent alone with the caches on, their SQL replayed alone off).
  const targetOf = (endpoint, variant) => TARGETS[endpoint.name]?.[variant] ?? { of: 'own I/O', ratio: 0.8 };
  // Cloudflare's published rates (Workers Paid, read 2026-11-24; docs/scale.md#price-per-million-requests), $ per million.
  const RATES = { request: 0.3, rowRead: 0.001, rowWritten: 1.0, doCall: 0.15 };
  /** $ per million requests of this kind: the Worker request, D1 rows read and written, DO calls and their rows (CPU apart). */
  const pricePerMillion = (endpoint, rowsRead, rowsWritten) =>
    RATES.request +
    rowsRead * RATES.rowRead +
    (rowsWritten + (endpoint.price?.doRowsWritten ?? 0)) * RATES.rowWritten +
    (endpoint.price?.doCalls ?? 0) * RATES.doCall;
  const endpoints = [
    ...reads(shipped).map((e) => ({ ...e, variant: 'cached', setup: shipped })),
    ...reads(uncached).map((e) => ({ ...e, variant: 'uncached', setup: uncached })),
    ...writes(shipped).map((e) => ({ ...e, variant: 'cached', setup: shipped })),
  ].filter((e) => !ONLY.length || ONLY.includes(e.name));
  for (const mix of endpoints.filter((e) => e.parts))
    for (const [name] of mix.parts)
      if (!endpoints.some((e) => e.name === name && e.variant === 'cached'))
        throw new Error(`${mix.name} is measured against ${name}: add it to --only`);

  // Requests prepared in advance (wrk cycles through them): 5,000, each from a random user.
  const PREPARED = 5000;
  const request = (endpoint, n) => ({
    method: typeof endpoint?.method === 'function' ? endpoint.method(n) : (endpoint?.method ?? 'GET'),
    path: endpoint ? endpoint.path(n) : '/',
    headers: {
      ...(endpoint && !endpoint.anonymous
        ? { authorization: `Bearer ${pick(endpoint.setup.tokens, endpoint.user?.(n) ?? n * 7 + 3)}` }
        : {}),
      ...endpoint?.headers,
    },
  });

  // Each read's own ceiling, from its first OWN requests: with the caches on, a Worker
  // that only sends the read's own answers (bodies and headers as the API sent them);
  // with them off, the replay Worker running the read's own statements (above).
  const OWN = 20;
  const transportHeaders = new Set(['content-length', 'transfer-encoding', 'date', 'content-encoding']);
  const answers = {};
  const plans = {};
  const readEndpoints = endpoints.filter((e) => !e.method);
  for (const [k, endpoint] of readEndpoints.entries()) {
    if (endpoint.variant !== 'cached') continue;
    for (let n = 1; n <= OWN; n += 1) {
      const r = request(endpoint, n);
      const response = await fetch(`${endpoint.setup.url}${r.path}`, {
        headers: { ...r.headers, 'accept-encoding': 'identity' },
      });
      if (!response.ok) throw new Error(`${endpoint.name}: ${response.status} while its answers were kept`);
      answers[`${k}-${n}`] = {
        body: await response.text(),
        headers: [...response.headers].filter(([h]) => !transportHeaders.has(h)),
      };
    }
  }
  if (readEndpoints.some((e) => e.variant === 'uncached')) {
    runtimeOutput = '';
    await uncachedWorker.setOptions(uncachedOptions({ logLevel: 'debug' }));
    for (const [k, endpoint] of readEndpoints.entries()) {
      if (endpoint.variant !== 'uncached') continue;
      for (let n = 1; n <= OWN; n += 1) {
        const r = request(endpoint, n);
        const response = await fetch(`${endpoint.setup.url}${r.path}`, {
          headers: { ...r.headers, 'x-request-id': `own-${k}-${n}` },
        });
        if (!response.ok) throw new Error(`${endpoint.name}: ${response.status} while its statements were logged`);
        await response.arrayBuffer();
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 500)); // the last lines
    for (const line of runtimeOutput.split('\n')) {
      let entry = null;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // not a log line
      }
      if (!entry?.request_id?.startsWith('own-')) continue;
      const statements = entry.db.statements ?? [];
      if (statements.length !== entry.db.queries) throw new Error(`${entry.path}: a statement was not traced`);
      const trips = [];
      // No statements: answered without D1 (genres, from the data centre's cache).
      for (const { sql, params, round_trip } of statements) (trips[round_trip - 1] ??= []).push({ sql, params });
      plans[entry.request_id.slice(4)] = trips.filter(Boolean);
    }
    runtimeOutput = null;
    await uncachedWorker.setOptions(uncachedOptions({ plans }));
  }
  const answersWorker = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    modules: true,
    compatibilityDate,
    script: `const ANSWERS = ${JSON.stringify(answers)};
export default { fetch(request) {
  const answer = ANSWERS[new URL(request.url).pathname.slice(1)];
  return answer ? new Response(answer.body, { headers: answer.headers }) : new Response('no such answer', { status: 404 });
} };`,
  });
  answerWorkers.push(answersWorker);
  const answersUrl = await urlOf(answersWorker);
  /** The read's own ceiling as an endpoint to load, or null (writes: their ceilings are global). */
  const ownOf = (endpoint) => {
    const k = readEndpoints.indexOf(endpoint);
    if (k < 0) return null;
    const nth = (n) => ((n - 1) % OWN) + 1;
    if (endpoint.variant === 'cached') {
      return {
        kind: 'answers',
        name: 'its own answers, sent by a Worker that does only that',
        url: answersUrl,
        endpoint: { name: `${endpoint.name}-answers`, variant: 'own', anonymous: true, path: (n) => `/${k}-${nth(n)}` },
      };
    }
    for (let n = 1; n <= OWN; n += 1)
      if (!plans[`${k}-${n}`]) throw new Error(`no statements logged for ${endpoint.name}`);
    return {
      kind: 'replay',
      name: 'its own statements, replayed by a Worker that does only that',
      url: endpoint.setup.url,
      endpoint: {
        name: `${endpoint.name}-replay`,
        variant: 'own',
        anonymous: true,
        headers: { Host: REPLAY_HOST }, // wrk's own Host otherwise
        path: (n) => `/?plan=${k}-${nth(n)}`,
      },
    };
  };
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
  // wrk (one thread: the other core is the runtime's) cycles through the prepared requests.
  const loadWithWrk = async (target, endpoint, seconds) => {
    const script = `${out}/wrk-${endpoint ? `${endpoint.name}-${endpoint.variant}`.replace(/\W+/g, '-') : 'baseline'}.lua`;
    const requests = Array.from({ length: endpoint ? PREPARED : 1 }, (_, i) => ({
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
  // `runOwn`: the endpoint's own ceiling, run in each round right after it; its ratio is
  // the median of the rounds' own ratios.
  const alternate = async (runEndpoint, runOwn) => {
    const rounds = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      const base = await load(baselineUrl);
      const run = await runEndpoint();
      const own = runOwn && (await runOwn());
      rounds.push({ base, run, own, errors: run.errors });
    }
    const middle = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const own = runOwn && {
      rps: middle(rounds.map((r) => r.own.rps)),
      ratio: middle(rounds.map((r) => r.run.rps / r.own.rps)),
      errors: rounds.reduce((sum, r) => sum + r.own.errors, 0),
    };
    rounds.sort((a, b) => a.run.rps / a.base.rps - b.run.rps / b.base.rps);
    const median = rounds[Math.floor(rounds.length / 2)];
    // Errors of every round count, not only the median's.
    return { base: median.base, run: { ...median.run, errors: rounds.reduce((sum, r) => sum + r.errors, 0) }, own };
  };

  // The ceilings first: each endpoint's figure is then read against the one its I/O allows.
  const ceilings = {};
  const rows = [];
  for (const [io, name, path] of [
    ['d1', 'one D1 query', '/d1'],
    ['d1-batch', 'one D1 batch write', '/d1-batch'],
    ['kv', 'one KV read', '/kv'],
    ['do', 'one DO call', '/do'],
    ['do-write', 'one DO call that writes a row', '/do-write'],
  ]) {
    const { base, run } = await alternate(() => load(`${probeUrl}${path}`));
    ceilings[io] = { name, rps: run.rps, ratio: run.rps / base.rps };
    console.log(
      `ceiling: ${name.padEnd(20)} ${String(Math.round(run.rps)).padStart(6)} req/s  baseline ${Math.round(base.rps)} req/s  ratio ${(run.rps / base.rps).toFixed(2)}`,
    );
  }

  // The rate a mix of endpoints would have if each request cost what it costs alone (rows above).
  const partsCeiling = (endpoint) => {
    const seconds = endpoint.parts.map(([name, share]) => {
      const part = rows.find((r) => r.endpoint === name && r.variant === 'cached');
      if (!part) throw new Error(`${endpoint.name} needs ${name} measured first (--only)`);
      return share / part.rps;
    });
    return { name: 'its parts alone', rps: 1 / seconds.reduce((a, b) => a + b, 0) };
  };

  // A warm-up: each Worker's read paths run once under load before anything is measured
  // (the first endpoint measured otherwise carried the runtime's first compilations).
  // Reads only: writes would leave flushes and likes behind for what is measured next.
  for (const endpoint of endpoints.filter((e) => !e.method)) await load(endpoint.setup.url, endpoint, 1);

  for (const endpoint of endpoints) {
    const target = endpoint.setup.url;
    const ownCeiling = ownOf(endpoint);
    const { base, run, own } = await alternate(
      () => load(target, endpoint),
      ownCeiling && (() => load(ownCeiling.url, ownCeiling.endpoint)),
    );
    if (own?.errors) throw new Error(`${endpoint.name}: ${own.errors} errors from ${ownCeiling.name}`);
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
            fetch(`${target}${r.path}`, {
              method: r.method,
              headers: { ...r.headers, 'X-Debug-Token': ADMIN_TOKEN },
            }),
          ),
        );
        for (const response of responses) {
          await response.arrayBuffer();
          samples.push(serverTiming(response.headers));
        }
      }
    };
    await Promise.all([load(target, endpoint, 3), sample()]);
    const mean = (key) => samples.reduce((s, x) => s + x[key], 0) / samples.length;
    const ceiling = endpoint.io === 'parts' ? partsCeiling(endpoint) : ceilings[endpoint.io];
    const goal = targetOf(endpoint, endpoint.variant);
    const ratio = run.rps / base.rps;
    const toCeiling = run.rps / ceiling.rps;
    const row = {
      endpoint: endpoint.name,
      variant: endpoint.variant,
      rps: Math.round(run.rps),
      p50: run.p50,
      p99: run.p99,
      errors: run.errors,
      queries: mean('queries'),
      roundTrips: mean('roundTrips'),
      maxRoundTrips: Math.max(...samples.map((x) => x.roundTrips)),
      rowsRead: Math.round(mean('rowsRead')),
      rowsWritten: mean('rowsWritten'),
      price: pricePerMillion(endpoint, mean('rowsRead'), mean('rowsWritten')),
      baselineRps: Math.round(base.rps),
      baselineP99: base.p99,
      ratio,
      ceiling: ceiling.name,
      ceilingRps: Math.round(ceiling.rps),
      toCeiling,
      also: own
        ? { kind: ownCeiling.kind, ceiling: ownCeiling.name, rps: Math.round(own.rps), ratio: own.ratio }
        : endpoint.also && {
            kind: 'global',
            ceiling: ceilings[endpoint.also].name,
            rps: Math.round(ceilings[endpoint.also].rps),
            ratio: run.rps / ceilings[endpoint.also].rps,
          },
      target: goal,
      met:
        (goal.of === 'baseline' ? ratio : goal.of === 'own I/O' ? (own?.ratio ?? 0) : toCeiling) >= goal.ratio &&
        run.errors === 0,
    };
    rows.push(row);
    console.log(
      `${`${row.endpoint} (${row.variant})`.padEnd(34)} ${String(row.rps).padStart(6)} req/s  p99 ${String(row.p99).padStart(4)} ms  ` +
        `errors ${row.errors}  D1 ${row.queries.toFixed(1)} q / ${row.rowsRead} rows  $${row.price.toFixed(2)}/M  ` +
        `÷ baseline ${row.ratio.toFixed(2)}  ÷ ${row.ceiling} ${row.toCeiling.toFixed(2)}  ` +
        `target ${goal.ratio} of the ${goal.of}: ${row.met ? 'met' : 'NOT met'}`,
    );
    if (row.also) console.log(`${''.padEnd(34)} ÷ ${row.also.ceiling} ${row.also.ratio.toFixed(2)}`);
  }

  // Rows read per request at two catalogue sizes, every endpoint on a cache miss: the
  // cost of a request must not grow with the catalogue (at most 2x from 1,000 to 100,000).
  const scale = [];
  if (!ONLY.length || ONLY.includes('scale')) {
    console.log('Rows read per request at 1,000 and 100,000 channels (READ_CACHE_MS=0)...');
    const sizes = [1000, 100_000];
    const setups = [];
    for (const size of sizes) {
      const mf = startWorker({ READ_CACHE_MS: '0' });
      scaleWorkers.push(mf);
      setups.push(await prepare(mf, size));
    }
    const named = (setup) => [...reads(setup), ...writes(setup)].filter((e) => !e.parts).map((e) => ({ ...e, setup })); // endpoints, not mixes
    const perSize = setups.map(named);
    for (const [index, endpoint] of perSize[0].entries()) {
      const figures = [];
      for (const list of perSize) {
        const at = list[index];
        const counts = [];
        for (let i = 0; i < 40; i += 1) {
          const r = request(at, i + 1);
          const response = await fetch(`${at.setup.url}${r.path}`, {
            method: r.method,
            headers: { ...r.headers, 'X-Debug-Token': ADMIN_TOKEN },
          });
          await response.arrayBuffer();
          counts.push(serverTiming(response.headers).rowsRead);
        }
        figures.push(counts.reduce((a, b) => a + b, 0) / counts.length);
      }
      const growth = figures[1] / Math.max(1, figures[0]);
      // Channel pages: at most 3 rows per item shown + 10 at both sizes; search, suggestions, nearby: 1,000 at 100,000.
      const limit = endpoint.page
        ? { text: `≤ ${3 * endpoint.items + 10} at both`, met: Math.max(...figures) <= 3 * endpoint.items + 10 }
        : ['search', 'suggestions', 'nearby'].includes(endpoint.name)
          ? { text: '≤ 1,000 at 100,000', met: figures[1] <= 1000 }
          : { text: '≤ 2x growth', met: figures[1] <= 2 * Math.max(1, figures[0]) };
      scale.push({
        endpoint: endpoint.name,
        small: figures[0],
        large: figures[1],
        growth,
        limit: limit.text,
        met: limit.met,
      });
      console.log(
        `${endpoint.name.padEnd(24)} ${figures[0].toFixed(1).padStart(8)} rows at 1,000  ${figures[1].toFixed(1).padStart(8)} at 100,000  ×${growth.toFixed(2)}`,
      );
    }
  }

  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model?.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const date = new Date().toISOString().slice(0, 10);
  const ceilingTable = [
    '| ceiling (a Worker that does only this) | req/s | ratio to the baseline |',
    '|---|---|---|',
    ...Object.values(ceilings).map((c) => `| ${c.name} | ${Math.round(c.rps)} | ${c.ratio.toFixed(2)} |`),
  ].join('\n');
  const table = [
    '| endpoint | read caches | req/s | p50 ms | p99 ms | errors | D1 queries | D1 round trips (max) | rows read | rows written | $ per million | ÷ baseline | I/O on a miss | ÷ that ceiling | ÷ its own I/O alone | target | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.endpoint} | ${r.variant === 'cached' ? 'on' : 'off'} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.queries.toFixed(2)} | ${r.roundTrips.toFixed(2)} (${r.maxRoundTrips}) | ${r.rowsRead} | ${r.rowsWritten.toFixed(1)} | ${r.price.toFixed(2)} | ${r.ratio.toFixed(2)} | ${r.ceiling} | ${r.toCeiling.toFixed(2)} | ${r.also ? r.also.ratio.toFixed(2) : '–'} | ≥ ${r.target.ratio} of the ${r.target.of} | ${r.met ? 'yes' : '**no**'} |`,
    ),
  ].join('\n');
  const alsoNotes = [...new Map(rows.filter((r) => r.also).map((r) => [r.also.ceiling, r])).values()]
    .map(
      (r) =>
        ({
          answers: `- reads, caches on: ${r.also.ceiling} (the same bodies and headers, from the endpoint's first ${OWN} requests), in each round right after the read (median of the rounds' ratios).`,
          replay: `- reads, caches off: ${r.also.ceiling} (the SQL and values the Worker logged for its first ${OWN} requests at \`LOG_LEVEL=debug\`, in the same round trips, on the same D1; it answers 80 bytes), in each round right after the read (median of the rounds' ratios).`,
          global: `- ${r.endpoint}: ${r.also.ceiling} (the ceiling above).`,
        })[r.also.kind],
    )
    .join('\n');
  const scaleTable = scale.length
    ? [
        '| endpoint | rows read at 1,000 channels | at 100,000 | growth | target | met |',
        '|---|---|---|---|---|---|',
        ...scale.map(
          (r) =>
            `| ${r.endpoint} | ${r.small.toFixed(1)} | ${r.large.toFixed(1)} | ×${r.growth.toFixed(2)} | ${r.limit} | ${r.met ? 'yes' : '**no**'} |`,
        ),
      ].join('\n')
    : '';
  writeFileSync(
    `${root}/bench/results.md`,
    `# Benchmark\n\n${date}; ${machine}; ${CHANNELS} channels; ${Object.entries(overrides)
      .map(([k, v]) => `${k}=${v}; `)
      .join(
        '',
      )}${TOOL === 'wrk' ? 'wrk, 1 thread' : 'autocannon'}, ${CONNECTIONS} connections, ${DURATION} s per run, ` +
      `each run right after a baseline run (fixed JSON on the same workerd), ${ROUNDS} rounds, the round with the median ratio shown (errors: all rounds); ` +
      `bundle served by Miniflare directly; ${USERS} users, requests spread over them. D1 figures: mean of 200 requests like the load's, sent during a further load.\n\n` +
      `## The runtime's ceilings on this machine\n\n${ceilingTable}\n\n` +
      `## Endpoints\n\nEach endpoint declares the I/O it must do on a cache miss; \`÷ that ceiling\` compares it with a Worker that does only that I/O, measured above in the same run. ` +
      `Reads run with the read caches as shipped (on) and with \`READ_CACHE_MS=0\` (off).\n\n${table}\n\n` +
      (alsoNotes
        ? `\`÷ its own I/O alone\`: the endpoint against a Worker that does only the I/O this endpoint cannot do without:\n\n${alsoNotes}\n\n`
        : '') +
      (scaleTable
        ? `## Rows read per request as the catalogue grows\n\nMean of 40 requests like the load's, read caches off, D1's own \`rows_read\`.\n\n${scaleTable}\n\n`
        : '') +
      `![chart](results.svg)\n`,
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
        ceilings,
        rows,
        scale,
      },
      null,
      2,
    ),
  );
  writeFileSync(
    `${root}/bench/results.svg`,
    chart(rows, `${date} · ${CHANNELS} channels · requests/s against each target (1.0 = target met exactly)`),
  );
  console.log(
    `\n${ceilingTable}\n\n${table}\n\n${scaleTable}\n\nWritten: bench/results.md, bench/results.json, bench/results.svg`,
  );
} finally {
  forgetCleanup();
  await disposeAll();
}

/** A horizontal bar chart: each endpoint's figure divided by its target (the line at 1.0). */
function chart(rows, title) {
  const width = 820;
  const barHeight = 22;
  const left = 260;
  const score = (r) => (r.target.of === 'baseline' ? r.ratio : r.toCeiling) / r.target.ratio;
  const scale = (width - left - 90) / Math.max(1.2, ...rows.map(score));
  const bars = rows
    .map((r, i) => {
      const y = 40 + i * (barHeight + 6);
      const value = score(r);
      const color = r.met ? '#2a9d5c' : '#d9534f';
      return `<text x="${left - 8}" y="${y + 16}" text-anchor="end">${r.endpoint} (caches ${r.variant === 'cached' ? 'on' : 'off'})</text>
<rect x="${left}" y="${y}" width="${(value * scale).toFixed(1)}" height="${barHeight}" fill="${color}"/>
<text x="${left + value * scale + 6}" y="${y + 16}">${value.toFixed(2)} (${r.rps}/s)</text>`;
    })
    .join('\n');
  const height = 60 + rows.length * (barHeight + 6);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="#fff"/><text x="10" y="22" font-weight="bold">${title}</text>
${bars}
<line x1="${left + scale}" x2="${left + scale}" y1="34" y2="${height - 10}" stroke="#222" stroke-dasharray="4,3"/>
</svg>
`;
}
