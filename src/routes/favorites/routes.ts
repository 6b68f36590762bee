import { createRoute, z } from '@hono/zod-openapi';
import { idParam, limitQuery } from '../../lib/validation';
import { RadioSchema } from '../../schemas/catalogue';
import { BODY_ERRORS, errorResponses, jsonBody, jsonResponse, readAccess, writeAccess } from '../../schemas/common';

const tags = ['Favorites'];
const FavoriteState = z.object({ is_favorited: z.boolean(), favorites_count: z.int() }).openapi('FavoriteState');
const ChannelBody = jsonBody(z.object({ radio_channel_id: z.int().min(1) }).openapi('FavoriteRequest'));
const channelParams = z.object({ id: idParam('id') });

export const listFavorites = createRoute({
  method: 'get',
  path: '/api/v1/favorites',
  tags,
  summary: "The user's favorite channels, latest first",
  ...readAccess,
  request: { query: limitQuery(500, 100) },
  responses: { 200: jsonResponse(z.array(RadioSchema), 'Favorites'), ...errorResponses(401, 403, 422, 429) },
});

export const toggleFavorite = createRoute({
  method: 'post',
  path: '/api/v1/favorites/toggle',
  tags,
  summary: 'Toggle a favorite',
  ...writeAccess,
  request: { body: ChannelBody },
  responses: {
    200: jsonResponse(FavoriteState, 'The state after the toggle'),
    ...errorResponses(...BODY_ERRORS, 401, 403, 404, 429),
  },
});

export const checkFavorite = createRoute({
  method: 'get',
  path: '/api/v1/favorites/{id}/check',
  tags,
  summary: 'Whether a channel is a favorite (the answer has no message, as the spec shows)',
  ...readAccess,
  request: { params: channelParams },
  responses: {
    200: {
      description: 'The favorite state',
      content: {
        'application/json': {
          schema: z.object({ success: z.literal(true), data: z.object({ is_favorited: z.boolean() }) }),
        },
      },
    },
    ...errorResponses(401, 403, 404, 422, 429),
  },
});

export const addFavorite = createRoute({
  method: 'post',
  path: '/api/v1/favorites',
  tags,
  summary: 'Add a favorite: 201 when added, 200 when it already was one',
  ...writeAccess,
  request: { body: ChannelBody },
  responses: {
    201: jsonResponse(FavoriteState, 'Added'),
    200: jsonResponse(FavoriteState, 'Already a favorite'),
    ...errorResponses(...BODY_ERRORS, 401, 403, 404, 429),
  },
});

export const removeFavorite = createRoute({
  method: 'delete',
  path: '/api/v1/favorites/{id}',
  tags,
  summary: 'Remove a favorite (200 whether or not it was one)',
  ...writeAccess,
  request: { params: channelParams },
  responses: { 200: jsonResponse(FavoriteState, 'Removed'), ...errorResponses(401, 403, 404, 422, 429) },
});
