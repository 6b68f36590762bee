import { createRoute } from '@hono/zod-openapi';
import { limitQuery } from '../../lib/validation';
import { RadioSchema } from '../../schemas/catalogue';
import { errorResponses, jsonResponse, jsonResponseWithMeta } from '../../schemas/common';
import { ListMetaSchema, listQuery } from '../../lib/list-cursor';
import { readAccess } from '../../middleware/access';
import { count, list, timestamp } from '../../schemas/fields';

const tags = ['My listening'];

export const recent = createRoute({
  method: 'get',
  path: '/api/v1/me/radios/recent',
  operationId: 'listRecentRadios',
  tags,
  summary: 'Channels the user played, most recent first',
  description:
    'Each channel once, at its latest play (`last_played_at`); `limit` 1 to 50, default 10; `cursor`: `meta.next_cursor` of the page before. A channel played again while you page moves to the top: a walk from the first page sees it there.',
  ...readAccess,
  request: { query: listQuery(50, 10) },
  responses: {
    200: jsonResponseWithMeta(
      list(RadioSchema.extend({ last_played_at: timestamp }), 50),
      ListMetaSchema,
      'A page of recent channels',
    ),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const top = createRoute({
  method: 'get',
  path: '/api/v1/me/radios/top',
  operationId: 'listTopRadios',
  tags,
  summary: 'Channels the user played most',
  description: 'By the number of plays of this user (`user_play_count`); `limit` 1 to 50, default 10.',
  ...readAccess,
  request: { query: limitQuery(50, 10) },
  responses: {
    200: jsonResponse(list(RadioSchema.extend({ user_play_count: count(23) }), 50), 'Top channels'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const recommended = createRoute({
  method: 'get',
  path: '/api/v1/me/radios/recommended',
  operationId: 'listRecommendedRadios',
  tags,
  summary: 'Channels like the ones the user likes, not heard yet',
  description:
    'Channels sharing genres, country or language with what the user liked, favorited and played, which the user has not played; popular channels for a new user. `limit` 1 to 50, default 20.',
  ...readAccess,
  request: { query: limitQuery(50, 20) },
  responses: { 200: jsonResponse(list(RadioSchema, 50), 'Recommendations'), ...errorResponses(401, 403, 422, 429) },
});

export const discover = createRoute({
  method: 'get',
  path: '/api/v1/me/radios/discover',
  operationId: 'listDiscoveryRadios',
  tags,
  summary: 'A varied selection the user has not played',
  description:
    'Featured channels first, then at most two per genre across as many genres as possible, none the user played; the same for a user all day. `limit` 1 to 50, default 20.',
  ...readAccess,
  request: { query: limitQuery(50, 20) },
  responses: { 200: jsonResponse(list(RadioSchema, 50), 'Discovery'), ...errorResponses(401, 403, 422, 429) },
});
