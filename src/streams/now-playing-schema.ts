import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * The titles a channel's stream played, in its `NowPlayingObject` (now-playing-object.ts): one
 * row each time the title changed, `seq` in the order they were seen (the `id` of the live
 * events, so a reconnect resumes after the last one it had). Kept 7 days, 1,000 at most.
 */
export const titles = sqliteTable(
  'titles',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    streamTitle: text('stream_title').notNull(),
    artist: text('artist'),
    title: text('title'),
    /** When the title was first seen (ms since the epoch). */
    startedAt: integer('started_at').notNull(),
  },
  (t) => [index('titles_started_at').on(t.startedAt)],
);
