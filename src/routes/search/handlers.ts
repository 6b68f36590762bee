import type { RouteHandler } from '@hono/zod-openapi';
import { cache } from '../../cache';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import { fieldInvalid } from '../../lib/errors';
import { normaliseTerm } from '../../lib/text';
import { activeCountries, completions, findCountryByName, nameCompletions, searchCatalogue } from '../../search/search';
import { recordSearchTerm, trendingTerms } from '../../search/trending';
import { withAccountCheck } from '../../services/caller';
import type * as routes from './routes';

export const search: RouteHandler<typeof routes.search, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  const countryList = await activeCountries(c);
  let countryId = query.country_id;
  if (query.country !== undefined) {
    const country = findCountryByName(countryList, query.country);
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
  const result = await cache.searches.swr(c, JSON.stringify({ ...search, q: term }), (viewerId) =>
    withAccountCheck(c, searchCatalogue(c.get('db'), search, countryList, viewerId)),
  );
  if (result.stations.length || result.categories.length || result.countries.length) {
    // Counted after the response is sent; the Durable Object's write is durable once it returns.
    c.executionCtx.waitUntil(recordSearchTerm(c, term, c.get('userId')).catch(() => false));
  }
  return ok(c, result, 'Search results retrieved successfully.');
};

export const suggestions: RouteHandler<typeof routes.suggestions, AppEnv> = async (c) => {
  const { q, limit } = c.req.valid('query');
  const folded = normaliseTerm(q);
  if (folded === '') throw fieldInvalid('q', 'The q field must contain letters or digits.');
  const list = await cache.suggestions.swr(c, `${folded}:${limit}`, async () => {
    const [names, trending] = await Promise.all([
      withAccountCheck(c, nameCompletions(c.get('db'), q, limit)),
      trendingTerms(c, 50),
    ]);
    return completions(folded, [...trending.map((t) => t.term), ...names.genres, ...names.channels], limit);
  });
  return ok(c, list, 'Suggestions retrieved successfully.');
};

export const trending: RouteHandler<typeof routes.trending, AppEnv> = async (c) =>
  ok(
    c,
    (await trendingTerms(c, 10)).map((t) => t.term),
    'Trending searches retrieved successfully.',
  );
