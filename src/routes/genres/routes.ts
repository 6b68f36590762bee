import { createRoute, z } from '@hono/zod-openapi';
import { idParam, intParam } from '../../lib/validation';
import { GenreDetailSchema, GenreSchema } from '../../schemas/catalogue';
import { edgeCache } from '../../middleware/caching';
import { errorResponses, jsonResponse, optionalAccess } from '../../schemas/common';
import { list } from '../../schemas/fields';

/** Anonymous genre reads come from the edge cache; a token is checked as usual. */
const publicRead = { ...optionalAccess, middleware: [edgeCache, ...optionalAccess.middleware] };

const tags = ['Genres'];

export const listGenres = createRoute({
  method: 'get',
  path: '/api/v1/genres',
  operationId: 'listGenres',
  tags,
  summary: 'Active genres by name',
  description:
    'Readable without a token (then served from the edge cache for up to 60 seconds); a token, when sent, must be valid.',
  ...publicRead,
  responses: { 200: jsonResponse(list(GenreSchema, 500), 'Genres'), ...errorResponses(401, 403) },
});

export const showGenre = createRoute({
  method: 'get',
  path: '/api/v1/genres/{id}',
  operationId: 'getGenre',
  tags,
  summary: 'A genre with its most played channels',
  description:
    'Up to `limit` (1 to 100, default 50) of its most played channels. Readable without a token; an inactive genre is 404.',
  ...publicRead,
  request: {
    params: z.object({ id: idParam('id') }),
    query: z.object({
      limit: intParam({ min: 1, max: 100 }).default(50).openapi({ description: 'channels in radio_channels' }),
    }),
  },
  responses: { 200: jsonResponse(GenreDetailSchema, 'The genre'), ...errorResponses(401, 403, 404, 422) },
});
