import { z } from '@hono/zod-openapi';
import { playlists } from '../db/schema';
import { RadioSchema } from './catalogue';
import { timestamp } from './fields';
import { apiSchema, createSelectSchema } from './from-table';

/** The PlaylistObject: the playlists table's own columns (playlists/playlists.ts reads them with `apiColumns`). */
export const PLAYLIST_FIELDS = [
  'id',
  'name',
  'description',
  'isPublic',
  'userId',
  'itemsCount',
  'createdAt',
  'updatedAt',
] as const;
const playlistRow = createSelectSchema(playlists, { createdAt: timestamp, updatedAt: timestamp });
export const PlaylistSchema = apiSchema(playlistRow, PLAYLIST_FIELDS).openapi('Playlist');

export const PlaylistDetailSchema = PlaylistSchema.extend({
  items: z.array(z.object({ id: z.int(), position: z.int(), radio_channel: RadioSchema })),
}).openapi('PlaylistDetail');
