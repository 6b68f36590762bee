import type { RouteHandler } from '@hono/zod-openapi';
import { sharedChannels, sharedCopy } from '../../catalogue/shared-lists';
import type { AppEnv } from '../../env';
import { runBatch } from '../../http/batch';
import { ok } from '../../lib/envelope';
import { fieldInvalid } from '../../lib/errors';
import { normaliseTerm } from '../../lib/text';
import { completions, findCountryByName, nameCompletions, searchCatalogue } from '../../search/search';
import { recordSearchTerm, trendingTerms } from '../../search/trending';
import { accountStanding } from '../../crowd/rules';
import type * as routes from './routes';

export const search: RouteHandler<typeof routes.search, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  let countryId = query.country_id;
  if (query.country !== undefined) {
    const country = findCountryByName(query.country);
    if (!country) throw fieldInvalid('country', 'The selected country does not exist.');
    if (countryId !== undefined && countryId !== country.id)
      throw fieldInvalid('country', 'The country does not match the country id.');
    countryId = country.id;
  }
  const term = normaliseTerm(query.q);
  if (term.length < 2) throw fieldInvalid('q', 'The q field must contain at least 2 letters or digits.');
  const search = {
    q: query.q,
    limit: query.stations_limit,
    categoriesLimit: query.categories_limit,
    genreId: query.genre_id,
    countryId,
    online: query.online,
    https: query.https,
  };
  // The stations are a shared list; the genres, countries and suggestions the rest of its copy.
  const { items: stations, rest } = await sharedChannels(c, 'search', { ...search, q: term }, [], async () => {
    const { stations: items, ...others } = await runBatch(c, searchCatalogue(c.get('db'), search, c.get('userId')));
    return { items, rest: others };
  });
  const result = { stations, ...rest };
  if (result.stations.length || result.categories.length || result.countries.length) {
    // Counted after the response is sent; the Durable Object's write is durable once it returns. The account's row
    // came with the stations' batch: its age decides how it counts (crowd/rules.ts).
    const now = Date.now();
    const user = { id: c.get('userId'), standing: accountStanding(c.get('user'), now) };
    c.executionCtx.waitUntil(recordSearchTerm(c, term, user, now).catch(() => false));
  }
  return ok(c, result, 'Search results retrieved successfully.');
};

export const suggestions: RouteHandler<typeof routes.suggestions, AppEnv> = async (c) => {
  const { q, limit } = c.req.valid('query');
  const folded = normaliseTerm(q);
  if (folded === '') throw fieldInvalid('q', 'The q field must contain letters or digits.');
  const list = await sharedCopy(c, 'suggestions', { q: folded, limit }, async () => {
    const [names, trending] = await Promise.all([
      runBatch(c, nameCompletions(c.get('db'), q, limit)),
      trendingTerms(c.env, 50),
    ]);
    return completions(folded, [...trending.map((t) => t.term), ...names.genres, ...names.channels], limit);
  });
  return ok(c, list, 'Suggestions retrieved successfully.');
};

export const trending: RouteHandler<typeof routes.trending, AppEnv> = async (c) => {
  const terms = await sharedCopy(c, 'trending-terms', {}, async () =>
    (await trendingTerms(c.env, 10)).map((t) => t.term),
  );
  return ok(c, terms, 'Trending searches retrieved successfully.');
};
