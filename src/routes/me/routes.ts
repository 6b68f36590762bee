import { createRoute, z } from '@hono/zod-openapi';
import { limitQuery } from '../../lib/validation';
import { RadioSchema } from '../../schemas/catalogue';
import { errorResponses, jsonResponse, readAccess } from '../../schemas/common';

const tags = ['My listening'];

export const recent = createRoute({
  method: 'get',
  path: '/api/v1/me/radios/recent',
  tags,
  summary: 'Channels the user played, most recent first',
  ...readAccess,
  request: { query: limitQuery(50, 10) },
  responses: {
    200: jsonResponse(z.array(RadioSchema.extend({ last_played_at: z.string() })), 'Recent channels'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const top = createRoute({
  method: 'get',
  path: '/api/v1/me/radios/top',
  tags,
  summary: 'Channels the user played most',
  ...readAccess,
  request: { query: limitQuery(50, 10) },
  responses: {
    200: jsonResponse(z.array(RadioSchema.extend({ user_play_count: z.int() })), 'Top channels'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const recommended = createRoute({
  method: 'get',
  path: '/api/v1/me/radios/recommended',
  tags,
  summary: 'Channels like what the user liked, favorited and played, that they have not heard',
  ...readAccess,
  request: { query: limitQuery(50, 20) },
  responses: { 200: jsonResponse(z.array(RadioSchema), 'Recommendations'), ...errorResponses(401, 403, 422, 429) },
});

export const discover = createRoute({
  method: 'get',
  path: '/api/v1/me/radios/discover',
  tags,
  summary: 'A varied selection the user has not played, the same all day',
  ...readAccess,
  request: { query: limitQuery(50, 20) },
  responses: { 200: jsonResponse(z.array(RadioSchema), 'Discovery'), ...errorResponses(401, 403, 422, 429) },
});
