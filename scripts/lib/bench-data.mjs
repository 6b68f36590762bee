// What the benchmarks (npm run bench, bench:cpu, bench:auth, bench:live) share: the Miniflare options of a bundle as a
// tree's wrangler.toml declares it, and what they load into it before measuring: the migrations, a synthetic catalogue
// through the API's own import, users, plays, likes and a public playlist of 50 channels.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from 'wrangler';

/** Miniflare as wrangler resolves it: the version that matches wrangler's workerd. */
export const { Miniflare } = await import(
  createRequire(createRequire(import.meta.url).resolve('wrangler/package.json')).resolve('miniflare')
);

export const pick = (list, i) => list[i % list.length];

/**
 * `fetch`, sent once more on a fresh connection when the first attempt failed on the connection itself (workerd may
 * close a kept-alive connection while a large body is being written to it: EPIPE, "other side closed"): the
 * request did not reach the Worker, or is one that can be sent twice (an import, a read).
 */
export async function fetchAgain(url, init) {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return fetch(url, init).catch((again) => {
      throw new Error(`${init?.method ?? 'GET'} ${url}: ${again.cause?.message ?? again.message}`, { cause: again });
    });
  }
}

/** The search terms both benchmarks send (common words of the synthetic catalogue's names). */
export const SEARCH_WORDS = ['radio', 'sound', 'wave', 'classic', 'groove', 'metro', 'star', 'night', 'blue', 'prime'];

/** The admin token the benchmarks give their Workers (local only). */
export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

/**
 * A tree's wrangler.toml (top level) as wrangler reads it: its vars (a developer's .dev.vars left out) and `bindings`,
 * the Miniflare options of every binding it declares, so that a binding added there reaches every benchmark.
 */
export function wranglerConfig(dir) {
  // Static Assets answer before the Worker and cost it nothing: the benchmarks send the API's paths only.
  const config = { ...unstable_readConfig({ config: `${dir}/wrangler.toml` }), assets: undefined };
  // The reader announces the .dev.vars it reads; the benchmarks leave them out, so it is kept quiet.
  const logLevel = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = 'warn';
  let options;
  try {
    options = unstable_getMiniflareWorkerOptions(config).workerOptions;
  } finally {
    if (logLevel === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = logLevel;
  }
  const { bindings: _devVars, assets: _assets, ...bindings } = options;
  return {
    compatibilityDate: config.compatibility_date,
    vars: Object.fromEntries(Object.entries(config.vars).map(([name, value]) => [name, String(value)])),
    durableObjects: bindings.durableObjects,
    bindings,
  };
}

/** What the limits are raised to: past any load a benchmark sends in a minute. */
const UNLIMITED = 100_000_000;

/**
 * Miniflare options that serve a bundle with every binding of `config`, its own D1 named `storage`, and `bindings`
 * over the vars. The limiters stay on with their limits raised past any load, so their cost stays in the figures.
 */
export const workerOptions = ({ scriptPath, config, storage, adminToken, bindings = {} }) => ({
  ...config.bindings,
  host: '127.0.0.1',
  port: 0,
  modules: true,
  scriptPath,
  compatibilityDate: config.compatibilityDate,
  d1Databases: { DB: storage },
  ratelimits: Object.fromEntries(
    Object.keys(config.bindings.ratelimits ?? {}).map((name) => [name, { simple: { limit: UNLIMITED, period: 60 } }]),
  ),
  bindings: {
    ...config.vars,
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'silent',
    REGISTER_LIMIT_PER_HOUR: '1000000',
    RATE_LIMIT_PLAYS_PER_MINUTE: String(UNLIMITED),
    RATE_LIMIT_WRITES_PER_MINUTE: String(UNLIMITED),
    RATE_LIMIT_SEARCHES_PER_MINUTE: String(UNLIMITED),
    RATE_LIMIT_READS_PER_MINUTE: String(UNLIMITED),
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: String(UNLIMITED),
    // Setting up registers accounts in parallel: they wait for their hash instead of answering 503.
    PASSWORD_HASH_WAIT_MS: '600000',
    ...bindings,
  },
});

/** Applies the `.sql` files of `dir` (drizzle/migrations of some tree) in order, to a D1 binding. */
export async function applyMigrations(db, dir) {
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort())
    for (const sql of readFileSync(`${dir}/${file}`, 'utf8').split('--> statement-breakpoint'))
      if (sql.replace(/--.*$/gm, '').trim()) await db.prepare(sql).run();
}

/**
 * Loads the catalogue through the import, then users, plays, likes, a public playlist, and waits for the play
 * counters to flush. `heavyLikes`: one more account likes that many of the most played channels.
 */
export async function loadBenchData({
  url,
  db,
  adminToken,
  stations,
  users,
  plays,
  likes,
  featuredEvery,
  flushMs,
  heavyLikes = 0,
}) {
  const api = async (method, path, token, body) => {
    const response = await fetchAgain(`${url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token ?? adminToken}`,
        ...(body ? { 'Content-Type': 'application/json' } : {}),
        'CF-Connecting-IP': '10.0.0.1',
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  for (let i = 0; i < stations.length; i += 5000)
    await api('POST', '/api/v1/admin/radios/import', undefined, stations.slice(i, i + 5000));
  await db.prepare('UPDATE radio_channels SET is_featured = 1 WHERE id % ? = 0').bind(featuredEvery).run();
  const tokens = [];
  for (let i = 0; i < users; i += 8) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(8, users - i) }, (_, j) =>
        api('POST', '/api/v1/auth/register', null, {
          name: `Bench ${i + j}`,
          email: `bench${i + j}@example.com`,
          password: 'benchmark-password',
          password_confirmation: 'benchmark-password',
        }),
      ),
    );
    tokens.push(...batch.map((data) => data.token));
  }
  const channelIds = (await db.prepare('SELECT id FROM radio_channels ORDER BY id').all()).results.map((r) => r.id);
  for (let i = 0; i < plays; i += 1)
    await api('POST', `/api/v1/radios/${pick(channelIds, i * 7919)}/play`, pick(tokens, i));
  for (let i = 0; i < likes; i += 1)
    await api('POST', `/api/v1/radios/${pick(channelIds, i * 104_729)}/like`, pick(tokens, i));
  const playlist = await api('POST', '/api/v1/playlists', tokens[0], { name: 'Bench mix', is_public: true });
  for (let i = 0; i < 50; i += 1)
    await api('POST', `/api/v1/playlists/${playlist.id}/items`, tokens[0], {
      radio_channel_id: pick(channelIds, i * 31),
    });
  await new Promise((r) => setTimeout(r, flushMs + 1500)); // the play counters flush
  let heavyToken;
  // Straight to D1, quicker than thousands of requests: the triggers keep the user's likes_count; the channels' counts
  // are raised here, as a like raises them.
  if (heavyLikes > 0) {
    const heavy = await api('POST', '/api/v1/auth/register', null, {
      name: 'Bench heavy liker',
      email: 'bench-heavy@example.com',
      password: 'benchmark-password',
      password_confirmation: 'benchmark-password',
    });
    heavyToken = heavy.token;
    const { id } = await db.prepare('SELECT id FROM users WHERE email = ?').bind('bench-heavy@example.com').first();
    await db
      .prepare(
        `INSERT INTO likes (user_id, channel_id, created_at)
         SELECT ?, id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || (row_number() OVER ()) || ' seconds')
         FROM (SELECT id FROM radio_channels ORDER BY play_count DESC, id LIMIT ?)`,
      )
      .bind(id, heavyLikes)
      .run();
    await db
      .prepare(
        'UPDATE radio_channels SET likes_count = likes_count + 1 WHERE id IN (SELECT channel_id FROM likes WHERE user_id = ?)',
      )
      .bind(id)
      .run();
  }
  return { tokens, channelIds, playlistId: playlist.id, heavyToken };
}
