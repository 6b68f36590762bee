import { z } from '@hono/zod-openapi';
import { RadioSchema } from './catalogue';

const timestamp = z.string().openapi({ example: '2026-01-02T03:04:05.123000Z' });

export const PlaylistSchema = z
  .object({
    id: z.int(),
    name: z.string(),
    description: z.string().nullable(),
    is_public: z.boolean(),
    user_id: z.int(),
    items_count: z.int(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('Playlist');

export const PlaylistDetailSchema = PlaylistSchema.extend({
  items: z.array(z.object({ id: z.int(), position: z.int(), radio_channel: RadioSchema })),
}).openapi('PlaylistDetail');
