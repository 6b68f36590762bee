import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import { fieldInvalid } from '../../lib/errors';
import { findCountryByName, loadCountries, nameCompletions, searchCatalogue, completions } from '../../search/search';
import { recordSearchTerm, trendingTerms } from '../../search/trending';
import { normaliseTerm } from '../../lib/text';
import { viewerRead, withMarks } from '../../services/read-cache';
import type * as routes from './routes';

export const search: RouteHandler<typeof routes.search, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  const d1 = c.get('d1');
  let countryId = query.country_id;
  if (query.country !== undefined) {
    const country = findCountryByName(await loadCountries(d1), query.country);
    if (!country) throw fieldInvalid('country', 'The selected country does not exist.');
    if (countryId !== undefined && countryId !== country.id) throw fieldInvalid('country', 'The country does not match the country id.');
    countryId = country.id;
  }
  const search = { q: query.q, limit: query.stations_limit, categoriesLimit: query.categories_limit, genreId: query.genre_id, countryId };
  const result = await viewerRead(
    c,
    `search:${JSON.stringify(search)}`,
    (viewerId) => searchCatalogue(d1, search, viewerId),
    (value, viewer) => {
      const stations = withMarks(value.stations, viewer);
      return stations === value.stations ? value : { ...value, stations };
    },
  );
  if (result.stations.length || result.categories.length || result.countries.length) {
    // Counted after the answer is sent; the Durable Object's write is durable once it returns.
    c.executionCtx.waitUntil(recordSearchTerm(c.env, normaliseTerm(query.q), c.get('userId')).catch(() => false));
  }
  return ok(c, result, 'Search results retrieved successfully.');
};

export const suggestions: RouteHandler<typeof routes.suggestions, AppEnv> = async (c) => {
  const { q, limit } = c.req.valid('query');
  const folded = normaliseTerm(q);
  // The same for every caller: with a cached viewer, the whole list comes from the read cache.
  const list = await viewerRead(
    c,
    `suggest:${folded}:${limit}`,
    async () => {
      const [names, trending] = await Promise.all([nameCompletions(c.get('d1'), q, limit), trendingTerms(c.env, 50)]);
      return completions(folded, [...trending.map((t) => t.term), ...names.genres, ...names.channels], limit);
    },
    (value) => value,
  );
  return ok(c, list, 'Suggestions retrieved successfully.');
};

export const trending: RouteHandler<typeof routes.trending, AppEnv> = async (c) =>
  ok(c, (await trendingTerms(c.env, 10)).map((t) => t.term), 'Trending searches retrieved successfully.');
