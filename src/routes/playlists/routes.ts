import { createRoute, z } from '@hono/zod-openapi';
import { MAX_PLAYLIST_ITEMS } from '../../playlists/playlists';
import { idParam, textField } from '../../lib/validation';
import { PlaylistDetailSchema, PlaylistSchema } from '../../schemas/playlists';
import {
  BODY_ERRORS,
  NullData,
  errorResponses,
  jsonBody,
  jsonResponse,
  readAccess,
  writeAccess,
} from '../../schemas/common';

const tags = ['Playlists'];
const fields = {
  name: textField({ min: 1, max: 100 }),
  description: textField({ max: 1000, multiline: true }).nullable(),
  is_public: z.boolean(),
};
const playlistParams = z.object({ id: idParam('id') });
const readErrors = errorResponses(401, 403, 404, 422, 429);
const writeErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, 429);

export const listPlaylists = createRoute({
  method: 'get',
  path: '/api/v1/playlists',
  tags,
  summary: "The user's playlists, newest first",
  ...readAccess,
  responses: { 200: jsonResponse(z.array(PlaylistSchema), 'Playlists'), ...errorResponses(401, 403, 429) },
});

export const showPlaylist = createRoute({
  method: 'get',
  path: '/api/v1/playlists/{id}',
  tags,
  summary: "A playlist with its items by position (the owner's, or a public one)",
  ...readAccess,
  request: { params: playlistParams },
  responses: { 200: jsonResponse(PlaylistDetailSchema, 'The playlist'), ...readErrors },
});

/**
 * The export: `GET /api/v1/playlists/{id}.m3u` and `.pls`. Hono serves it from one
 * regex path (src/routes/playlists/index.ts); these entries document it.
 */
export const exportPlaylistDocs = (['m3u', 'pls'] as const).map((format) => ({
  method: 'get' as const,
  path: `/api/v1/playlists/{id}.${format}`,
  tags,
  summary: format === 'm3u' ? 'The playlist as extended M3U, for players' : 'The playlist as PLS, for players',
  description:
    'Channels in playlist order. A public playlist needs no token (media players send none); a private one is its owner’s.',
  security: [{}, { bearerAuth: [] }] as Record<string, string[]>[],
  request: { params: playlistParams },
  responses: {
    200: {
      description: 'The playlist file',
      content: { [format === 'm3u' ? 'audio/x-mpegurl' : 'audio/x-scpls']: { schema: z.string() } },
    },
    ...readErrors,
  },
}));

export const createPlaylist = createRoute({
  method: 'post',
  path: '/api/v1/playlists',
  tags,
  summary: 'Create an empty playlist (private unless is_public)',
  ...writeAccess,
  request: { body: jsonBody(z.object(fields).partial().required({ name: true }).openapi('PlaylistCreate')) },
  responses: {
    201: jsonResponse(PlaylistDetailSchema, 'The new playlist'),
    ...errorResponses(...BODY_ERRORS, 401, 403, 429),
  },
});

export const updatePlaylist = createRoute({
  method: 'put',
  path: '/api/v1/playlists/{id}',
  tags,
  summary: 'Change name, description or is_public (only the given fields)',
  ...writeAccess,
  request: { params: playlistParams, body: jsonBody(z.object(fields).partial().openapi('PlaylistUpdate')) },
  responses: { 200: jsonResponse(PlaylistSchema, 'The playlist'), ...writeErrors },
});

export const deletePlaylist = createRoute({
  method: 'delete',
  path: '/api/v1/playlists/{id}',
  tags,
  summary: 'Delete a playlist',
  ...writeAccess,
  request: { params: playlistParams },
  responses: { 200: jsonResponse(NullData, 'Deleted'), ...readErrors },
});

export const addItem = createRoute({
  method: 'post',
  path: '/api/v1/playlists/{id}/items',
  tags,
  summary: 'Add a channel: appended, or inserted at `position` with the rest shifted down',
  ...writeAccess,
  request: {
    params: playlistParams,
    body: jsonBody(
      z.object({ radio_channel_id: z.int().min(1), position: z.int().min(0).optional() }).openapi('PlaylistItemCreate'),
    ),
  },
  responses: { 201: jsonResponse(PlaylistDetailSchema, 'The playlist'), ...writeErrors, ...errorResponses(409) },
});

export const removeItem = createRoute({
  method: 'delete',
  path: '/api/v1/playlists/{id}/items/{channel_id}',
  tags,
  summary: 'Remove a channel; later items move up',
  ...writeAccess,
  request: { params: z.object({ id: idParam('id'), channel_id: idParam('channel_id') }) },
  responses: { 200: jsonResponse(PlaylistDetailSchema, 'The playlist'), ...readErrors },
});

export const reorderItems = createRoute({
  method: 'put',
  path: '/api/v1/playlists/{id}/reorder',
  tags,
  summary: 'Move the listed channels to their positions; the others keep their order',
  ...writeAccess,
  request: {
    params: playlistParams,
    body: jsonBody(
      z
        .object({
          items: z
            .array(z.object({ radio_channel_id: z.int().min(1), position: z.int().min(0) }))
            .min(1)
            .max(MAX_PLAYLIST_ITEMS),
        })
        .openapi('PlaylistReorder'),
    ),
  },
  responses: { 200: jsonResponse(PlaylistDetailSchema, 'The playlist'), ...writeErrors },
});

export const membership = createRoute({
  method: 'get',
  path: '/api/v1/radios/{id}/playlists',
  tags,
  summary: "Which of the user's playlists hold the channel",
  ...readAccess,
  request: { params: z.object({ id: idParam('id') }) },
  responses: {
    200: jsonResponse(
      z.object({
        is_in_playlist: z.boolean(),
        playlist_count: z.int(),
        playlists: z.array(z.object({ id: z.int(), name: z.string(), is_public: z.boolean() })),
      }),
      'The membership summary',
    ),
    ...readErrors,
  },
});
