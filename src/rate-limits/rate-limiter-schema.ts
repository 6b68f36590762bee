import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** One hit of a reservation in a bucket; kept until `expires` (the longest window that needs it). */
export const hits = sqliteTable(
  'hits',
  {
    bucket: text('bucket').notNull(),
    at: integer('at').notNull(),
    reservation: text('reservation').notNull(),
    expires: integer('expires').notNull(),
  },
  (t) => [index('hits_bucket').on(t.bucket, t.at), index('hits_reservation').on(t.reservation)],
);

/** A mark that lifts a rule until `expires` (an address that logged in to this account). */
export const marks = sqliteTable('marks', {
  name: text('name').primaryKey(),
  expires: integer('expires').notNull(),
});
