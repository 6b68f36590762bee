import { createRoute, z } from '@hono/zod-openapi';
import { ListMetaSchema, listQuery } from '../../lib/list-cursor';
import { idParam, noQuery } from '../../lib/validation';
import { RadioSchema } from '../../schemas/catalogue';
import { BODY_ERRORS, errorResponses, jsonBody, jsonResponse, jsonResponseWithMeta } from '../../schemas/common';
import { readAccess, writeAccess } from '../../middleware/access';
import { count, id, list } from '../../schemas/fields';

const tags = ['Favorites'];
const FavoriteState = z.object({ is_favorited: z.boolean(), favorites_count: count(214) }).openapi('FavoriteState');
const ChannelBody = jsonBody(z.object({ radio_channel_id: id() }).openapi('FavoriteRequest'));
const channelParams = z.object({ id: idParam('id') });

export const listFavorites = createRoute({
  method: 'get',
  path: '/api/v1/favorites',
  operationId: 'listFavorites',
  tags,
  summary: "The user's favorite channels, latest first",
  description: '`limit` 1 to 500 (default 100); `cursor`: `meta.next_cursor` of the page before.',
  ...readAccess,
  request: { query: listQuery(500, 100) },
  responses: {
    200: jsonResponseWithMeta(list(RadioSchema, 500), ListMetaSchema, 'A page of favorites'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const toggleFavorite = createRoute({
  method: 'post',
  path: '/api/v1/favorites/toggle',
  operationId: 'toggleFavorite',
  tags,
  summary: 'Toggle a favorite',
  description:
    'Adds the channel to the favorites when it is not one, removes it when it is. Send an `Idempotency-Key` so that a retry never toggles back.',
  ...writeAccess,
  request: { query: noQuery, body: ChannelBody },
  responses: {
    200: jsonResponse(FavoriteState, 'The state after the toggle'),
    ...errorResponses(...BODY_ERRORS, 401, 403, 404, 429),
  },
});

export const checkFavorite = createRoute({
  method: 'get',
  path: '/api/v1/favorites/{id}/check',
  operationId: 'checkFavorite',
  tags,
  summary: 'Whether a channel is a favorite',
  description: 'The answer has no `message`, as the specification shows.',
  ...readAccess,
  request: { query: noQuery, params: channelParams },
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
  operationId: 'addFavorite',
  tags,
  summary: 'Add a favorite',
  description: '201 when the channel was added, 200 when it already was a favorite (nothing changes).',
  ...writeAccess,
  request: { query: noQuery, body: ChannelBody },
  responses: {
    201: jsonResponse(FavoriteState, 'Added'),
    200: jsonResponse(FavoriteState, 'Already a favorite'),
    ...errorResponses(...BODY_ERRORS, 401, 403, 404, 429),
  },
});

export const removeFavorite = createRoute({
  method: 'delete',
  path: '/api/v1/favorites/{id}',
  operationId: 'removeFavorite',
  tags,
  summary: 'Remove a favorite',
  description: '200 whether or not the channel was a favorite; 404 when the channel does not exist.',
  ...writeAccess,
  request: { query: noQuery, params: channelParams },
  responses: { 200: jsonResponse(FavoriteState, 'Removed'), ...errorResponses(401, 403, 404, 422, 429) },
});
