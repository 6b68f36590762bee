import { createRoute, z } from '@hono/zod-openapi';
import { CHANNEL_SORTS } from '../../catalogue/channels';
import { idParam, intParam } from '../../lib/validation';
import { PageMetaSchema, RadioSchema, languageCode } from '../../schemas/catalogue';
import { errorResponses, jsonResponse, successEnvelope, userAuth } from '../../schemas/common';

const tags = ['Radio channels'];

export const listRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios',
  tags,
  summary: 'Active channels, paginated, searchable and filterable',
  ...userAuth,
  request: {
    query: z.object({
      page: intParam({ min: 1, max: 100_000 }).default(1),
      per_page: intParam({ min: 1, max: 100 }).default(20),
      sort: z.enum(CHANNEL_SORTS).default('name').openapi({ description: 'name (A-Z), popular (plays), likes, newest; ties break on id' }),
      search: z.string().trim().min(1).max(100).optional().openapi({ description: 'in name or description, case- and accent-insensitive' }),
      country_id: intParam({ min: 1 }).optional(),
      language: languageCode.optional().openapi({ description: 'ISO 639-1 code' }),
      genre_id: intParam({ min: 1 }).optional(),
    }),
  },
  responses: {
    200: {
      description: 'A page of channels',
      content: { 'application/json': { schema: successEnvelope(z.array(RadioSchema)).extend({ meta: PageMetaSchema }) } },
    },
    ...errorResponses(401, 403, 422),
  },
});

export const featuredRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/featured',
  tags,
  summary: 'Featured channels, most played first',
  ...userAuth,
  request: { query: z.object({ limit: intParam({ min: 1, max: 50 }).default(10) }) },
  responses: { 200: jsonResponse(z.array(RadioSchema), 'Featured channels'), ...errorResponses(401, 403, 422) },
});

export const showRadio = createRoute({
  method: 'get',
  path: '/api/v1/radios/{id}',
  tags,
  summary: 'One channel',
  ...userAuth,
  request: { params: z.object({ id: idParam('id') }) },
  responses: { 200: jsonResponse(RadioSchema, 'The channel'), ...errorResponses(401, 403, 404, 422) },
});
