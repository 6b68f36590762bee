import { config } from '../config';
import type { TermCount } from './search-trends';
import type { Bindings } from '../env';
import { requestNetwork, type Standing } from '../crowd/rules';
import { fnv1a } from '../lib/hash';

const shardCount = (env: Bindings) => config(env).searchTrendShards;
const shard = (env: Bindings, index: number) => env.SEARCH_TRENDS.get(env.SEARCH_TRENDS.idFromName(`trends-${index}`));

/**
 * Counts a search that found something, under the crowd rule (crowd/rules.ts) with the
 * network of the request and the `standing` of the user's account; a term (already normalised:
 * lib/text.ts `normaliseTerm`, so spellings of one word count as one) always lands on the same shard.
 */
export async function recordSearchTerm(
  c: { env: Bindings; req: { header(name: string): string | undefined } },
  term: string,
  user: { id: number; standing: Standing },
  now = Date.now(),
): Promise<boolean> {
  const trends = shard(c.env, fnv1a(term) % shardCount(c.env));
  return trends.record(term, String(user.id), now, requestNetwork(c), user.standing);
}

/** The `limit` most searched terms of the last 24 hours, merged from every shard. */
export async function trendingTerms(env: Bindings, limit: number): Promise<TermCount[]> {
  const perShard = await Promise.all(Array.from({ length: shardCount(env) }, (_, i) => shard(env, i).top(limit)));
  return perShard
    .flat()
    .sort((a, b) => b.count - a.count || a.term.localeCompare(b.term))
    .slice(0, limit);
}
