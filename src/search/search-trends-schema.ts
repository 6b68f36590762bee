import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** Counted searches of a term in an hour (hours since the epoch). */
export const termBuckets = sqliteTable(
  'buckets',
  {
    hour: integer('hour').notNull(),
    term: text('term').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.term] })],
);
