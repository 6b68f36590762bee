import { createRoute, z } from '@hono/zod-openapi';
import { idParam, intParam } from '../../lib/validation';
import { GenreDetailSchema, GenreSchema } from '../../schemas/catalogue';
import { edgeCache } from '../../middleware/caching';
import { errorResponses, jsonResponse, optionalAccess } from '../../schemas/common';

/** Anonymous genre reads come from the edge cache; a token is checked as usual. */
const publicRead = { ...optionalAccess, middleware: [edgeCache, ...optionalAccess.middleware] };

const tags = ['Genres'];

export const listGenres = createRoute({
  method: 'get',
  path: '/api/v1/genres',
  tags,
  summary: 'Active genres by name (token optional)',
  ...publicRead,
  responses: { 200: jsonResponse(z.array(GenreSchema), 'Genres'), ...errorResponses(401, 403) },
});

export const showGenre = createRoute({
  method: 'get',
  path: '/api/v1/genres/{id}',
  tags,
  summary: 'A genre with its most played channels (token optional)',
  ...publicRead,
  request: {
    params: z.object({ id: idParam('id') }),
    query: z.object({
      limit: intParam({ min: 1, max: 100 }).default(50).openapi({ description: 'channels in radio_channels' }),
    }),
  },
  responses: { 200: jsonResponse(GenreDetailSchema, 'The genre'), ...errorResponses(401, 403, 404, 422) },
});
