import { createRoute, z } from '@hono/zod-openapi';
import { flagParam, intParam, noQuery, textField } from '../../lib/validation';
import { GenreSchema, RadioSchema } from '../../schemas/catalogue';
import { errorResponses, jsonResponse } from '../../schemas/common';
import { readAccess, searchAccess } from '../../middleware/access';
import { count, countryCode, id, list, text } from '../../schemas/fields';

const tags = ['Search'];
const queryText = (min: number) => textField({ min, max: 100 });

export const search = createRoute({
  method: 'get',
  path: '/api/v1/search',
  operationId: 'search',
  tags,
  summary: 'Ranked search over stations, genres and countries',
  description:
    'Stations rank by exact name, name prefix, word prefix, substring, then plays; matching is case- and accent-insensitive. ' +
    'A query with no match answers 200 with empty groups.',
  ...searchAccess,
  request: {
    query: z.strictObject({
      q: queryText(2),
      stations_limit: intParam({ min: 1, max: 50 }).default(20),
      categories_limit: intParam({ min: 1, max: 20 }).default(10),
      genre_id: intParam({ min: 1 }).optional(),
      country_id: intParam({ min: 1 }).optional(),
      country: textField({ min: 1, max: 100 }).optional().openapi({ description: 'country name or alpha-2 code' }),
      online: flagParam().openapi({ description: '`true`: only channels whose stream is online' }),
      https: flagParam().openapi({ description: '`true`: only channels with an https stream' }),
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({
        stations: list(RadioSchema, 50),
        categories: list(GenreSchema, 20),
        countries: list(
          z.object({ id: id(41), name: text(100, 'Switzerland'), code: countryCode, stations_count: count(212) }),
          20,
        ),
        suggestions: list(text(100, 'jazz radio'), 20),
      }),
      'Search results',
    ),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const suggestions = createRoute({
  method: 'get',
  path: '/api/v1/search/suggestions',
  operationId: 'listSearchSuggestions',
  tags,
  summary: 'Completions of a partial query',
  description:
    'Trending terms first, then genre names, then station names, that start with `q`; `limit` 1 to 20, default 8.',
  ...searchAccess,
  request: { query: z.strictObject({ q: queryText(1), limit: intParam({ min: 1, max: 20 }).default(8) }) },
  responses: { 200: jsonResponse(list(text(255, 'jazz'), 20), 'Suggestions'), ...errorResponses(401, 403, 422, 429) },
});

export const trending = createRoute({
  method: 'get',
  path: '/api/v1/search/trending',
  operationId: 'listTrendingSearches',
  tags,
  summary: 'The most searched terms of the last 24 hours',
  description:
    'The 10 terms most searched (each user counted once per term and hour, each network at most 10 times) that found something.',
  ...readAccess,
  request: { query: noQuery },
  responses: { 200: jsonResponse(list(text(100, 'jazz'), 10), 'Trending terms'), ...errorResponses(401, 403, 429) },
});
