import { z } from '@hono/zod-openapi';
import { playlists } from '../db/schema';
import { RadioSchema } from './catalogue';
import { count, id, list, smallInt, text, timestamp } from './fields';
import { apiSchema, createSelectSchema } from './from-table';

/** The PlaylistObject: the playlists table's own columns (playlists/playlists.ts reads them with `apiColumns`). */
export const PLAYLIST_FIELDS = [
  'id',
  'name',
  'description',
  'isPublic',
  'userId',
  'itemsCount',
  'version',
  'createdAt',
  'updatedAt',
] as const;
const playlistRow = createSelectSchema(playlists, {
  id: id(7),
  name: text(100, 'Late-night jazz'),
  description: text(1000, 'Slow and quiet, for after midnight.', { multiline: true }).nullable(),
  userId: id(12),
  itemsCount: smallInt(0, 500, 12),
  version: count(
    8,
    'Raised by one by every change of the playlist or its items; its `ETag` carries it, for `If-Match`.',
  ),
  createdAt: timestamp,
  updatedAt: timestamp,
});
export const PlaylistSchema = apiSchema(playlistRow, PLAYLIST_FIELDS).openapi('Playlist');

/** A channel at its place in a playlist (`id`: the item's own). */
export const PlaylistItemSchema = z
  .object({ id: id(91), position: smallInt(0, 499, 0), radio_channel: RadioSchema })
  .openapi('PlaylistItem');

export const PlaylistDetailSchema = PlaylistSchema.extend({
  items: list(PlaylistItemSchema, 500),
}).openapi('PlaylistDetail');
