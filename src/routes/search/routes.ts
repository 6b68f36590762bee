import { createRoute, z } from '@hono/zod-openapi';
import { intParam, textField } from '../../lib/validation';
import { GenreSchema, RadioSchema } from '../../schemas/catalogue';
import { errorResponses, jsonResponse, readAccess, searchAccess } from '../../schemas/common';

const tags = ['Search'];
const queryText = (min: number) => textField({ min, max: 100 });

export const search = createRoute({
  method: 'get',
  path: '/api/v1/search',
  tags,
  summary: 'Ranked search over stations, genres and countries',
  description:
    'Stations rank by exact name, name prefix, word prefix, substring, then plays; matching is case- and accent-insensitive. ' +
    'A query with no match answers 200 with empty groups.',
  ...searchAccess,
  request: {
    query: z.object({
      q: queryText(2),
      stations_limit: intParam({ min: 1, max: 50 }).default(20),
      categories_limit: intParam({ min: 1, max: 20 }).default(10),
      genre_id: intParam({ min: 1 }).optional(),
      country_id: intParam({ min: 1 }).optional(),
      country: textField({ min: 1, max: 100 }).optional().openapi({ description: 'country name or alpha-2 code' }),
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({
        stations: z.array(RadioSchema),
        categories: z.array(GenreSchema),
        countries: z.array(z.object({ id: z.int(), name: z.string(), code: z.string(), stations_count: z.int() })),
        suggestions: z.array(z.string()),
      }),
      'Search results',
    ),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const suggestions = createRoute({
  method: 'get',
  path: '/api/v1/search/suggestions',
  tags,
  summary: 'Completions of a partial query: trending terms, genre names, station names',
  ...searchAccess,
  request: { query: z.object({ q: queryText(1), limit: intParam({ min: 1, max: 20 }).default(8) }) },
  responses: { 200: jsonResponse(z.array(z.string()), 'Suggestions'), ...errorResponses(401, 403, 422, 429) },
});

export const trending = createRoute({
  method: 'get',
  path: '/api/v1/search/trending',
  tags,
  summary: 'The 10 most searched terms of the last 24 hours',
  ...readAccess,
  responses: { 200: jsonResponse(z.array(z.string()), 'Trending terms'), ...errorResponses(401, 403, 429) },
});
