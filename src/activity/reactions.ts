import { and, eq, exists, sql, type SQL } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { channelIsVisible } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { favorites, likes, radioChannels } from '../db/schema';
import { oneRow } from '../db/sql';

type Marks = typeof likes | typeof favorites;
const qb = new QueryBuilder();

/** The channel counter a mark table moves. */
const counterOf = (table: Marks) => (table === likes ? radioChannels.likesCount : radioChannels.favoritesCount);
const mark = (table: Marks, userId: number, channelId: number) =>
  and(eq(table.userId, userId), eq(table.channelId, channelId));
const hasMark = (table: Marks, userId: number, channelId: number) =>
  exists(
    qb
      .select({ one: sql`1` })
      .from(table)
      .where(mark(table, userId, channelId)),
  );

/** The user's mark and the channel's counter after a change; no row when the channel is not visible. */
const stateQuery = (db: Db, table: Marks, userId: number, channelId: number) =>
  db
    .select({
      active: sql<boolean>`${hasMark(table, userId, channelId)}`.mapWith(Boolean).as('active'),
      total: counterOf(table),
    })
    .from(radioChannels)
    .where(and(eq(radioChannels.id, channelId), channelIsVisible(channelId)));

const readState = (rows: { active: boolean; total: number }[]) => rows[0] ?? null;

/** The row of a new mark, inserted only when `guard` holds. */
const markRow = (userId: number, channelId: number, now: string, guard: SQL) =>
  qb
    .select({
      userId: sql<number>`${userId}`.as('user_id'),
      channelId: sql<number>`${channelId}`.as('channel_id'),
      createdAt: sql<string>`${now}`.as('created_at'),
    })
    .from(oneRow)
    .where(guard);

/** A counter moved by `delta` (SQL), guarded by the channel's visibility. */
const moveCounter = (db: Db, table: Marks, channelId: number, delta: ReturnType<typeof sql>) => {
  const counter = counterOf(table);
  return db
    .update(radioChannels)
    .set({ [counter === radioChannels.likesCount ? 'likesCount' : 'favoritesCount']: sql`${counter} + ${delta}` })
    .where(and(eq(radioChannels.id, channelId), channelIsVisible(channelId)));
};

/**
 * Flips a like or favorite in one batch (one transaction): delete it if there, else
 * insert it (`changes()` tells which), then move the channel's counter by one in the
 * same direction. D1 runs batches one at a time, so the counter always equals the
 * number of rows, also under concurrent toggles. Null when the channel is not visible.
 */
export async function toggle(db: Db, table: Marks, userId: number, channelId: number, now: string) {
  const visible = channelIsVisible(channelId);
  const [, , , state] = await db.batch([
    db.delete(table).where(and(mark(table, userId, channelId), visible)),
    db.insert(table).select(markRow(userId, channelId, now, sql`changes() = 0 AND ${visible}`)),
    moveCounter(db, table, channelId, sql`(CASE WHEN ${hasMark(table, userId, channelId)} THEN 1 ELSE -1 END)`),
    stateQuery(db, table, userId, channelId),
  ]);
  return readState(state);
}

/** Adds a favorite unless it is there; `created` tells which. Null when the channel is not visible. */
export async function addFavorite(db: Db, userId: number, channelId: number, now: string) {
  const [inserted, , state] = await db.batch([
    db
      .insert(favorites)
      .select(markRow(userId, channelId, now, channelIsVisible(channelId)))
      .onConflictDoNothing(),
    moveCounter(db, favorites, channelId, sql`changes()`),
    stateQuery(db, favorites, userId, channelId),
  ]);
  const current = readState(state);
  return current ? { ...current, created: inserted.meta.changes > 0 } : null;
}

/** Removes a favorite if there. Null when the channel is not visible. */
export async function removeFavorite(db: Db, userId: number, channelId: number) {
  const [, , state] = await db.batch([
    db.delete(favorites).where(and(mark(favorites, userId, channelId), channelIsVisible(channelId))),
    moveCounter(db, favorites, channelId, sql`-changes()`),
    stateQuery(db, favorites, userId, channelId),
  ]);
  return readState(state);
}

/** Whether the user favorited the channel; null when the channel is not visible. */
export const favoriteState = (db: Db, userId: number, channelId: number) =>
  stateQuery(db, favorites, userId, channelId);
