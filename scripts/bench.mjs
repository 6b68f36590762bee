#!/usr/bin/env node
// npm run bench [-- --channels N --requests N --rounds N --concurrency N --capture N --only id,... --var NAME=value]
// Per endpoint: D1 round trips and rows, the Worker's own CPU beside a bare Hono route, the latency from Sydney;
// writes bench/results.md and bench/results.json. How each is measured, and the ids: docs/performance.md.
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import {
  ADMIN_TOKEN,
  Miniflare,
  SEARCH_WORDS as words,
  applyMigrations,
  fetchAgain,
  loadBenchData,
  pick,
  workerOptions,
  wranglerConfig,
} from './lib/bench-data.mjs';
import { FLOOR_SOURCE, REPLAY_SOURCE, recorderSource } from './lib/bench-workers.mjs';
import { LATENCY, RADIO_BROWSER_RTT_MS, modelledLatency } from './lib/bench-latency.mjs';
import { report } from './lib/bench-report.mjs';
import { root, serverTiming } from './lib/local-api.mjs';
import { onShutdown, runWrangler, sleep } from './lib/local-worker.mjs';
import { cpuNanos, workerdChildren } from './lib/workerd-stats.mjs';

const benchStarted = Date.now();
const { values: options } = parseArgs({
  options: {
    channels: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
    capture: { type: 'string', default: '40' },
    only: { type: 'string', default: '' },
    var: { type: 'string', multiple: true, default: [] },
  },
});
const CHANNELS = Number(options.channels);
const REQUESTS = Number(options.requests);
const ROUNDS = Number(options.rounds);
const CONCURRENCY = Number(options.concurrency);
/** Distinct requests per endpoint: captured once, then sent in turn (plays: every one distinct). */
const CAPTURED = Number(options.capture);
const ONLY = options.only
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean);
const USERS = 100;
const HEAVY_LIKES = 4000;
/** Requests before each measured run (not counted): compiled code, copies kept, as a steady load keeps them. */
const WARM = Math.max(100, CAPTURED);
/** Shared lists' copies: seconds a location keeps one where deployed. */
const DEPLOYED_MAX_AGE = 60;

const out = `${root}/bench/out`;
mkdirSync(out, { recursive: true });
const config = wranglerConfig(root);
const overrides = Object.fromEntries(
  options.var.map((assignment) => {
    const [name, ...value] = assignment.split('=');
    return [name, value.join('=')];
  }),
);

// Machine load when the run began and ended: the CPU figures hold on a busy machine, the rates do not.
const othersRunning = () =>
  execFileSync('sh', ['-c', "pgrep -fa 'vitest|workerd' | grep -v wt-bench | grep -v pgrep | wc -l || true"], {
    encoding: 'utf8',
  }).trim();
const loadAtStart = { loadavg: os.loadavg(), others: othersRunning() };

console.log('Bundling the Worker and the bare baseline (wrangler deploy --dry-run)...');
if (runWrangler(['deploy', '--dry-run', '--outdir', `${out}/bundle`], { stdio: 'ignore' }).status !== 0)
  throw new Error('wrangler deploy --dry-run failed');
writeFileSync(`${out}/bundle/bench-recorder.mjs`, recorderSource());
// The bare Worker is built with the API's build settings (minified, no __name wrappers).
writeFileSync(
  `${out}/bare.toml`,
  [
    'name = "bench-bare"',
    `main = "${root}/scripts/lib/bench-bare-worker.mjs"`,
    `compatibility_date = "${config.compatibilityDate}"`,
    'compatibility_flags = ["nodejs_compat"]',
    'keep_names = false',
    'minify = true',
    '',
  ].join('\n'),
);
if (
  runWrangler(['deploy', '--dry-run', '--outdir', `${out}/bare`, '--config', `${out}/bare.toml`], { stdio: 'ignore' })
    .status !== 0
)
  throw new Error('wrangler deploy --dry-run of the bare Worker failed');

// One workerd process serves them all: the API as deployed (copies kept SHARED_LIST_MAX_AGE seconds) and with
// SHARED_LIST_MAX_AGE=0, the recorder, the replay, the bare route and the floor. They share the D1 database, the KV
// namespace and the API's Durable Objects (the replay makes the API's own calls).
const direct = { unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }] };
const sharedObjects = Object.fromEntries(
  Object.entries(config.durableObjects).map(([name, { className }]) => [name, { className, scriptName: 'api' }]),
);
const apiWorker = (name, maxAge, extra = {}) => {
  // The host and port are the instance's, not a worker's.
  const {
    host: _host,
    port: _port,
    ...worker
  } = workerOptions({
    scriptPath: `${out}/bundle/index.js`,
    config,
    storage: 'bench',
    adminToken: ADMIN_TOKEN,
    bindings: { LOG_LEVEL: 'error', SHARED_LIST_MAX_AGE: String(maxAge), ...overrides },
  });
  return { ...worker, name, ...direct, ...(name === 'api' ? {} : { durableObjects: sharedObjects }), ...extra };
};
const plain = (name, script, extra = {}) => ({
  name,
  modules: true,
  script,
  compatibilityDate: config.compatibilityDate,
  compatibilityFlags: ['nodejs_compat'],
  ...direct,
  ...extra,
});
const apiBindings = apiWorker('x', 0);
const before = new Set(workerdChildren());
const mf = new Miniflare({
  host: '127.0.0.1',
  port: 0,
  workers: [
    apiWorker('api', 0),
    apiWorker('copies', DEPLOYED_MAX_AGE),
    apiWorker('recorder', 0, {
      scriptPath: `${out}/bundle/bench-recorder.mjs`,
      // The bundle it wraps is an ES module (Miniflare takes other .js files for CommonJS).
      modulesRules: [...apiBindings.modulesRules, { type: 'ESModule', include: ['**/*.js'] }],
      durableObjects: { ...sharedObjects, OWN_PLAY_COUNTER: { className: 'PlayCounter', useSQLite: true } },
    }),
    plain('replay', REPLAY_SOURCE, {
      d1Databases: apiBindings.d1Databases,
      kvNamespaces: apiBindings.kvNamespaces,
      ratelimits: apiBindings.ratelimits,
      durableObjects: sharedObjects,
    }),
    { ...plain('bare', undefined), script: undefined, scriptPath: `${out}/bare/bench-bare-worker.js` },
    plain('floor', FLOOR_SOURCE),
  ],
});
const stopAll = () => mf.dispose();
const forgetCleanup = onShutdown(stopAll);

try {
  await mf.ready;
  const started = workerdChildren().filter((pid) => !before.has(pid));
  if (started.length !== 1) throw new Error(`expected one new workerd process, found ${started.length}`);
  const pid = started[0];
  const urls = {};
  for (const name of ['api', 'copies', 'recorder', 'replay', 'bare', 'floor'])
    urls[name] = (await mf.unsafeGetDirectURL(name)).toString().replace(/\/$/, '');

  console.log(`Loading ${CHANNELS} channels, ${USERS} users, plays, likes and a playlist...`);
  const db = await mf.getD1Database('DB', 'api');
  await applyMigrations(db, `${root}/drizzle/migrations`);
  const file = `${out}/synthetic-${CHANNELS}.json`;
  execFileSync(process.execPath, [`${root}/scripts/generate-synthetic-catalogue.mjs`, String(CHANNELS), file], {
    stdio: 'ignore',
  });
  const loadStarted = Date.now();
  const setup = await loadBenchData({
    url: urls.api,
    db,
    adminToken: ADMIN_TOKEN,
    stations: JSON.parse(readFileSync(file, 'utf8')),
    users: USERS,
    plays: 400,
    likes: 200,
    featuredEvery: 500,
    flushMs: Number(config.vars.PLAY_FLUSH_MS),
    heavyLikes: HEAVY_LIKES,
  });
  console.log(`  loaded in ${((Date.now() - loadStarted) / 1000).toFixed(1)} s`);
  // workerd's own CPU while nothing is sent (timers, alarms): what a run's settle time adds to its figure.
  const idleStart = cpuNanos(pid);
  await sleep(2000);
  const idleMsPerSecond = (cpuNanos(pid) - idleStart) / 1e6 / 2;
  console.log(`  workerd idle: ${idleMsPerSecond.toFixed(2)} ms of CPU per second`);

  // ---------------------------------------------------------------- the endpoints
  /** A fixed pseudo-random sequence (mulberry32): every run sends the same "random" requests. */
  const random = (seed) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  /** Ranks 0..n-1 from a Zipf distribution (s = 1): apps open few channels often (the top 100 of 50,000 take ~45%). */
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
  const rank = zipf(setup.channelIds.length, random(7));
  const detailIds = Array.from({ length: 5000 }, () => setup.channelIds[rank()]);
  const likeNext = random(42);
  const likeIds = Array.from({ length: 5000 }, () => pick(setup.channelIds, Math.floor(likeNext() * 1e9)));
  const playNext = random(4242);
  const playIds = Array.from({ length: 50_000 }, () => pick(setup.channelIds, Math.floor(playNext() * 1e9)));
  const heavy = () => setup.heavyToken;
  // The popular list as an app scrolls it: page 1, then each next page by its cursor (meta.next_cursor).
  const cursors = [undefined];
  for (let page = 1; page < 5; page += 1) {
    const query = cursors.at(-1) === undefined ? 'page=1' : `cursor=${cursors.at(-1)}`;
    const response = await fetchAgain(`${urls.api}/api/v1/radios?sort=popular&${query}`, {
      headers: { authorization: `Bearer ${setup.tokens[0]}` },
    });
    cursors.push((await response.json()).meta.next_cursor);
  }
  const scrolled = (n) => {
    const cursor = cursors[n % cursors.length];
    return `/api/v1/radios?sort=popular&${cursor === undefined ? 'page=1' : `cursor=${cursor}`}`;
  };

  // `rows`: which rows-read target applies (docs/performance.md#the-targets); `shared`: a shared list (copies or not).
  const endpoints = [
    { id: 'genres', name: 'genres', path: () => '/api/v1/genres', anonymous: true, shared: true },
    { id: 'list', name: 'list page (popular, pages 1-5 by cursor)', path: scrolled, shared: true, rows: 'page' },
    {
      id: 'list-heavy',
      name: `list page, a caller with ${HEAVY_LIKES.toLocaleString('en')} likes`,
      path: scrolled,
      token: heavy,
      shared: true,
      rows: 'page',
    },
    // Pages by number read the index entries they skip, on top of the page's limit: D1 figures only.
    {
      id: 'list-by-number',
      name: 'list page (popular, pages 1-5 by number)',
      path: (n) => `/api/v1/radios?sort=popular&page=${1 + (n % 5)}`,
      skipped: (n, shown) => (n % 5) * shown,
      shared: true,
      rows: 'page',
      cpu: false,
    },
    { id: 'search', name: 'search', path: (n) => `/api/v1/search?q=${pick(words, n)}`, shared: true, rows: 'bounded' },
    {
      id: 'suggestions',
      name: 'suggestions',
      path: (n) => `/api/v1/search/suggestions?q=${pick(words, n).slice(0, 3)}`,
      shared: true,
      rows: 'bounded',
    },
    {
      id: 'charts',
      name: 'charts',
      path: () => '/api/v1/radios/charts?metric=plays&period=7d',
      shared: true,
      rows: 'page',
    },
    { id: 'trending', name: 'trending', path: () => '/api/v1/radios/trending', shared: true, rows: 'page' },
    { id: 'featured', name: 'featured', path: () => '/api/v1/radios/featured', shared: true, rows: 'page' },
    {
      id: 'nearby',
      name: 'nearby (a city)',
      path: (n) =>
        `/api/v1/radios/nearby?lat=${(51.5 + (n % 7) * 0.1).toFixed(1)}&lng=-0.1&radius_km=${50 * (1 + (n % 4))}`,
      shared: true,
      rows: 'bounded',
    },
    { id: 'trending-searches', name: 'trending searches', path: () => '/api/v1/search/trending', shared: true },
    { id: 'detail', name: 'channel detail', path: (n) => `/api/v1/radios/${pick(detailIds, n)}`, rows: 'page' },
    {
      id: 'playlist',
      name: 'playlist (50 channels)',
      path: () => `/api/v1/playlists/${setup.playlistId}`,
      rows: 'page',
    },
    {
      id: 'like',
      name: 'like toggle',
      method: 'POST',
      path: (n) => `/api/v1/radios/${pick(likeIds, n)}/like`,
      rows: 'like',
    },
    {
      id: 'like-heavy',
      name: `like toggle, a caller with ${HEAVY_LIKES.toLocaleString('en')} likes`,
      method: 'POST',
      path: (n) => `/api/v1/radios/${pick(likeIds, n)}/like`,
      token: heavy,
      rows: 'like',
    },
    // Plays are never sent twice (the 60-second rule would make a repeat cheaper): each request its own.
    {
      id: 'play',
      name: 'play',
      method: 'POST',
      path: (n) => `/api/v1/radios/${pick(playIds, n)}/play`,
      distinct: true,
    },
  ]
    .map((endpoint, index) => ({ ...endpoint, index, method: endpoint.method ?? 'GET' }))
    .filter((e) => !ONLY.length || ONLY.includes(e.id));

  /** Where Cloudflare would put a listener in Sydney (request.cf, through Miniflare's cf header). */
  const CF = JSON.stringify({
    asn: 1221,
    asOrganization: 'Telstra',
    colo: 'SYD',
    city: 'Sydney',
    region: 'New South Wales',
    regionCode: 'NSW',
    metroCode: '',
    postalCode: '2000',
    country: 'AU',
    continent: 'OC',
    timezone: 'Australia/Sydney',
    latitude: '-33.86880',
    longitude: '151.20930',
    clientTcpRtt: 12,
    httpProtocol: 'HTTP/2',
    requestPriority: '',
    tlsCipher: 'AEAD-AES128-GCM-SHA256',
    tlsVersion: 'TLSv1.3',
    edgeRequestKeepAliveStatus: 1,
    clientAcceptEncoding: 'gzip, deflate, br',
  });
  /** Request `n` of `endpoint`: its method, path and headers, as Cloudflare would hand them to the Worker. */
  const request = (endpoint, n) => {
    const user = (n * 7 + 3) % USERS;
    const token = endpoint.anonymous ? null : (endpoint.token?.() ?? setup.tokens[user]);
    return {
      method: endpoint.method,
      path: endpoint.path(n),
      headers: {
        'mf-cf-blob': CF,
        'cf-ray': `${(0x8d3a5c1e2f4b0000 + n).toString(16)}-SYD`,
        'cf-connecting-ip': `203.0.113.${endpoint.anonymous ? 1 + (n % 250) : 1 + user}`,
        'accept-language': 'en',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
    };
  };

  // ---------------------------------------------------------------- capture
  let captureId = 0;
  /** Request `n` through the recorder: the answer, D1's own counts (debug header) and every call it made. */
  const capture = async (endpoint, n, maxAge, delay = 0) => {
    const id = String((captureId += 1));
    const r = request(endpoint, n);
    const response = await fetchAgain(`${urls.recorder}${r.path}`, {
      method: r.method,
      headers: {
        ...r.headers,
        'x-debug-token': ADMIN_TOKEN,
        'x-bench-capture': id,
        'x-bench-max-age': String(maxAge),
        'x-bench-delay': String(delay),
      },
    });
    const body = await response.text();
    const calls = await (await fetchAgain(`${urls.recorder}/__calls?id=${id}`)).json();
    return {
      status: response.status,
      body,
      headers: [...response.headers],
      timing: serverTiming(response.headers),
      ...calls,
    };
  };
  const TRANSPORT = new Set(['content-length', 'transfer-encoding', 'date', 'content-encoding', 'connection']);
  /** An answer as the bare route gives it back: the JSON and the headers the API sent without the debug token. */
  const bareAnswer = (captured) => ({
    json: JSON.parse(captured.body),
    headers: Object.fromEntries(
      captured.headers
        .filter(([name]) => !TRANSPORT.has(name))
        .map(([name, value]) => [name, name === 'server-timing' ? value.replace(/;desc="[^"]*"/g, '') : value]),
    ),
  });
  const put = async (url, body) => {
    const response = await fetchAgain(url, { method: 'PUT', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`PUT ${url}: ${response.status}`);
  };

  /**
   * The variants of an endpoint: a shared list as deployed, from its location's copy (`copy`), and with copies off
   * (`miss`, SHARED_LIST_MAX_AGE=0); any other endpoint once.
   */
  const variants = endpoints.flatMap((endpoint) =>
    endpoint.shared
      ? [
          { endpoint, copies: 'miss', url: urls.api, maxAge: 0 },
          { endpoint, copies: 'copy', url: urls.copies, maxAge: DEPLOYED_MAX_AGE },
        ]
      : [{ endpoint, copies: null, url: urls.api, maxAge: 0 }],
  );
  /**
   * The number of the `i`th request a target is sent in a round (warm-up: `i` from -WARM to -1). Requests repeat
   * the captured ones in turn; where each must be distinct (plays), the API and the replay are sent different ones
   * in every round, and the replay's (and the bare route's) were captured.
   */
  const numbers = (variant, target, round) => {
    if (!variant.endpoint.distinct) return (i) => 1 + ((i + WARM) % CAPTURED);
    const base = round * 2 * (WARM + REQUESTS) + (target === 'api' ? 0 : WARM + REQUESTS);
    return (i) => 1 + base + WARM + i;
  };

  console.log('Capturing what each request does (the recorder)...');
  /** The calls of each variant's first captured request, SQL and values included: bench/out/calls.json. */
  const statements = {};
  for (const variant of variants) {
    const { endpoint, maxAge } = variant;
    const ns = endpoint.distinct
      ? Array.from({ length: ROUNDS }, (_, round) =>
          Array.from({ length: WARM + REQUESTS }, (_, i) => numbers(variant, 'replay', round)(i - WARM)),
        ).flat()
      : Array.from({ length: CAPTURED }, (_, i) => 1 + i);
    // A copy is read on the second request of a key: the first pass keeps them.
    if (variant.copies === 'copy') for (const n of ns) await capture(endpoint, n, maxAge);
    // The requests the figures are taken from end each call 20 ms late, so that what the answer does not wait for
    // ends after it (the latency model); the others only feed the replay.
    const captured = [];
    for (const [i, n] of ns.entries())
      captured.push({ n, ...(await capture(endpoint, n, maxAge, i < CAPTURED ? 20 : 0)) });
    const failed = captured.filter((c) => c.status >= 400);
    if (failed.length) throw new Error(`${endpoint.name}: ${failed[0].status} ${failed[0].body.slice(0, 300)}`);
    variant.captured = endpoint.distinct ? captured.slice(0, CAPTURED) : captured;
    statements[`${endpoint.name}${variant.copies ? ` (${variant.copies})` : ''}`] = captured[0].calls;
    const key = (n) => `${endpoint.index}-${variant.copies ?? 'x'}-${n}`;
    variant.key = key;
    await put(urls.replay, Object.fromEntries(captured.map((c) => [key(c.n), c.calls])));
    await put(urls.bare, Object.fromEntries(captured.map((c) => [key(c.n), bareAnswer(c)])));
    console.log(`  ${endpoint.name}${variant.copies ? ` (${variant.copies})` : ''}: ${captured.length} requests`);
  }

  writeFileSync(`${out}/calls.json`, `${JSON.stringify(statements, null, 2)}\n`);

  // ---------------------------------------------------------------- CPU
  /**
   * Sends `list` (request specs, in turn) to `url`, CONCURRENCY at a time, `count` in all. Any answer other than a 2xx
   * fails the bench: a 5xx is a fault under test, a 4xx a request the bench got wrong; neither is a figure.
   */
  const drive = (url, list, count) =>
    new Promise((resolve, reject) => {
      let i = 0;
      let failure;
      const started = performance.now();
      autocannon(
        {
          url,
          connections: CONCURRENCY,
          amount: count,
          // Samples every 10 ms: autocannon otherwise ends a run on its next whole second.
          sampleInt: 10,
          requests: [
            {
              setupRequest: (r, context) => {
                const spec = list[i++ % list.length];
                context.sent = `${spec.method ?? 'GET'} ${spec.path}`;
                return { ...r, ...spec };
              },
              onResponse: (status, body, context) => {
                if ((status < 200 || status >= 300) && !failure)
                  failure = `${context.sent} (${url}): ${status} ${String(body).slice(0, 300)}`;
              },
            },
          ],
        },
        (error, result) => {
          if (error) return reject(error);
          if (failure) return reject(new Error(`answered ${result.non2xx} non-2xx of ${count}, first ${failure}`));
          resolve({
            rps: (result.requests.total * 1000) / (performance.now() - started),
            p50: result.latency.p50,
            p99: result.latency.p99,
            errors: result.errors + result.timeouts + result.non2xx,
          });
        },
      );
    });
  /** Process CPU per request (ms) of sending `list` `count` times (in turn) after `WARM` unmeasured ones. */
  const measure = async (url, warmList, list, count, settleMs) => {
    await drive(url, warmList, WARM);
    await sleep(settleMs);
    const start = cpuNanos(pid);
    const result = await drive(url, list, count);
    // What the requests left running (copies kept, plays flushed) belongs to them.
    await sleep(settleMs);
    return { ...result, cpuMs: (cpuNanos(pid) - start) / 1e6 / count };
  };

  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const rows = [];
  for (const variant of variants) {
    const { endpoint } = variant;
    const label = `${endpoint.name}${variant.copies ? ` (${variant.copies})` : ''}`;
    // Plays leave their counters a flush to send (PLAY_FLUSH_MS); other requests at most a copy to keep.
    const settleMs = endpoint.distinct ? Number(config.vars.PLAY_FLUSH_MS) + 1000 : 300;
    const lists = (target, round) => {
      const n = numbers(variant, target, round);
      const spec = (i) => {
        const r = request(endpoint, n(i));
        if (target === 'api') return r;
        const key = variant.key(n(i));
        const path = {
          raw: `/raw/${key}`,
          client: `/client/${key}`,
          d1: `/d1/${key}`,
          bare: `/bare/${key}`,
          floor: '/',
        }[target];
        return { ...r, method: target === 'bare' || target === 'floor' ? 'GET' : r.method, path };
      };
      return {
        warm: Array.from({ length: WARM }, (_, i) => spec(i - WARM)),
        list: Array.from({ length: endpoint.distinct ? REQUESTS : CAPTURED }, (_, i) => spec(i)),
      };
    };
    const targets = ['api', 'raw', 'client', 'd1', 'bare', 'floor'];
    const runs = Object.fromEntries(targets.map((t) => [t, []]));
    for (let round = 0; round < (endpoint.cpu === false ? 0 : ROUNDS); round += 1) {
      // The order turns each round, so that a machine slowing down or speeding up weighs on all of them alike.
      const turn = round % targets.length;
      for (const target of [...targets.slice(turn), ...targets.slice(0, turn)]) {
        const url =
          target === 'api' ? variant.url : ['raw', 'client', 'd1'].includes(target) ? urls.replay : urls[target];
        const { warm, list } = lists(target, round);
        // The bare route and the floor cost a tenth of the API: more requests keep their figures as exact.
        const count = target === 'bare' || target === 'floor' ? 3 * REQUESTS : REQUESTS;
        runs[target].push(await measure(url, warm, list, count, settleMs));
      }
      const last = Object.fromEntries(targets.map((t) => [t, runs[t].at(-1).cpuMs.toFixed(3)]));
      console.log(`  ${label} round ${round + 1}: process CPU ms per request ${JSON.stringify(last)}`);
    }
    const measured = runs.api.length > 0;
    const own = runs.api.map((run, i) => run.cpuMs - runs.raw[i].cpuMs);
    const d1Client = runs.client.map((run, i) => run.cpuMs - runs.raw[i].cpuMs);
    const bare = runs.bare.map((run, i) => run.cpuMs - runs.floor[i].cpuMs);
    const d1 = runs.d1.map((run, i) => run.cpuMs - runs.floor[i].cpuMs);
    const ratio = own.map((x, i) => x / bare[i]);
    const middle = [...runs.api].sort((a, b) => a.rps - b.rps)[Math.floor(runs.api.length / 2)];
    const captured = variant.captured;
    const mean = (f) => captured.reduce((sum, c, i) => sum + f(c, i), 0) / captured.length;
    const d1Calls = (c) => c.calls.filter((call, i) => call.kind === 'd1' && c.order.indexOf(i) < c.doneAtResponse);
    const channels = captured.map((c) => channelsIn(JSON.parse(c.body)));
    const rowLimit = (c, i) =>
      endpoint.rows === 'page'
        ? 3 * channels[i].shown + 10 + (endpoint.skipped?.(c.n, channels[i].shown) ?? 0)
        : endpoint.rows === 'bounded'
          ? 1000
          : endpoint.rows === 'like'
            ? 20
            : null;
    const cacheMatches = captured.flatMap((c) =>
      c.calls.filter((call) => call.kind === 'cache' && call.op === 'match'),
    );
    const latency = captured.map((c) => modelledLatency(c));
    const row = {
      endpoint: endpoint.name,
      method: endpoint.method,
      copies: variant.copies,
      copyHits: cacheMatches.length ? cacheMatches.filter((m) => m.hit).length / captured.length : 0,
      d1RoundTrips: mean((c) => d1Calls(c).length),
      maxD1RoundTrips: Math.max(...captured.map((c) => d1Calls(c).length)),
      queries: mean((c) => c.timing.queries),
      rowsRead: mean((c) => c.timing.rowsRead),
      maxRowsRead: Math.max(...captured.map((c) => c.timing.rowsRead)),
      rowsWritten: mean((c) => c.timing.rowsWritten),
      shown: mean((_, i) => channels[i].shown),
      flags: mean((_, i) => channels[i].flags),
      rowLimit: endpoint.rows ? Math.min(...captured.map(rowLimit)) : null,
      maxRowLimit: endpoint.rows ? Math.max(...captured.map(rowLimit)) : null,
      rowsMet: endpoint.rows
        ? endpoint.rows === 'bounded' && CHANNELS < 100_000
          ? null
          : captured.every((c, i) => c.timing.rowsRead <= rowLimit(c, i))
        : null,
      calls: callSummary(captured),
      cpu: measured
        ? {
            api: median(runs.api.map((r) => r.cpuMs)),
            raw: median(runs.raw.map((r) => r.cpuMs)),
            client: median(runs.client.map((r) => r.cpuMs)),
            d1Client: median(d1Client),
            // What the request's D1 calls cost the process: D1's simulator and its SQLite (the floor taken out).
            d1: median(d1),
            bare: median(runs.bare.map((r) => r.cpuMs)),
            floor: median(runs.floor.map((r) => r.cpuMs)),
            own: median(own),
            bareOwn: median(bare),
            ratio: median(ratio),
            rounds: { own, bare },
          }
        : null,
      cpuLimit: endpoint.method === 'GET' ? 1.5 : 3,
      heavy: endpoint.token === heavy,
      latency: {
        io: mean((_, i) => latency[i].io),
        stages: latency[0].stages,
      },
      load: measured ? { rps: Math.round(middle.rps), p50: middle.p50, p99: middle.p99 } : null,
      errors: targets.reduce((sum, t) => sum + runs[t].reduce((s, r) => s + r.errors, 0), 0),
    };
    row.latency.total = LATENCY.edgeRtt + row.latency.io + (row.cpu?.own ?? 0);
    row.cpuMet = measured ? row.cpu.own <= row.cpuLimit : null;
    // A bare figure at or below the floor is within this machine's noise: no ratio to judge.
    row.ratioMet = measured && row.cpu.bareOwn > 0 ? row.cpu.ratio <= 2 : null;
    rows.push(row);
    const cpuText = measured
      ? `CPU ${row.cpu.own.toFixed(3)} ms (bare ${row.cpu.bareOwn.toFixed(3)}, ×${row.cpu.ratio.toFixed(1)})`
      : 'CPU not measured';
    console.log(
      `${label.padEnd(48)} D1 ${row.d1RoundTrips.toFixed(2)} trips (max ${row.maxD1RoundTrips}), ${row.rowsRead.toFixed(1)} rows read` +
        `${row.rowLimit !== null ? ` (≤ ${row.rowLimit})` : ''}, ${cpuText}, from Sydney ~${row.latency.total.toFixed(0)} ms, errors ${row.errors}`,
    );
  }

  // ---------------------------------------------------------------- report
  const loadAtEnd = { loadavg: os.loadavg(), others: othersRunning() };
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model?.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const date = new Date().toISOString().slice(0, 10);
  const results = {
    date,
    machine,
    seconds: Math.round((Date.now() - benchStarted) / 1000),
    load: { atStart: loadAtStart, atEnd: loadAtEnd },
    channels: CHANNELS,
    users: USERS,
    heavyLikes: HEAVY_LIKES,
    requests: REQUESTS,
    rounds: ROUNDS,
    concurrency: CONCURRENCY,
    captured: CAPTURED,
    overrides,
    idleCpuMsPerSecond: idleMsPerSecond,
    latencyAssumptions: { ...LATENCY, radioBrowserRtt: RADIO_BROWSER_RTT_MS },
    rows,
  };
  writeFileSync(`${root}/bench/results.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(`${root}/bench/results.md`, report(results));
  console.log('\nWritten: bench/results.md, bench/results.json');
} finally {
  forgetCleanup();
  await stopAll();
}

/** The channels an answer shows (objects with `is_liked`), and how many of the caller's flags are set on them. */
function channelsIn(json) {
  let shown = 0;
  let flags = 0;
  const visit = (value) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      if ('is_liked' in value) {
        shown += 1;
        flags += (value.is_liked === true ? 1 : 0) + (value.is_favorited === true ? 1 : 0);
      }
      Object.values(value).forEach(visit);
    }
  };
  visit(json.data);
  return { shown, flags };
}

/** What the captured requests called, per request: `kind` counts (D1 batches, KV reads, Durable Object calls, ...). */
function callSummary(captured) {
  const counts = {};
  for (const c of captured)
    for (const [i, call] of c.calls.entries()) {
      const after = c.order.indexOf(i) >= c.doneAtResponse || call.background ? ' (after the response)' : '';
      const name =
        call.kind === 'd1'
          ? 'D1 round trip'
          : call.kind === 'kv'
            ? `KV ${call.op}`
            : call.kind === 'limit'
              ? 'rate limit'
              : call.kind === 'do'
                ? `${call.binding}.${call.method}`
                : `cache ${call.op}${call.op === 'match' ? (call.hit ? ' (hit)' : ' (miss)') : ''}`;
      counts[name + after] = (counts[name + after] ?? 0) + 1 / captured.length;
    }
  return counts;
}
