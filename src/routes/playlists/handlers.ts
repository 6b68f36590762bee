import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../../env';
import { created, ok } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import { isoTimestamp } from '../../lib/time';
import { idParam } from '../../lib/validation';
import { EXPORT_FORMATS, toM3u, toPls, type ExportFormat } from '../../playlists/export';
import * as playlists from '../../playlists/playlists';
import { viewerRead, withMarks } from '../../services/read-cache';
import type * as routes from './routes';

export const listPlaylists: RouteHandler<typeof routes.listPlaylists, AppEnv> = async (c) =>
  ok(c, await playlists.listPlaylists(c.get('d1'), c.get('userId')), 'Playlists retrieved successfully.');

export const showPlaylist: RouteHandler<typeof routes.showPlaylist, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const detail = await viewerRead(
    c,
    `playlist:${id}`,
    (viewerId) => playlists.loadPlaylistDetail(c.get('d1'), id, viewerId),
    (value, viewer) => {
      const channels = value?.items.map((item) => item.radio_channel) ?? [];
      const marked = withMarks(channels, viewer);
      if (!value || marked === channels) return value;
      return { ...value, items: value.items.map((item, i) => ({ ...item, radio_channel: marked[i]! })) };
    },
  );
  return ok(c, playlists.readableDetail(detail, c.get('userId')), 'Playlist retrieved successfully.');
};

/** `GET /api/v1/playlists/{id}.m3u|.pls`; the path pattern guarantees `<digits>.<format>`. */
export const exportPlaylist = async (c: Context<AppEnv>) => {
  const [id, format] = c.req.param('file')!.split('.') as [string, ExportFormat];
  const playlistId = idParam('id').safeParse(id);
  if (!playlistId.success) throw notFound('Playlist');
  const detail = await playlists.findPlaylistDetail(c.get('d1'), playlistId.data, c.get('userId'));
  const body = format === 'm3u' ? toM3u(detail, detail.items) : toPls(detail, detail.items);
  return c.body(body, 200, {
    'Content-Type': EXPORT_FORMATS[format],
    'Content-Disposition': `inline; filename="playlist-${detail.id}.${format}"`,
  });
};

export const createPlaylist: RouteHandler<typeof routes.createPlaylist, AppEnv> = async (c) => {
  const playlist = await playlists.createPlaylist(c.get('d1'), c.get('userId'), c.req.valid('json'), isoTimestamp());
  return created(c, { ...playlist, items: [] }, 'Playlist created successfully.');
};

export const updatePlaylist: RouteHandler<typeof routes.updatePlaylist, AppEnv> = async (c) =>
  ok(
    c,
    await playlists.updatePlaylist(c.get('d1'), c.req.valid('param').id, c.get('userId'), c.req.valid('json'), isoTimestamp()),
    'Playlist updated successfully.',
  );

export const deletePlaylist: RouteHandler<typeof routes.deletePlaylist, AppEnv> = async (c) => {
  await playlists.deletePlaylist(c.get('d1'), c.req.valid('param').id, c.get('userId'));
  return ok(c, null, 'Playlist deleted successfully.');
};

export const addItem: RouteHandler<typeof routes.addItem, AppEnv> = async (c) => {
  const { radio_channel_id, position } = c.req.valid('json');
  const detail = await playlists.addItem(c.get('d1'), c.req.valid('param').id, c.get('userId'), radio_channel_id, position, isoTimestamp());
  return created(c, detail, 'Radio channel added to the playlist.');
};

export const removeItem: RouteHandler<typeof routes.removeItem, AppEnv> = async (c) => {
  const { id, channel_id } = c.req.valid('param');
  return ok(c, await playlists.removeItem(c.get('d1'), id, c.get('userId'), channel_id, isoTimestamp()), 'Radio channel removed from the playlist.');
};

export const reorderItems: RouteHandler<typeof routes.reorderItems, AppEnv> = async (c) =>
  ok(
    c,
    await playlists.reorderItems(c.get('d1'), c.req.valid('param').id, c.get('userId'), c.req.valid('json').items, isoTimestamp()),
    'Playlist reordered successfully.',
  );

export const membership: RouteHandler<typeof routes.membership, AppEnv> = async (c) =>
  ok(c, await playlists.membership(c.get('d1'), c.req.valid('param').id, c.get('userId')), 'Playlist membership retrieved successfully.');
