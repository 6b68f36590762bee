import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { ChannelDelta } from './play-types';

/*
 * The play counter's own SQLite storage (src/activity/play-counter.ts), not D1: each
 * counter object holds these tables for its shard of channels. Migrations:
 * drizzle/objects/play-counter (docs/architecture.md#durable-object-storage).
 */

/**
 * Each user's last counted play of each channel (ms), kept until its hour is over: the 60-second rule, and a listener
 * once per channel and hour in rankings (`first_of_hour`: whether that play was their first counted one of its hour).
 */
export const recentPlays = sqliteTable(
  'recent',
  {
    userId: integer('user_id').notNull(),
    channelId: integer('channel_id').notNull(),
    at: integer('at').notNull(),
    firstOfHour: integer('first_of_hour', { mode: 'boolean' }).notNull().default(true),
  },
  (t) => [primaryKey({ columns: [t.userId, t.channelId] })],
);

/** Ranked plays per channel and hour (hours since the epoch), kept 30 days for trending and charts. */
export const playBuckets = sqliteTable(
  'buckets',
  {
    channelId: integer('channel_id').notNull(),
    hour: integer('hour').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.hour] }), index('buckets_hour').on(t.hour, t.channelId)],
);

/** Counted plays per channel not yet added to D1's `play_count`. */
export const pendingPlays = sqliteTable('pending', {
  channelId: integer('channel_id').primaryKey(),
  count: integer('count').notNull(),
});

/**
 * Per user and channel: counted plays and the last play not yet in D1's `user_plays`
 * (`seq` 0), or in the flush numbered `seq`.
 */
export const playHistory = sqliteTable(
  'history',
  {
    userId: integer('user_id').notNull(),
    channelId: integer('channel_id').notNull(),
    seq: integer('seq').notNull(),
    plays: integer('plays').notNull(),
    lastAt: integer('last_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.channelId, t.seq] }), index('history_seq').on(t.seq)],
);

/** The flush under way: its number and its channels' counts (JSON that the counter writes and reads back). */
export const playOutbox = sqliteTable('outbox', {
  seq: integer('seq').primaryKey(),
  payload: text('payload', { mode: 'json' }).$type<ChannelDelta[]>().notNull(),
});

/** Small numbers the counter keeps: the last flush number, when each shard's visibility was read. */
export const counterMeta = sqliteTable('meta', {
  key: text('key').primaryKey(),
  value: integer('value').notNull(),
});

/** The shard's channels that can be played: their country and their genres as `,3,7,`. */
export const visibleChannels = sqliteTable('visible', {
  channelId: integer('channel_id').primaryKey(),
  countryId: integer('country_id').notNull(),
  genres: text('genres').notNull(),
});
