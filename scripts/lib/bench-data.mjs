// What the benchmarks (npm run bench, npm run bench:cpu) share: the Miniflare options of a bundle as a tree's
// wrangler.toml declares it, and what they load into it before measuring: the migrations, a synthetic catalogue
// through the API's own import, users, plays, likes and a public playlist of 50 channels.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** Miniflare as wrangler resolves it: the version that matches wrangler's workerd. */
export const { Miniflare } = await import(
  createRequire(createRequire(import.meta.url).resolve('wrangler/package.json')).resolve('miniflare')
);

export const pick = (list, i) => list[i % list.length];

/** The search terms both benchmarks send (common words of the synthetic catalogue's names). */
export const SEARCH_WORDS = ['radio', 'sound', 'wave', 'classic', 'groove', 'metro', 'star', 'night', 'blue', 'prime'];

/** The admin token the benchmarks give their Workers (local only). */
export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

/** What a tree's wrangler.toml declares (top level): compatibility date, vars, Durable Objects, KV namespaces. */
export function wranglerConfig(dir) {
  const toml = readFileSync(`${dir}/wrangler.toml`, 'utf8');
  const vars = Object.fromEntries(
    [
      ...toml
        .split('[vars]')[1]
        .split('\n[')[0]
        .matchAll(/^(\w+)\s*=\s*"([^"]*)"/gm),
    ].map((m) => [m[1], m[2]]),
  );
  const durableObjects = Object.fromEntries(
    [...toml.matchAll(/name\s*=\s*"(\w+)"\s*\n\s*class_name\s*=\s*"(\w+)"/g)].map((m) => [
      m[1],
      { className: m[2], useSQLite: true },
    ]),
  );
  const kv = [...toml.matchAll(/\[\[kv_namespaces\]\]\s*\n\s*binding\s*=\s*"(\w+)"/g)].map((m) => m[1]);
  return {
    compatibilityDate: /compatibility_date\s*=\s*"([^"]+)"/.exec(toml)[1],
    vars,
    durableObjects,
    kvNamespaces: Object.fromEntries(kv.map((name) => [name, name])),
  };
}

/**
 * Miniflare options that serve a bundle (`scriptPath`) with the bindings of `config`
 * (wranglerConfig), its own D1 named `storage`, and `bindings` over the vars. The
 * limiters stay on, their limits raised past any load (docs/performance.md#what-npm-run-bench-measures): their
 * cost stays in the figures.
 */
export const workerOptions = ({ scriptPath, config, storage, adminToken, bindings = {} }) => ({
  host: '127.0.0.1',
  port: 0,
  modules: true,
  scriptPath,
  // The Durable Objects' migrations are bundled as text modules (wrangler.toml [[rules]]).
  modulesRules: [{ type: 'Text', include: ['**/*.sql'] }],
  compatibilityDate: config.compatibilityDate,
  compatibilityFlags: ['nodejs_compat'],
  d1Databases: { DB: storage },
  kvNamespaces: config.kvNamespaces,
  durableObjects: config.durableObjects,
  bindings: {
    ...config.vars,
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'silent',
    REGISTER_LIMIT_PER_HOUR: '1000000',
    RATE_LIMIT_PLAYS_PER_MINUTE: '100000000',
    RATE_LIMIT_WRITES_PER_MINUTE: '100000000',
    RATE_LIMIT_SEARCHES_PER_MINUTE: '100000000',
    RATE_LIMIT_READS_PER_MINUTE: '100000000',
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
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
 * Loads `stations` through the import (5,000 per request), marks every `featuredEvery`th
 * channel featured, registers `users` accounts (8 at a time), plays `plays` and likes
 * `likes` channels spread over them, builds a public playlist, and waits for the play
 * counters to flush (`flushMs`). Answers `{ tokens, channelIds, playlistId }`.
 */
export async function loadBenchData({ url, db, adminToken, stations, users, plays, likes, featuredEvery, flushMs }) {
  const api = async (method, path, token, body) => {
    const response = await fetch(`${url}${path}`, {
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
  return { tokens, channelIds, playlistId: playlist.id };
}
