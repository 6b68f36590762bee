import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../env';
import { created, ok, okPage } from '../../lib/envelope';
import { decodeListCursor, keysetPage } from '../../lib/list-cursor';
import { notFound } from '../../lib/errors';
import { isoTimestamp } from '../../lib/time';
import { idParam } from '../../lib/validation';
import { playlistTag } from '../../playlists/entity-tags';
import { EXPORT_FORMATS, type ExportFormat, exportFormat, toM3u, toPls } from '../../playlists/export';
import * as playlists from '../../playlists/playlists';
import { runBatch } from '../../http/batch';
import { guardedWrite } from '../../http/write';
import type * as routes from './routes';

/** A playlist as the caller may read it, with their own likes and favorites; null when they may not (or it is missing). */
function readPlaylist(c: Context<AppEnv>, id: number): Promise<playlists.PlaylistDetail | null> {
  const userId = c.get('userId') ?? 0;
  return runBatch(c, playlists.readablePlaylist(c.get('db'), id, userId, userId));
}

/** What a write to playlist `id` needs to hold: the caller's, at a version `If-Match` accepts, and `check`. */
const conditions = (c: Context<AppEnv>, id: number, check?: playlists.PlaylistCheck) =>
  playlists.playlistConditions(c.get('db'), id, c.get('userId'), c.req.header('if-match'), check);

export const listPlaylists: RouteHandler<typeof routes.listPlaylists, AppEnv> = async (c) => {
  const { limit, cursor } = c.req.valid('query');
  const after = cursor === undefined ? undefined : decodeListCursor(cursor, 'playlists');
  const rows = await runBatch(c, playlists.userPlaylists(c.get('db'), c.get('userId'), limit + 1, after));
  const { items, meta } = keysetPage(rows, limit, 'playlists', (row) => [row.created_at, row.id]);
  return okPage(c, { items, meta }, 'Playlists retrieved successfully.');
};

/**
 * The `ETag` of a playlist response: the playlist's own tag (playlists/entity-tags.ts), the
 * same on a write's response and a read's for the same version, for `If-Match`.
 */
const tagVersion = (c: Context<AppEnv>, playlist: { id: number; version: number }) =>
  c.header('ETag', playlistTag(playlist));

export const showPlaylist: RouteHandler<typeof routes.showPlaylist, AppEnv> = async (c) => {
  const detail = playlists.mustRead(await readPlaylist(c, c.req.valid('param').id));
  tagVersion(c, detail);
  return ok(c, detail, 'Playlist retrieved successfully.');
};

export const listItems: RouteHandler<typeof routes.listItems, AppEnv> = async (c) => {
  const { limit, cursor } = c.req.valid('query');
  const detail = playlists.mustRead(await readPlaylist(c, c.req.valid('param').id));
  const page = playlists.itemsPage(detail, limit, cursor);
  // Every page shows one version: it carries the playlist's tag, for If-Match, as the detail does.
  tagVersion(c, detail);
  return okPage(c, page, 'Playlist items retrieved successfully.');
};

/**
 * A playlist as a file for players. A public playlist's export needs no token (a media player or a shared link has
 * none); a private one is its owner's, as the detail is.
 */
async function sendExport(c: Context<AppEnv>, id: number, format: ExportFormat, headers: Record<string, string> = {}) {
  const detail = playlists.mustRead(await readPlaylist(c, id));
  const body = format === 'm3u' ? toM3u(detail, detail.items) : toPls(detail, detail.items);
  return c.body(body, 200, {
    ...headers,
    'Content-Type': EXPORT_FORMATS[format],
    'Content-Disposition': `inline; filename="playlist-${detail.id}.${format}"`,
  });
}

/** `GET /api/v1/playlists/{id}/export.m3u|.pls`. */
export const exportPlaylist =
  (format: ExportFormat): RouteHandler<ReturnType<typeof routes.exportPlaylist>, AppEnv> =>
  (c) =>
    sendExport(c, c.req.valid('param').id, format);

/**
 * `GET /api/v1/playlists/{id}.m3u|.pls`, deprecated (docs/api.md#playlist-exports); the path pattern guarantees
 * `<digits>.<format>`. It answers as the new path does and names it (RFC 9745's `Deprecation`, RFC 8288's `Link`).
 */
export const legacyExport = async (c: Context<AppEnv>) => {
  const [id, extension] = c.req.param('file')!.split('.');
  const format = exportFormat(extension);
  const playlistId = idParam('id').safeParse(id);
  if (!playlistId.success || !format) throw notFound('Playlist');
  return sendExport(c, playlistId.data, format, {
    Deprecation: 'true',
    Link: `</api/v1/playlists/${playlistId.data}/export.${format}>; rel="successor-version"`,
  });
};

export const createPlaylist: RouteHandler<typeof routes.createPlaylist, AppEnv> = async (c) => {
  const playlist = await guardedWrite(c, (guards) =>
    playlists.createPlaylist(c.get('db'), c.get('userId'), c.req.valid('json'), isoTimestamp(), guards),
  );
  tagVersion(c, playlist);
  return created(c, { ...playlist, items: [] }, 'Playlist created successfully.', `/api/v1/playlists/${playlist.id}`);
};

export const updatePlaylist: RouteHandler<typeof routes.updatePlaylist, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const playlist = await guardedWrite(
    c,
    (guards) => playlists.updatePlaylist(c.get('db'), id, c.get('userId'), c.req.valid('json'), isoTimestamp(), guards),
    conditions(c, id),
  );
  tagVersion(c, playlist);
  return ok(c, playlist, 'Playlist updated successfully.');
};

export const deletePlaylist: RouteHandler<typeof routes.deletePlaylist, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  await guardedWrite(
    c,
    (guards) => playlists.deletePlaylist(c.get('db'), id, c.get('userId'), guards),
    conditions(c, id),
  );
  return ok(c, null, 'Playlist deleted successfully.');
};

export const addItem: RouteHandler<typeof routes.addItem, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const { radio_channel_id, position } = c.req.valid('json');
  const detail = await guardedWrite(
    c,
    (guards) => playlists.addItem(c.get('db'), id, c.get('userId'), radio_channel_id, position, isoTimestamp(), guards),
    conditions(c, id, playlists.addItemCheck(c.get('db'), id, radio_channel_id, position)),
  );
  tagVersion(c, detail);
  return created(
    c,
    detail,
    'Radio channel added to the playlist.',
    `/api/v1/playlists/${id}/items/${radio_channel_id}`,
  );
};

export const removeItem: RouteHandler<typeof routes.removeItem, AppEnv> = async (c) => {
  const { id, channel_id } = c.req.valid('param');
  const detail = await guardedWrite(
    c,
    (guards) => playlists.removeItem(c.get('db'), id, c.get('userId'), channel_id, isoTimestamp(), guards),
    conditions(c, id, playlists.removeItemCheck(c.get('db'), id, channel_id)),
  );
  tagVersion(c, detail);
  return ok(c, detail, 'Radio channel removed from the playlist.');
};

export const reorderItems: RouteHandler<typeof routes.reorderItems, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const { items } = c.req.valid('json');
  const detail = await guardedWrite(
    c,
    (guards) => playlists.reorderItems(c.get('db'), id, c.get('userId'), items, isoTimestamp(), guards),
    conditions(c, id, playlists.reorderCheck(c.get('db'), id, items)),
  );
  tagVersion(c, detail);
  return ok(c, detail, 'Playlist reordered successfully.');
};

export const membership: RouteHandler<typeof routes.membership, AppEnv> = async (c) =>
  ok(
    c,
    await runBatch(c, playlists.membership(c.get('db'), c.req.valid('param').id, c.get('userId'))),
    'Playlist membership retrieved successfully.',
  );
