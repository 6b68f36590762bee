import { createRoute, z } from '@hono/zod-openapi';
import { MAX_PLAYLIST_ITEMS, MAX_PLAYLISTS_PER_USER } from '../../playlists/playlists';
import { idParam, noQuery, textField } from '../../lib/validation';
import { MULTILINE, id, list, smallInt, text } from '../../schemas/fields';
import { PlaylistDetailSchema, PlaylistItemSchema, PlaylistSchema } from '../../schemas/playlists';
import {
  BODY_ERRORS,
  NullData,
  errorResponses,
  jsonBody,
  jsonResponse,
  jsonResponseWithMeta,
} from '../../schemas/common';
import { ListMetaSchema, listQuery } from '../../lib/list-cursor';
import { EXPORT_EXTENSIONS, type ExportFormat } from '../../playlists/export';
import { readAccess, writeAccess } from '../../middleware/access';

const tags = ['Playlists'];
const fields = {
  name: textField({ min: 1, max: 100 }),
  description: textField({ max: 1000, multiline: true }).nullable(),
  is_public: z.boolean(),
};
const playlistParams = z.object({ id: idParam('id') });
/** Writes that take `If-Match` and respond with the new `ETag` (routes/docs/document.ts declares both and the 412). */
const conditional = { 'x-conditional': true } as const;
const readErrors = errorResponses(401, 403, 404, 422, 429);
const writeErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, 412, 429);
const removeErrors = errorResponses(401, 403, 404, 412, 422, 429);

export const listPlaylists = createRoute({
  method: 'get',
  path: '/api/v1/playlists',
  operationId: 'listPlaylists',
  tags,
  summary: "The user's playlists, newest first",
  description: `Without items; \`limit\` 1 to ${MAX_PLAYLISTS_PER_USER} (default 50); \`cursor\`: \`meta.next_cursor\` of the page before.`,
  ...readAccess,
  request: { query: listQuery(MAX_PLAYLISTS_PER_USER, 50) },
  responses: {
    200: jsonResponseWithMeta(list(PlaylistSchema, MAX_PLAYLISTS_PER_USER), ListMetaSchema, 'A page of playlists'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const showPlaylist = createRoute({
  method: 'get',
  path: '/api/v1/playlists/{id}',
  operationId: 'getPlaylist',
  tags,
  summary: 'A playlist with its items by position',
  description:
    "The owner's playlist, or anyone's public one; someone else's private playlist is 404, as a missing one. The `ETag` carries the playlist's `version`: send it as `If-Match` with a write to make sure nobody changed the playlist in between.",
  ...readAccess,
  request: { query: noQuery, params: playlistParams },
  responses: { 200: jsonResponse(PlaylistDetailSchema, 'The playlist'), ...readErrors },
});

/** The export's answer, a file for players, as M3U or PLS. */
const exportResponses = (format: ExportFormat) => ({
  200: {
    description: 'The playlist file',
    content: {
      [format === 'm3u' ? 'audio/x-mpegurl' : 'audio/x-scpls']: {
        schema: z
          .string()
          .max(2_000_000)
          .openapi({
            pattern: MULTILINE,
            example:
              format === 'm3u'
                ? '#EXTM3U\n#EXTINF:-1,Radio Swiss Jazz\nhttps://stream.srg-ssr.ch/m/rsj/aacp_96\n'
                : '[playlist]\nFile1=https://stream.srg-ssr.ch/m/rsj/aacp_96\nTitle1=Radio Swiss Jazz\nLength1=-1\nNumberOfEntries=1\nVersion=2\n',
          }),
      },
    },
  },
  // The 429 and the RateLimit headers of the anonymous limit come with anonymousRoute (middleware/caching.ts).
  ...errorResponses(401, 403, 404, 422),
});

const exportDescription =
  'Channels in playlist order, each with its first playable stream. A public playlist needs no token (media players send none); a private one is its owner’s. Without a token, limited per client address (300 a minute); read fresh every time, kept by clients at most 60 s.';

/** The export, `GET /api/v1/playlists/{id}/export.m3u` and `/export.pls`: the link a listener shares. */
export const exportPlaylist = (format: ExportFormat) =>
  createRoute({
    method: 'get',
    path: `/api/v1/playlists/{id}/export.${format}`,
    operationId: format === 'm3u' ? 'exportPlaylistM3u' : 'exportPlaylistPls',
    tags,
    summary: format === 'm3u' ? 'The playlist as extended M3U, for players' : 'The playlist as PLS, for players',
    description: exportDescription,
    request: { query: noQuery, params: playlistParams },
    responses: exportResponses(format),
  });

/**
 * The first export paths, `GET /api/v1/playlists/{id}.m3u` and `.pls`, kept for links already shared and marked
 * deprecated: OpenAPI routers and validating proxies take them for `/playlists/{id}`. Hono serves them from one regex
 * path (src/routes/playlists/index.ts); these entries document them.
 */
export const legacyExportDocs = EXPORT_EXTENSIONS.map((format) => ({
  method: 'get' as const,
  path: `/api/v1/playlists/{id}.${format}`,
  operationId: format === 'm3u' ? 'exportPlaylistM3uLegacy' : 'exportPlaylistPlsLegacy',
  tags,
  deprecated: true,
  summary: `The playlist as ${format === 'm3u' ? 'M3U' : 'PLS'} (deprecated: use /playlists/{id}/export.${format})`,
  description: `${exportDescription} The same answer as \`/api/v1/playlists/{id}/export.${format}\`, with a \`Deprecation\` header and a \`Link\` to that path (\`rel="successor-version"\`).`,
  request: { params: playlistParams },
  responses: exportResponses(format),
}));

export const createPlaylist = createRoute({
  method: 'post',
  path: '/api/v1/playlists',
  operationId: 'createPlaylist',
  tags,
  summary: 'Create an empty playlist',
  description: `Private unless \`is_public\`. A user keeps at most ${MAX_PLAYLISTS_PER_USER} playlists (422 past that).`,
  ...writeAccess,
  request: {
    query: noQuery,
    body: jsonBody(z.object(fields).partial().required({ name: true }).openapi('PlaylistCreate')),
  },
  responses: {
    201: jsonResponse(PlaylistDetailSchema, 'The new playlist'),
    ...errorResponses(...BODY_ERRORS, 401, 403, 429),
  },
});

export const updatePlaylist = createRoute({
  method: 'put',
  path: '/api/v1/playlists/{id}',
  operationId: 'updatePlaylist',
  tags,
  summary: 'Change name, description or visibility',
  description: 'Only the fields sent change. Only the owner may write (403 for a public playlist of someone else).',
  ...writeAccess,
  ...conditional,
  request: {
    query: noQuery,
    params: playlistParams,
    body: jsonBody(z.object(fields).partial().openapi('PlaylistUpdate')),
  },
  responses: { 200: jsonResponse(PlaylistDetailSchema, 'The playlist, with its items'), ...writeErrors },
});

export const deletePlaylist = createRoute({
  method: 'delete',
  path: '/api/v1/playlists/{id}',
  operationId: 'deletePlaylist',
  tags,
  summary: 'Delete a playlist',
  description: 'The playlist and its items go.',
  ...writeAccess,
  ...conditional,
  request: { query: noQuery, params: playlistParams },
  responses: { 200: jsonResponse(NullData, 'Deleted'), ...removeErrors },
});

export const listItems = createRoute({
  method: 'get',
  path: '/api/v1/playlists/{id}/items',
  operationId: 'listPlaylistItems',
  tags,
  summary: "A page of a playlist's items, by position",
  description: `The items of \`GET /playlists/{id}\`, a page at a time: \`limit\` 1 to ${MAX_PLAYLIST_ITEMS} (default 100); \`cursor\`: \`meta.next_cursor\` of the page before. The pages show one version of the playlist: a cursor made before the playlist changed is 409 \`playlist_changed\` (read again from the first page). Its \`ETag\` is the playlist's, for \`If-Match\`.`,
  ...readAccess,
  request: { query: listQuery(MAX_PLAYLIST_ITEMS, 100), params: playlistParams },
  responses: {
    200: jsonResponseWithMeta(list(PlaylistItemSchema, MAX_PLAYLIST_ITEMS), ListMetaSchema, 'A page of items'),
    ...readErrors,
    ...errorResponses(409),
  },
});

export const addItem = createRoute({
  method: 'post',
  path: '/api/v1/playlists/{id}/items',
  operationId: 'addPlaylistItem',
  tags,
  summary: 'Add a channel to a playlist',
  description: `Appended, or inserted at \`position\` (0-based) with the later items moved down. A channel is in a playlist once (409); at most ${MAX_PLAYLIST_ITEMS} items.`,
  ...writeAccess,
  ...conditional,
  request: {
    query: noQuery,
    params: playlistParams,
    body: jsonBody(
      z
        .object({ radio_channel_id: id(), position: smallInt(0, MAX_PLAYLIST_ITEMS, 1).optional() })
        .openapi('PlaylistItemCreate'),
    ),
  },
  responses: { 201: jsonResponse(PlaylistDetailSchema, 'The playlist'), ...writeErrors, ...errorResponses(409) },
});

export const removeItem = createRoute({
  method: 'delete',
  path: '/api/v1/playlists/{id}/items/{channel_id}',
  operationId: 'removePlaylistItem',
  tags,
  summary: 'Remove a channel from a playlist',
  description: 'The later items move up one position.',
  ...writeAccess,
  ...conditional,
  request: {
    query: noQuery,
    params: z.object({ id: idParam('id'), channel_id: idParam('channel_id') }),
  },
  responses: { 200: jsonResponse(PlaylistDetailSchema, 'The playlist'), ...removeErrors },
});

export const reorderItems = createRoute({
  method: 'put',
  path: '/api/v1/playlists/{id}/reorder',
  operationId: 'reorderPlaylistItems',
  tags,
  summary: 'Move channels to new positions',
  description: 'The listed channels move to their positions; the others keep their order around them.',
  ...writeAccess,
  ...conditional,
  request: {
    query: noQuery,
    params: playlistParams,
    body: jsonBody(
      z
        .object({
          items: z
            .array(z.object({ radio_channel_id: id(), position: smallInt(0, MAX_PLAYLIST_ITEMS, 1) }))
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
  operationId: 'listPlaylistsWithRadio',
  tags,
  summary: "Which of the user's playlists hold the channel",
  description: 'For an "add to playlist" sheet: the playlists of the user that hold the channel.',
  ...readAccess,
  request: { query: noQuery, params: z.object({ id: idParam('id') }) },
  responses: {
    200: jsonResponse(
      z.object({
        is_in_playlist: z.boolean(),
        playlist_count: smallInt(0, MAX_PLAYLISTS_PER_USER, 1),
        playlists: list(
          z.object({ id: id(7), name: text(100, 'Late-night jazz'), is_public: z.boolean() }),
          MAX_PLAYLISTS_PER_USER,
        ),
      }),
      'The membership summary',
    ),
    ...readErrors,
  },
});
