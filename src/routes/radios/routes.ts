import { createRoute, z } from '@hono/zod-openapi';
import { CHANNEL_SORTS } from '../../catalogue/channels';
import { idParam, intParam, limitQuery, textField } from '../../lib/validation';
import { PageMetaSchema, RadioSchema, languageCode } from '../../schemas/catalogue';
import { requireToken } from '../../middleware/auth';
import { userRateLimit } from '../../middleware/rate-limit';
import {
  NullData,
  errorResponses,
  jsonResponse,
  playAccess,
  successEnvelope,
  writeAccess,
  readAccess,
} from '../../schemas/common';

const tags = ['Radio channels'];

export const listRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios',
  tags,
  summary: 'Active channels, paginated, searchable and filterable',
  ...readAccess,
  // A list with `search` is a search (contract 10).
  middleware: [requireToken, userRateLimit((c) => (c.req.query('search') === undefined ? 'reads' : 'searches'))],
  request: {
    query: z.object({
      page: intParam({ min: 1, max: 100_000 }).default(1),
      per_page: intParam({ min: 1, max: 100 }).default(20),
      sort: z
        .enum(CHANNEL_SORTS)
        .default('name')
        .openapi({ description: 'name (A-Z), popular (plays), likes, newest; ties break on id' }),
      search: textField({ min: 1, max: 100 })
        .optional()
        .openapi({ description: 'in name or description, case- and accent-insensitive' }),
      country_id: intParam({ min: 1 }).optional(),
      language: languageCode.optional().openapi({ description: 'ISO 639-1 code' }),
      genre_id: intParam({ min: 1 }).optional(),
      cursor: z.string().min(1).max(512).optional().openapi({
        description: '`meta.next_cursor` of the previous page: the next page, at any depth (without `search`)',
      }),
    }),
  },
  responses: {
    200: {
      description: 'A page of channels',
      content: {
        'application/json': { schema: successEnvelope(z.array(RadioSchema)).extend({ meta: PageMetaSchema }) },
      },
    },
    ...errorResponses(401, 403, 422, 429),
  },
});

export const featuredRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/featured',
  tags,
  summary: 'Featured channels, most played first',
  ...readAccess,
  request: { query: z.object({ limit: intParam({ min: 1, max: 50 }).default(10) }) },
  responses: { 200: jsonResponse(z.array(RadioSchema), 'Featured channels'), ...errorResponses(401, 403, 422, 429) },
});

export const showRadio = createRoute({
  method: 'get',
  path: '/api/v1/radios/{id}',
  tags,
  summary: 'One channel',
  ...readAccess,
  request: { params: z.object({ id: idParam('id') }) },
  responses: { 200: jsonResponse(RadioSchema, 'The channel'), ...errorResponses(401, 403, 404, 422, 429) },
});

export const trendingRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/trending',
  tags,
  summary: 'Channels with the most plays in the last `hours` hours',
  ...readAccess,
  request: {
    query: z.object({
      hours: intParam({ min: 1, max: 168 }).default(24),
      limit: intParam({ min: 1, max: 100 }).default(20),
    }),
  },
  responses: {
    200: jsonResponse(z.array(RadioSchema.extend({ recent_plays: z.int() })), 'Trending channels'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const chartRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/charts',
  tags,
  summary: 'Top channels by plays or likes in a period',
  ...readAccess,
  request: {
    query: z.object({
      metric: z.enum(['plays', 'likes']).default('plays'),
      period: z.enum(['24h', '7d', '30d']).default('7d'),
      limit: intParam({ min: 1, max: 100 }).default(50),
    }),
  },
  responses: {
    200: jsonResponse(z.array(RadioSchema.extend({ rank: z.int(), score: z.int() })), 'The chart'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const likedRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/liked',
  tags,
  summary: 'Channels the user liked, latest first',
  ...readAccess,
  request: { query: limitQuery(100, 20) },
  responses: { 200: jsonResponse(z.array(RadioSchema), 'Liked channels'), ...errorResponses(401, 403, 422, 429) },
});

const channelParams = z.object({ id: idParam('id') });

export const playRadio = createRoute({
  method: 'post',
  path: '/api/v1/radios/{id}/play',
  tags,
  summary: 'Record a play (a repeat within 60 seconds is acknowledged, not counted)',
  ...playAccess,
  request: { params: channelParams },
  responses: { 200: jsonResponse(NullData, 'The play was tracked'), ...errorResponses(401, 403, 404, 422, 429) },
});

export const likeRadio = createRoute({
  method: 'post',
  path: '/api/v1/radios/{id}/like',
  tags,
  summary: 'Toggle the like of a channel',
  ...writeAccess,
  request: { params: channelParams },
  responses: {
    200: jsonResponse(z.object({ is_liked: z.boolean(), likes_count: z.int() }), 'The like state after the toggle'),
    ...errorResponses(401, 403, 404, 422, 429),
  },
});
