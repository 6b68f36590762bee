import type { Context } from 'hono';
import { CacheNamespace } from '../cache/namespace';
import { fixed } from '../cache/shared';
import { config } from '../config';
import type { TermCount } from '../durable-objects/search-trends';
import type { AppEnv, Bindings } from '../env';
import { requestNetwork } from '../lib/crowd';
import { fnv1a } from '../lib/hash';

const shardCount = (env: Bindings) => config(env).searchTrendShards;
const shard = (env: Bindings, index: number) => env.SEARCH_TRENDS.get(env.SEARCH_TRENDS.idFromName(`trends-${index}`));

const HOUR_MS = 3_600_000;

/**
 * Searches this isolate already counted in the current hour. The shard counts a user
 * once per term per hour anyway; remembering it here saves the call for the repeats.
 * (A record of what was done, not a cache of data: it never goes stale.)
 */
const countedThisHour = new CacheNamespace<true>('countedSearches', { windows: fixed(HOUR_MS), max: 10_000 });

/**
 * Counts a search that found something, under the crowd rule (lib/crowd.ts) with the
 * network of the request; a term (already normalised: lib/text.ts `normaliseTerm`, so
 * spellings of one word count as one) always lands on the same shard.
 */
export async function recordSearchTerm(
  c: { env: Bindings; req: { header(name: string): string | undefined } },
  term: string,
  userId: number,
  now = Date.now(),
): Promise<boolean> {
  const key = `${Math.floor(now / HOUR_MS)}:${userId}:${term}`;
  if (countedThisHour.get(undefined, key, now)) return false;
  const trends = shard(c.env, fnv1a(term) % shardCount(c.env));
  const counted = await trends.record(term, String(userId), now, requestNetwork(c));
  countedThisHour.set(key, true, now);
  return counted;
}

/** Merged trending search terms, 2 s: one fan-out per isolate and window. */
const mergedTerms = new CacheNamespace<TermCount[], Bindings>('trendingTerms', { windows: fixed(1000, 1000), max: 20 });

/** The `limit` most searched terms of the last 24 hours, merged from every shard (`mergedTerms`, 2 s). */
export function trendingTerms(c: Context<AppEnv>, limit: number): Promise<TermCount[]> {
  return mergedTerms.swr(c, String(limit), async () => {
    const perShard = await Promise.all(Array.from({ length: shardCount(c.env) }, (_, i) => shard(c.env, i).top(limit)));
    return perShard
      .flat()
      .sort((a, b) => b.count - a.count || a.term.localeCompare(b.term))
      .slice(0, limit);
  });
}
