import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/*
 * The crowd rule's tables (src/durable-objects/crowd.ts, docs/security.md#crowd-signals), held by every
 * object that counts a crowd signal (PlayCounter, SearchTrends). Each of those objects lists
 * this file in its drizzle-kit schema, so its migrations create these tables too.
 */

/** Who counted for which subject in which hour (the window of lib/crowd.ts). */
export const crowdUsers = sqliteTable(
  'crowd_users',
  {
    hour: integer('hour').notNull(),
    subject: text('subject').notNull(),
    user: text('user').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.subject, t.user] })],
);

/** How often each network counted for a subject in an hour. */
export const crowdNetworks = sqliteTable(
  'crowd_networks',
  {
    hour: integer('hour').notNull(),
    subject: text('subject').notNull(),
    network: text('network').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.subject, t.network] })],
);
