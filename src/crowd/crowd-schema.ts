import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/*
 * The crowd rule's tables (crowd/counting.ts, docs/security.md#crowd-signals), in every object that counts a crowd
 * signal (PlayCounter, SearchTrends): each lists this file in its drizzle-kit schema, so its migrations create them.
 */

/** Who counted for which subject in which hour (the window of crowd/rules.ts). */
export const crowdUsers = sqliteTable(
  'crowd_users',
  {
    hour: integer('hour').notNull(),
    subject: text('subject').notNull(),
    user: text('user').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.subject, t.user] })],
);

/** How often each network counted for a subject in an hour: in all, and from new accounts (crowd/rules.ts). */
export const crowdNetworks = sqliteTable(
  'crowd_networks',
  {
    hour: integer('hour').notNull(),
    subject: text('subject').notNull(),
    network: text('network').notNull(),
    count: integer('count').notNull(),
    newAccounts: integer('new_accounts').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.hour, t.subject, t.network] })],
);
