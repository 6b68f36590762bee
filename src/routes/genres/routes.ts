import { createRoute, z } from '@hono/zod-openapi';
import { idParam, intParam, noQuery } from '../../lib/validation';
import { GenreDetailSchema, GenreSchema } from '../../schemas/catalogue';
import { PUBLIC_MAX_AGE, anonymousRoute } from '../../middleware/caching';
import { localiseNames } from '../../middleware/language';
import { errorResponses, jsonResponse } from '../../schemas/common';
import { list } from '../../schemas/fields';

const tags = ['Genres'];

const genreQuery = z.strictObject({
  limit: intParam({ min: 1, max: 100 }).default(50).openapi({ description: 'channels in radio_channels' }),
});

export const listGenres = createRoute(
  anonymousRoute(
    {
      method: 'get',
      path: '/api/v1/genres',
      operationId: 'listGenres',
      tags,
      summary: 'Active genres by name',
      description:
        "Named and ordered in the caller's language (`Accept-Language`; English where a genre has no translation). Readable without a token: then served from a shared copy per language, up to 60 seconds old, and limited per client address. A token, when sent, must be valid.",
      request: { query: noQuery },
      middleware: [localiseNames],
      responses: { 200: jsonResponse(list(GenreSchema, 500), 'Genres'), ...errorResponses(401, 403) },
    },
    { maxAge: PUBLIC_MAX_AGE, perLanguage: true },
  ),
);

export const showGenre = createRoute(
  anonymousRoute(
    {
      method: 'get',
      path: '/api/v1/genres/{id}',
      operationId: 'getGenre',
      tags,
      summary: 'A genre with its most played channels',
      description:
        "Up to `limit` (1 to 100, default 50) of its most played channels; its name in the caller's language (`Accept-Language`). Readable without a token (a shared copy per `limit` and language, up to 60 seconds old; limited per client address); an inactive genre is 404.",
      request: { params: z.object({ id: idParam('id') }), query: genreQuery },
      middleware: [localiseNames],
      responses: { 200: jsonResponse(GenreDetailSchema, 'The genre'), ...errorResponses(401, 403, 404, 422) },
    },
    { maxAge: PUBLIC_MAX_AGE, perLanguage: true },
  ),
);
